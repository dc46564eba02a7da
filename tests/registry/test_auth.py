"""Registry auth without a server: docker config lookup and the Bearer token flow."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from tools.registry.auth import RegistryAuth, credentials_for
from tools.registry.errors import RegistryError


def write_config(tmp_path, data) -> object:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return path


def test_credentials_from_auth_field_and_username_password(tmp_path):
    auth = base64.b64encode(b"ci:s3cret").decode()
    config = write_config(
        tmp_path,
        {
            "auths": {
                "https://reg.example:5000": {"auth": auth},
                "other": {"username": "u", "password": "p"},
            }
        },
    )
    assert credentials_for("reg.example:5000", config) == ("ci", "s3cret")
    assert credentials_for("other", config) == ("u", "p")
    assert credentials_for("unknown", config) is None
    assert credentials_for("x", tmp_path / "missing.json") is None


def test_credential_helper_is_named_not_called(tmp_path):
    config = write_config(tmp_path, {"credsStore": "desktop"})
    with pytest.raises(RegistryError, match="docker-credential-desktop"):
        credentials_for("reg.example", config)


def test_bearer_challenge_fetches_a_token_for_the_scope_and_retries():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.host, request.url.path, request.headers.get("Authorization")))
        if request.url.host == "auth.example":
            assert request.url.params["scope"] == "repository:ns/pytorch:pull,push"
            assert request.url.params["service"] == "reg.example"
            assert (
                request.headers["Authorization"]
                == "Basic " + base64.b64encode(b"ci:s3cret").decode()
            )
            return httpx.Response(200, json={"token": "T0KEN"})
        if request.headers.get("Authorization") == "Bearer T0KEN":
            return httpx.Response(200)
        return httpx.Response(
            401,
            headers={
                "WWW-Authenticate": 'Bearer realm="https://auth.example/token",'
                'service="reg.example",scope="repository:ns/pytorch:pull,push"'
            },
        )

    client = httpx.Client(
        transport=httpx.MockTransport(handler), auth=RegistryAuth("reg.example", ("ci", "s3cret"))
    )
    assert client.head("https://reg.example/v2/ns/pytorch/blobs/sha256:x").status_code == 200
    # the token is reused: the second request goes straight through
    assert client.head("https://reg.example/v2/ns/pytorch/blobs/sha256:y").status_code == 200
    assert [s[0] for s in seen] == ["reg.example", "auth.example", "reg.example", "reg.example"]
    assert seen[-1][2] == "Bearer T0KEN"


def test_basic_challenge_without_credentials_leaves_the_401():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, headers={"WWW-Authenticate": 'Basic realm="r"'})

    client = httpx.Client(transport=httpx.MockTransport(handler), auth=RegistryAuth("r", None))
    assert client.get("https://r/v2/").status_code == 401


def test_each_repository_keeps_its_own_token():
    fetched = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "auth.example":
            repo = request.url.params["scope"].split(":")[1]
            fetched.append(repo)
            return httpx.Response(200, json={"token": f"token-{repo}"})
        repo = request.url.path.split("/blobs/")[0].removeprefix("/v2/")
        if request.headers.get("Authorization") == f"Bearer token-{repo}":
            return httpx.Response(200)
        return httpx.Response(
            401,
            headers={
                "WWW-Authenticate": 'Bearer realm="https://auth.example/token",'
                f'service="reg.example",scope="repository:{repo}:pull,push"'
            },
        )

    client = httpx.Client(
        transport=httpx.MockTransport(handler), auth=RegistryAuth("reg.example", None)
    )
    for repo in ["ns/a", "ns/b", "ns/a", "ns/b"]:
        assert client.head(f"https://reg.example/v2/{repo}/blobs/sha256:x").status_code == 200
    # going back to a repository reuses its token: one fetch per repository
    assert fetched == ["ns/a", "ns/b"]


def test_a_credential_helper_only_matters_when_the_registry_asks(tmp_path, monkeypatch):
    from tools.registry.client import RegistryClient

    (tmp_path / "config.json").write_text(json.dumps({"credsStore": "desktop"}))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    client = RegistryClient("127.0.0.1:9")  # anonymous registries still work
    assert "docker-credential-desktop" in client.credentials_note
    with pytest.raises(RegistryError, match=r"401 unauthorized.*docker-credential-desktop"):
        client.check(httpx.Response(401), "HEAD x", (200,))
    client.close()


@pytest.mark.parametrize("auth", ["not base64!", base64.b64encode(b"no-colon").decode()])
def test_an_auth_that_is_not_base64_user_password_names_file_and_registry(tmp_path, auth):
    config = write_config(tmp_path, {"auths": {"reg.example": {"auth": auth}}})
    with pytest.raises(RegistryError) as e:
        credentials_for("reg.example", config)
    assert str(e.value) == (
        f'{config}: the auth of reg.example is not base64 of "user:password";'
        " run `docker login reg.example` again"
    )


def test_redact_hides_userinfo_tokens_and_authorization():
    from tools.registry.errors import RegistryError, redact

    text = (
        "GET https://alice:pw1@reg.example/v2/x?n=1&token=tk2 and"
        " http://bob@r/v2/?access_token=tk3&X-Amz-Signature=sig4;"
        " Authorization: Basic YWxpY2U6cHc= / Bearer eyJhbGciOi.eyJzdWIi.c2ln"
    )
    out = redact(text)
    for secret in ("alice", "pw1", "tk2", "bob", "tk3", "sig4", "YWxpY2U6cHc", "eyJhbGciOi"):
        assert secret not in out, out
    assert "https://***@reg.example/v2/x?n=1&token=***" in out
    # every RegistryError prints redacted, whoever prints it
    assert str(RegistryError(text)) == out


def test_a_name_that_does_not_resolve_fails_at_once(monkeypatch):
    import socket

    from tools.registry.client import RegistryClient
    from tools.registry.errors import Unreachable

    def getaddrinfo(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    client = RegistryClient("registry.invalid:5000", retries=5, backoff=0.01)
    with pytest.raises(Unreachable) as e:
        client.manifest_digest("ns/x", "latest")
    client.close()
    assert client.stats.retries == 0
    assert str(e.value) == (
        "HEAD https://registry.invalid:5000/v2/ns/x/manifests/latest: cannot resolve"
        " registry.invalid (Name or service not known); check the registry host name"
    )
