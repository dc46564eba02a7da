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
