"""The registry client against real registries: errors that match their cause, no
secret in any output, a missing digest header, `tags`, token auth and chunked uploads.

docker-registry processes on loopback ports, request-recording proxies in
front of them, synthetic images staged the way image builds leave them.
"""

from __future__ import annotations

import base64
import json
import socket

import pytest

from tests.registry.fixtures import Fault, free_port
from tests.registry.staging_images import (
    NAMESPACE,
    PutMeter,
    ResetAt,
    family,
    refs,
    registry_tool,
    write_plan,
)
from tests.registry.token_server import TokenServer


def push(plan, registry: str, *args: str, env: dict):
    return registry_tool("push", "--plan", str(plan), "--registry", registry, *args, env=env)


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "error" in line]


# Errors that fail at once are run under a deadline that only catches a hang (a
# tool that never gives up); "retry" not in the error says it gave up at once.
# How fast the tool is, bench/ measures.
HANG = 120


def at_once(*args: str, env: dict):
    return registry_tool(*args, env=env, timeout=HANG)


# -- 1. a HEAD without Docker-Content-Digest -----------------------------------------------


def test_a_registry_that_omits_the_digest_header_still_guards_immutable_tags(
    tmp_path, env, registries, proxy_for
):
    staging, target = registries("staging"), registries("target")
    first = family(staging.host, tmp_path / "a", vcs_ref="abc1234")
    assert push(write_plan(tmp_path, first), f"{target.host}/{NAMESPACE}", env=env).code == 0
    # another build of the same commit: same tags, other digests
    second = family(staging.host, tmp_path / "b", vcs_ref="abc1234")
    proxy = proxy_for(target, drop_headers=("docker-content-digest",))
    result = push(write_plan(tmp_path, second), f"{proxy.host}/{NAMESPACE}", env=env)
    # should refuse to move the immutable tags, as with the header, and write nothing
    assert result.code == 1, result.err
    assert "immutable tags never move; nothing was pushed" in result.err
    assert target.all_refs() == refs(first, NAMESPACE)
    # `tags` reads the digests from the manifests too
    listed = registry_tool(
        "tags", "rocm-runtime", "--registry", f"{proxy.host}/{NAMESPACE}", "--json", env=env
    )
    assert listed.code == 0, listed.err
    digests = {row["digest"] for row in json.loads(listed.out)["tags"]}
    assert digests == {first[0].descriptor.digest}


@pytest.mark.parametrize("by", ["digest", "tag"])
def test_a_manifest_whose_bytes_do_not_hash_to_its_digest_is_refused(
    tmp_path, env, registries, proxy_for, by
):
    """Fetched by digest, the bytes must hash to it; the digest header must name the bytes."""
    from tools.oci.client import RegistryClient
    from tools.oci.errors import RegistryError

    staging = registries("staging")
    image = family(staging.host, tmp_path / "a")[0]
    d = image.descriptor
    proxy = proxy_for(staging)
    proxy.tamper = lambda method, path, body: (
        body + b" " if method == "GET" and "/manifests/" in path else body
    )
    client = RegistryClient(proxy.host)
    reference = d.digest if by == "digest" else d.staging_tag
    try:
        with pytest.raises(RegistryError) as e:
            client.get_manifest(d.staging_name, reference)
    finally:
        client.close()
    assert f"@{reference}: the manifest it sent hashes to sha256:" in str(e.value)
    assert f"{'asked for' if by == 'digest' else 'its Docker-Content-Digest says'} {d.digest}" in (
        str(e.value)
    )
    # the untampered registry answers, checked
    clean = RegistryClient(staging.host)
    try:
        assert clean.get_manifest(d.staging_name, reference)[2] == d.digest
    finally:
        clean.close()


# -- 2. secrets --------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["push", "plan", "tags"])
def test_credentials_in_a_registry_string_are_refused_and_never_printed(
    tmp_path, env, registries, command
):
    registry = registries("registry")
    images = family(registry.host, tmp_path / "images")
    secret = "s3cretPW"
    where = f"alice:{secret}!@{registry.host}/{NAMESPACE}"
    if command == "tags":
        args = ["tags", "rocm-runtime", "--registry", where]
    else:
        args = [command, "--plan", str(write_plan(tmp_path, images)), "--registry", where]
    result = registry_tool(*args, env=env)
    # should exit 1 with one line saying where credentials go, and never show the password
    assert result.code == 1
    assert secret not in result.out + result.err
    assert error_lines(result.err) == [
        f"registry: error: registry 'alice:***@{registry.host}/{NAMESPACE}': credentials do"
        f" not belong in the registry; run `docker login {registry.host}` (they go in"
        " $DOCKER_CONFIG/config.json)"
    ]


