"""Registry auth without a server: docker config lookup and the Bearer token flow."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from tools.oci import auth
from tools.oci.auth import RegistryAuth, credentials_for
from tools.oci.errors import RegistryError


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


# A credential helper that speaks docker's protocol: `get`, the server on
# stdin, JSON on stdout; "credentials not found" (exit 1) for an unknown one.
HELPER = r"""#!/bin/sh
[ "$1" = get ] || { echo "unknown action $1" >&2; exit 2; }
read -r server
echo "$server" >>"${0%/*}/asked"
case "$server" in
  reg.example:5000)
    printf '{"ServerURL":"%s","Username":"AWS","Secret":"s3cret-token"}' "$server" ;;
  broken.example)
    echo "error getting credentials - err: exit status 1, out: keyring locked" >&2; exit 1 ;;
  garbled.example) echo "not json" ;;
  token.example)
    printf '{"ServerURL":"%s","Username":"<token>","Secret":"r3fresh"}' "$server" ;;
  *) echo "credentials not found in native keychain" >&2; exit 1 ;;
esac
"""


@pytest.fixture
def helper(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "docker-credential-fake"
    exe.write_text(HELPER)
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return bin_dir


@pytest.mark.parametrize("key", ["credsStore", "credHelpers"])
def test_a_credential_helper_gives_the_credentials(tmp_path, helper, key):
    value = "fake" if key == "credsStore" else {"reg.example:5000": "fake"}
    # with a helper, the auths entry is docker's placeholder, never the credentials
    config = write_config(tmp_path, {key: value, "auths": {"reg.example:5000": {}}})
    assert credentials_for("reg.example:5000", config) == ("AWS", "s3cret-token")
    assert (helper / "asked").read_text() == "reg.example:5000\n"


def test_a_credential_helper_without_the_server_means_anonymous(tmp_path, helper):
    config = write_config(tmp_path, {"credsStore": "fake"})
    assert credentials_for("other.example", config) is None


def test_credhelpers_of_another_registry_leave_auths_in_use(tmp_path, helper):
    auth = base64.b64encode(b"ci:pw").decode()
    config = write_config(
        tmp_path,
        {"credHelpers": {"reg.example:5000": "fake"}, "auths": {"b.example": {"auth": auth}}},
    )
    assert credentials_for("b.example", config) == ("ci", "pw")
    assert not (helper / "asked").exists()


@pytest.mark.parametrize(
    "server, message",
    [
        ("broken.example", "it failed (exit 1): error getting credentials - err: exit status 1"),
        ("garbled.example", "its answer is not the helper protocol's JSON (Username, Secret)"),
        ("token.example", "it holds an identity token (OAuth refresh token)"),
    ],
)
def test_a_failing_credential_helper_is_named(tmp_path, helper, server, message):
    config = write_config(tmp_path, {"credsStore": "fake"})
    with pytest.raises(RegistryError) as e:
        credentials_for(server, config)
    assert str(e.value).startswith(
        f"{config}: credentials for {server} live in the credential helper 'docker-credential-fake'"
    )
    assert message in str(e.value)


def test_a_missing_credential_helper_is_named_with_the_fix(tmp_path, helper):
    config = write_config(tmp_path, {"credsStore": "desktop"})
    with pytest.raises(RegistryError) as e:
        credentials_for("reg.example", config)
    assert f"'docker-credential-desktop', which is in none of {helper}:/usr/bin:/bin;" in str(
        e.value
    )
    assert "a build finds the helpers on the PATH of the shell that ran bazel" in str(e.value)


def test_a_helper_off_the_actions_path_is_found_through_the_client_settings(
    tmp_path, helper, monkeypatch
):
    # (#42 1.6) Builds run with Bazel's fixed PATH: a helper in ~/.local/bin was "not on
    # PATH" although the user's shell had it. The client settings carry the directories
    # of the client's PATH that hold helpers (images/private/client_settings.bzl).
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    config = write_config(tmp_path, {"credsStore": "fake"})
    with pytest.raises(RegistryError):
        credentials_for("reg.example:5000", config)
    monkeypatch.setenv("ROCM_PYTORCH_HELPER_PATH", str(helper))
    assert credentials_for("reg.example:5000", config) == ("AWS", "s3cret-token")
    assert auth.helper_path() == f"/usr/bin:/bin:{helper}"
    # a directory already on PATH is not searched twice
    monkeypatch.setenv("ROCM_PYTORCH_HELPER_PATH", f"/bin:{helper}")
    assert auth.helper_path() == f"/usr/bin:/bin:{helper}"


def test_the_helper_runs_only_when_the_registry_asks(tmp_path, helper, monkeypatch):
    """Basic challenge: the helper's credentials answer it; no 401, no helper run."""
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization"))
        if request.url.path == "/v2/open/blobs/sha256:x":
            return httpx.Response(200)
        if (
            request.headers.get("Authorization")
            == "Basic " + base64.b64encode(b"AWS:s3cret-token").decode()
        ):
            return httpx.Response(200)
        return httpx.Response(401, headers={"WWW-Authenticate": 'Basic realm="r"'})

    config = write_config(tmp_path, {"credsStore": "fake"})
    auth = RegistryAuth("reg.example:5000", lambda: credentials_for("reg.example:5000", config))
    client = httpx.Client(transport=httpx.MockTransport(handler), auth=auth)
    assert client.head("https://reg.example:5000/v2/open/blobs/sha256:x").status_code == 200
    assert not (helper / "asked").exists()  # nobody asked for credentials yet
    assert client.head("https://reg.example:5000/v2/ns/a/blobs/sha256:x").status_code == 200
    assert (helper / "asked").read_text() == "reg.example:5000\n"
    assert seen[-1].startswith("Basic ")


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
    from tools.oci.client import RegistryClient

    (tmp_path / "config.json").write_text(json.dumps({"credsStore": "desktop"}))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no docker-credential-desktop
    client = RegistryClient("127.0.0.1:9")  # anonymous registries still work
    assert client.credentials_note == ""  # nobody asked yet
    assert client.http.auth.creds is None  # the registry asks: the helper is missing
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
    from tools.oci.errors import RegistryError, redact

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

    from tools.oci.client import RegistryClient
    from tools.oci.errors import Unreachable

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
