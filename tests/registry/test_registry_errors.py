"""A registry's error body kept structured (code, message, detail) and matched on codes."""

from __future__ import annotations

import json
from types import SimpleNamespace

import httpx
import pytest

from tools.oci.client import RegistryClient
from tools.oci.errors import BadStatus, ErrorEntry, parse_errors
from tools.registry import push
from tools.registry.push import Pusher, PushOptions


def body(*errors: dict) -> bytes:
    return json.dumps({"errors": list(errors)}).encode()


def test_parse_errors_keeps_code_message_and_detail():
    entries = parse_errors(
        body(
            {"code": "MANIFEST_BLOB_UNKNOWN", "message": "blob unknown", "detail": {"d": 1}},
            {"code": "NAME_UNKNOWN"},
        )
    )
    assert entries == (
        ErrorEntry("MANIFEST_BLOB_UNKNOWN", "blob unknown", {"d": 1}),
        ErrorEntry("NAME_UNKNOWN", "", None),
    )
    assert entries[0].line() == 'MANIFEST_BLOB_UNKNOWN: blob unknown ({"d": 1})'


@pytest.mark.parametrize("text", [b"", b"<html>bad gateway</html>", b"{}", b'{"errors": 1}'])
def test_a_body_that_is_no_error_body_gives_none(text):
    assert parse_errors(text) == ()


def test_check_raises_bad_status_with_the_codes_and_the_same_message():
    client = RegistryClient("127.0.0.1:1")
    try:
        answer = httpx.Response(
            400,
            content=body({"code": "DIGEST_INVALID", "message": "provided digest did not match"}),
        )
        with pytest.raises(BadStatus) as e:
            client.check(answer, "PUT ns/x:t", (201,))
    finally:
        client.close()
    assert e.value.codes == ("DIGEST_INVALID",)
    assert str(e.value) == "PUT ns/x:t: HTTP 400 DIGEST_INVALID: provided digest did not match"


class FakeClient:
    """put_manifest refuses with ``errors`` first, then takes it."""

    def __init__(self, errors: tuple[ErrorEntry, ...]) -> None:
        self.errors = errors
        self.puts = 0

    def put_manifest(self, *_args) -> None:
        self.puts += 1
        if self.puts == 1:
            lines = "; ".join(e.line() for e in self.errors)
            raise BadStatus(f"PUT: HTTP 400 {lines}", 400, self.errors)

    def blob_exists(self, *_args) -> bool:
        return True


def put(errors: tuple[ErrorEntry, ...]) -> tuple[FakeClient, list[str]]:
    logged: list[str] = []
    pusher = Pusher(PushOptions(backoff=0), log=logged.append)
    fake = FakeClient(errors)
    pusher.client = lambda _host: fake
    image = SimpleNamespace(host="h", name="ns/x")
    d = SimpleNamespace(manifest=b"{}", media_type="m", blobs=[])
    pusher.put_manifest(image, d, "t")
    return fake, logged


@pytest.mark.parametrize("code", push.BLOB_RACE)
def test_a_blob_race_code_retries_the_manifest_put(code):
    fake, logged = put((ErrorEntry(code, "another push"),))
    assert fake.puts == 2
    assert logged == [f"  PUT ns/x:t: {code}; checking the blobs"]


def test_a_code_named_only_in_the_message_is_no_blob_race():
    # the old substring match took this for MANIFEST_BLOB_UNKNOWN
    with pytest.raises(BadStatus):
        put((ErrorEntry("MANIFEST_INVALID", "MANIFEST_BLOB_UNKNOWN was expected"),))