@pytest.mark.parametrize("auth", ["not base64!", base64.b64encode(b"no-colon").decode()])
def test_a_docker_config_auth_that_is_not_user_password_fails_in_one_line(
    tmp_path, registries, auth
):
    registry = registries("registry")
    config = tmp_path / "docker"
    config.mkdir()
    (config / "config.json").write_text(json.dumps({"auths": {registry.host: {"auth": auth}}}))
    result = registry_tool(
        "tags", "x/y", "--registry", registry.host, env={"DOCKER_CONFIG": str(config)}
    )
    assert result.code == 1
    assert result.err.splitlines() == [
        f"registry: error: {config / 'config.json'}: the auth of {registry.host} is not"
        f' base64 of "user:password"; run `docker login {registry.host}` again'
    ]


# -- 3. errors that match their cause ------------------------------------------------------


def test_a_refused_connection_fails_at_once_naming_the_fix(env):
    port = free_port()  # nothing listens there
    result = at_once("tags", "x/y", "--registry", f"127.0.0.1:{port}", env=env)
    assert result.code == 1
    assert "retry" not in result.err
    assert error_lines(result.err) == [
        f"registry: error: GET http://127.0.0.1:{port}/v2/x/y/tags/list: connection refused"
        f" by 127.0.0.1:{port}; is the registry running? check the host and port"
    ]


def test_a_dead_proxy_is_named_not_the_registry(env):
    registry_port, proxy_port = free_port(), free_port()  # nothing listens on either
    proxied = {**env, "HTTP_PROXY": f"http://127.0.0.1:{proxy_port}", "NO_PROXY": ""}
    result = at_once("tags", "x/y", "--registry", f"127.0.0.1:{registry_port}", env=proxied)
    assert result.code == 1
    (line,) = error_lines(result.err)
    assert f"the proxy http://127.0.0.1:{proxy_port} (HTTP_PROXY) does not answer" in line
    assert "add 127.0.0.1 to NO_PROXY" in line and "is the registry running" not in line
    # NO_PROXY names the registry: the registry's own refusal, as without a proxy
    bypassed = {**proxied, "NO_PROXY": "127.0.0.1"}
    result = at_once("tags", "x/y", "--registry", f"127.0.0.1:{registry_port}", env=bypassed)
    assert "is the registry running?" in error_lines(result.err)[0]


@pytest.mark.parametrize("direction", ["https-to-plain", "plain-to-tls"])
def test_a_tls_mismatch_fails_at_once_naming_the_fix(env, registries, direction):
    if direction == "https-to-plain":
        registry = registries("plain")
        where, want = f"https://{registry.host}", f"use http://{registry.host} or --insecure"
    else:
        registry = registries("tls", tls=True)
        where, want = registry.host, f"use https://{registry.host}"
    result = at_once("tags", "x/y", "--registry", where, env=env)
    assert result.code == 1
    assert "retry" not in result.err
    (line,) = error_lines(result.err)
    assert line.endswith(want), line
    assert "TLS" in line


def test_a_push_to_a_tls_registry_over_plain_http_says_so_as_tags_does(tmp_path, env, registries):
    staging, tls = registries("staging"), registries("tls", tls=True)
    plan = write_plan(tmp_path, family(staging.host, tmp_path / "images"))
    result = at_once("push", "--plan", str(plan), "--registry", tls.host, env=env)
    assert result.code == 1
    assert "retry" not in result.err
    # should name the host and the cause, as `tags` does, not a bare HTTP 400
    (line,) = error_lines(result.err)
    assert f"{tls.host} speaks TLS, not plain HTTP; use https://{tls.host}" in line, line
    assert "HTTP 400" not in line


