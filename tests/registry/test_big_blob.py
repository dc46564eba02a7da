"""A big blob copied registry to registry through dropped connections, in chunks.

A 200 MB incompressible layer is streamed from a staging registry into the
target. Staging's GET is cut at 30 % and the target's connection is reset
once the tool has sent 60 % of the blob: the tool must resume both sides
(a ranged GET; the upload session's offset) instead of starting over, in
constant memory.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys

from tests.registry.fixtures import FaultProxy
from tests.registry.staging_images import NAMESPACE, ResetAt, refs, stage, write_plan
from tools.oci.digest import digest_of

SIZE = 200_000_000


def cut_blob_gets(proxy: FaultProxy, digest: str, at: int) -> list[str]:
    """Cut the first whole GET of ``digest`` after ``at`` bytes; returns each GET's Range."""
    ranges: list[str] = []
    handler = proxy.server.RequestHandlerClass
    forward = handler.do_GET

    def do_get(h) -> None:
        if not h.path.endswith(digest):
            return forward(h)
        ranges.append(h.headers.get("Range", ""))
        if len(ranges) > 1 or ranges[0]:
            return forward(h)
        host, port = proxy.upstream.split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        conn.request("GET", h.path)
        r = conn.getresponse()
        length = int(r.headers["Content-Length"])
        h.send_response(r.status)
        h.send_header("Content-Length", str(length))
        h.end_headers()
        h.wfile.write(r.read(at))
        h.wfile.flush()
        conn.close()
        h.connection.shutdown(socket.SHUT_RDWR)
        h.close_connection = True

    handler.do_GET = do_get
    return ranges


# Runs the tool and prints its peak RSS (MB) last: measured from a small parent, since a
# child forked from the test process would start with the test's own memory as its peak.
MEASURE = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, file=sys.stderr)
sys.exit(code)
"""


def run_measured(args: list[str], env: dict) -> tuple[int, str, int]:
    """Run the tool; (exit code, stderr, peak RSS in MB)."""
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, os.environ["REGISTRY_BIN_TOOL"], *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    err, _, rss = proc.stderr.rstrip().rpartition("\n")
    return proc.returncode, err, int(rss)


def test_a_big_blob_resumes_after_resets_on_both_sides(tmp_path, registries, monkeypatch):
    staging, target = registries("staging"), registries("target")
    staging_proxy, target_proxy = FaultProxy(staging.host), FaultProxy(target.host)
    try:
        data = os.urandom(SIZE)
        image = stage(
            staging.host,
            tmp_path,
            "rocm-runtime",
            [(data, digest_of(data))],
            staging=f"{staging_proxy.host}/staging",
        )
        digest = digest_of(data)
        del data
        ranges = cut_blob_gets(staging_proxy, digest, int(SIZE * 0.3))
        reset = ResetAt(target_proxy, at=int(SIZE * 0.6))
        config = tmp_path / "docker-config"
        config.mkdir()
        env = {**os.environ, "DOCKER_CONFIG": str(config)}
        plan = write_plan(tmp_path, [image])
        code, err, rss = run_measured(
            ["push", "--plan", str(plan), "--registry", f"{target_proxy.host}/{NAMESPACE}"], env
        )
    finally:
        staging_proxy.stop()
        target_proxy.stop()
    assert code == 0, err
    assert target.all_refs() == refs([image], NAMESPACE)
    status, _, _ = target.get(f"/v2/{NAMESPACE}/rocm-runtime/blobs/{digest}")
    assert status == 200
    # staging's GET was cut at 30 %: it should go on from where it stopped, not from byte 0
    assert len(ranges) >= 2 and ranges[0] == ""
    assert ranges[1].startswith("bytes=") and int(ranges[1][6:].rstrip("-")) > 0, ranges
    # the target's connection was reset at 60 %: the upload should resume at the session's
    # offset (at most one 64 MiB chunk sent twice), not send the blob again
    assert reset.fired
    assert reset.received < 1.3 * SIZE, reset.received / SIZE
    # in constant memory: a few 1 MiB pieces in flight, never a chunk or the blob
    assert rss < 100, f"{rss} MB"  # measured: 38 MB