def test_a_5xx_body_is_shown_trimmed_and_retried(tmp_path, env, registries, proxy_for):
    staging, target = registries("staging"), registries("target")
    images = family(staging.host, tmp_path / "images")
    proxy = proxy_for(target)
    full = {
        "errors": [
            {
                "code": "UNKNOWN",
                "message": "unknown error",
                "detail": "filesystem: write /var/lib/registry/docker/registry/v2/repositories"
                "/x/_manifests/revisions/sha256/data: no space left on device",
            }
        ]
    }
    proxy.faults.append(
        Fault("PUT", r"/manifests/", "500", count=100, body=json.dumps(full).encode())
    )
    result = push(
        write_plan(tmp_path, images[:1]),
        f"{proxy.host}/{NAMESPACE}",
        "--retries",
        "2",
        "--backoff",
        "0.01",
        env=env,
    )
    assert result.code == 1
    # should retry the 500 (a transient for all it knows), then say what the registry said
    assert result.err.count("retry") == 2
    (line,) = [x for x in error_lines(result.err) if "failed" in x]
    assert "HTTP 500 UNKNOWN: unknown error" in line
    assert "no space left on device" in line
    assert "(gave up after 2 retries)" in line


def test_a_registry_that_never_answers_fails_at_the_timeout(env):
    with socket.socket() as silent:  # accepts connections (the backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        host = f"127.0.0.1:{silent.getsockname()[1]}"
        # a deadline far past --timeout 2 (default 600 s): it fails the test only if
        # the tool ignored its --timeout
        result = at_once("tags", "x/y", "--registry", host, "--timeout", "2", env=env)
    assert result.code == 1
    (line,) = error_lines(result.err)
    assert f"no answer from {host} within --timeout 2 s" in line, line
    assert line.endswith("check the registry, or raise --timeout"), line


# -- 4. tags -------------------------------------------------------------------------------


def test_tags_joins_the_namespace_once_and_prints_json(tmp_path, env, registries):
    registry = registries("registry")
    parent, _ = family(registry.host, tmp_path / "images")
    d = parent.descriptor
    want = [[d.staging_tag, d.digest, "-", "-", "unknown"]]
    # the namespace in --registry, the repository with or without it
    for repo in ("staging/rocm-runtime", "rocm-runtime"):
        result = registry_tool("tags", repo, "--registry", f"{registry.host}/staging", env=env)
        assert result.code == 0, result.err
        assert [line.split("\t") for line in result.out.splitlines()] == want
    result = registry_tool("tags", "staging/rocm-runtime", "--registry", registry.host, "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out) == {
        "registry": registry.host,
        "repository": "staging/rocm-runtime",
        "tags": [
            {
                "tag": d.staging_tag,
                "digest": d.digest,
                "target": "-",
                "arch": "-",
                "kind": "unknown",
            }
        ],
        "not_looked_up": 0,
    }


def test_tags_of_a_repository_that_does_not_exist_is_an_error(env, registries):
    registry = registries("registry")
    result = registry_tool("tags", "nope/pytorch", "--registry", registry.host, env=env)
    assert result.code == 1
    (line,) = error_lines(result.err)
    assert line.startswith(f"registry: error: {registry.host}/nope/pytorch: no such repository")
    assert line.endswith("check the repository and --registry [https://]HOST[:PORT][/NAMESPACE]")


# -- 5. token auth and mounts ----------------------------------------------------------------


@pytest.fixture
def token_registry(tmp_path, registries):
    tokens = TokenServer(tmp_path / "tokens")
    registry = registries("token-registry", token=tokens.config)
    yield registry, tokens
    tokens.stop()


def test_token_auth_mounts_asking_both_scopes_up_front(
    tmp_path, env, registries, proxy_for, token_registry
):
    target, tokens = token_registry
    staging = registries("staging")
    images = family(staging.host, tmp_path / "images")
    parent, child = images
    proxy = proxy_for(target)
    meter = PutMeter(proxy)
    result = push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env=env)
    assert result.code == 0, result.err
    # should mount the child's 3 shared layers from the parent's repository: 201, no bytes
    mounts = [r for r in proxy.requests if r[0] == "POST" and "mount=" in r[1]]
    assert [status for *_, status in mounts] == [201, 201, 201]
    shared = set(parent.blobs) & set(child.blobs)
    own = sum(len(b) for dgst, b in child.blobs.items() if dgst not in shared)
    assert meter.bytes == parent.layer_bytes + own
    # should ask for the target's pull,push and the source's pull, as two scope parameters
    base, runtime = (f"{NAMESPACE}/{i.descriptor.repository}" for i in images[::-1])
    assert [f"repository:{base}:pull,push", f"repository:{runtime}:pull"] in tokens.asked
    assert all(len(scope.split()) == 1 for asked in tokens.asked for scope in asked)


def test_a_token_that_must_be_renewed_mid_upload_is_retried(
    tmp_path, env, registries, proxy_for, token_registry
):
    target, tokens = token_registry
    staging = registries("staging")
    images = family(staging.host, tmp_path / "images")
    proxy = proxy_for(target)
    # the first blob PUT (a streamed body) is answered 401 with a fresh challenge, like an
    # expired token: httpx cannot send the body twice, so the upload starts again
    name = f"{NAMESPACE}/rocm-runtime"
    handler = proxy.server.RequestHandlerClass
    forward = handler.do_PUT
    denied = []

    def do_put(h) -> None:
        if "/blobs/uploads/" in h.path and not denied:
            denied.append(h.path)
            h.rfile.read(int(h.headers.get("Content-Length") or 0))
            h.send_response(401)
            h.send_header("WWW-Authenticate", tokens.challenge(f"repository:{name}:pull,push"))
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        forward(h)

    handler.do_PUT = do_put
    result = push(write_plan(tmp_path, images[:1]), f"{proxy.host}/{NAMESPACE}", env=env)
    assert result.code == 0, result.err
    assert len(denied) == 1
    assert "1/1 images pushed" in result.err and ", 1 retries" in result.err


# -- 6. chunked uploads ------------------------------------------------------------------------


def test_a_chunked_upload_resumes_at_the_registry_offset_after_a_reset(
    tmp_path, env, registries, proxy_for
):
    staging, target = registries("staging"), registries("target")
    images = family(staging.host, tmp_path / "images")
    parent = images[0]
    proxy = proxy_for(target)
    chunk = 1 << 20
    big = max(len(b) for b in parent.blobs.values())  # 1.5 MB: two chunks of 1 MiB
    reset = ResetAt(proxy, at=chunk + 1000, methods=("PATCH",))  # in its 2nd chunk
    result = push(
        write_plan(tmp_path, images[:1]), f"{proxy.host}/{NAMESPACE}", "--chunk-size", "1", env=env
    )
    assert result.code == 0, result.err
    assert reset.fired
    assert target.all_refs() == refs(images[:1], NAMESPACE)
    # should PATCH the big blob in 1 MiB chunks, ask the registry where it stands after the
    # reset, and send only the chunk that was lost again
    patches = [r for r in proxy.requests if r[0] == "PATCH"]
    assert len(patches) == 2
    status = [r for r in proxy.requests if r[0] == "GET" and "/blobs/uploads/" in r[1]]
    assert [s for *_, s in status] == [204]
    assert reset.received == big + 1000


def test_a_proxy_from_the_environment_is_used(monkeypatch):
    """HTTP(S)_PROXY still reaches the client (httpx uses the environment's proxies only
    with its own transport: the plain-HTTP one that skips the CA bundle is not used then)."""
    import http.server
    import threading

    from tools.oci.client import RegistryClient

    seen: list[str] = []

    class Proxy(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):
            seen.append(f"HEAD {self.path}")
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = RegistryClient("registry.invalid:5000", insecure=True, retries=0)
    try:
        assert client.manifest_digest("ns/x", "t") is None
    finally:
        client.close()
        server.shutdown()
    assert seen == ["HEAD http://registry.invalid:5000/v2/ns/x/manifests/t"]


def test_a_registry_that_stops_during_the_run_is_named_not_a_raw_errno():
    # The staging registry stopped mid-push (`tools.staging stop`, a reboot, gc) gave
    # "GET ...: [Errno 111] Connection refused (gave up after N retries)" (#42 1.8).
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from tools.oci.client import RegistryClient
    from tools.oci.errors import RegistryError

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{server.server_address[1]}"
    client = RegistryClient(host, retries=2, backoff=0.01)
    try:
        assert client.request("GET", "/v2/").status_code == 200
        server.shutdown()
        server.server_close()
        with pytest.raises(RegistryError) as e:
            client.request("GET", "/v2/x/blobs/sha256:0")
    finally:
        client.close()
    message = str(e.value)
    assert "Errno" not in message, message
    assert message == (
        f"GET http://{host}/v2/x/blobs/sha256:0: {host} answered earlier in this run and now"
        " refuses connections: it stopped or restarted (for the staging registry:"
        " `bazel run //tools/staging -- start`, then run the command again)"
        " (gave up after 2 retries)"
    ), message
