"""`registry tags` on a repository with 200,000 tags: bounded requests and time, progress
on stderr, a note of what was not looked up.

It sent one HEAD per tag, one at a time, after 2,000 pages of 100 tags: 10+ minutes
without a word. A fake registry on 127.0.0.1 serves the tag names cheaply (paginated by
`n` and `last` as the distribution spec says, with a `Link` to the next page), counts
the requests and the HEADs in flight, and refuses HEADs past a budget, so a tool that
asks for every digest fails in seconds instead of running for minutes.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from tests.registry.staging_images import registry_tool

NAME = "rocm-pytorch/pytorch"
# Tags read with the tests' own catalogue (its pytorch and pytorch-test share a repository)
CATALOG = "tests/fixtures/catalog.toml"
FAMILY = ["4.5.6-9.8.7-full-gfx950", "latest-gfx950", "latest-gfx950-test"]
MANY = 200_000
MAX_PAGE = 1000  # the most tags a page holds, whatever `n` asks (as registries cap it)
HEAD_BUDGET = 5_000  # past it the fake answers 400: no tool should need that many


def digest(tag: str) -> str:
    return "sha256:" + hashlib.sha256(tag.encode()).hexdigest()


class FakeRegistry(ThreadingHTTPServer):
    """Tags of NAME, listed and HEADed; nothing else."""

    daemon_threads = True

    def __init__(self, tags: list[str], head_delay: float = 0.0, page_delay: float = 0.0):
        super().__init__(("127.0.0.1", 0), Handler)
        self.tags = sorted(tags)
        self.head_delay = head_delay
        self.page_delay = page_delay
        self.counts: Counter[str] = Counter()
        self.in_flight = 0
        self.peak = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeRegistry

    def log_message(self, *_args) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        s = self.server
        if url.path == "/v2/":
            return self._send(200, b"{}")
        if url.path != f"/v2/{NAME}/tags/list":
            return self._send(404, b'{"errors":[{"code":"NAME_UNKNOWN"}]}')
        with s.lock:
            s.counts["list"] += 1
        time.sleep(s.page_delay)
        query = parse_qs(url.query)
        n = min(int(query.get("n", [MAX_PAGE])[0]), MAX_PAGE)
        last = query.get("last", [""])[0]
        start = bisect.bisect_right(s.tags, last) if last else 0
        page = s.tags[start : start + n]
        headers = {"Content-Type": "application/json"}
        if start + n < len(s.tags):
            after = f"/v2/{NAME}/tags/list?n={n}&last={quote(page[-1])}"
            headers["Link"] = f'<{after}>; rel="next"'
        self._send(200, json.dumps({"name": NAME, "tags": page}).encode(), headers)

    def do_HEAD(self) -> None:
        s = self.server
        prefix = f"/v2/{NAME}/manifests/"
        if not self.path.startswith(prefix):
            return self._send(404)
        with s.lock:
            s.counts["head"] += 1
            s.in_flight += 1
            s.peak = max(s.peak, s.in_flight)
            over = s.counts["head"] > HEAD_BUDGET
        try:
            if over:
                return self._send(400, b'{"errors":[{"code":"DENIED","message":"HEAD budget"}]}')
            time.sleep(s.head_delay)
            tag = self.path[len(prefix) :]
            self._send(200, b"", {"Docker-Content-Digest": digest(tag)})
        finally:
            with s.lock:
                s.in_flight -= 1


@pytest.fixture
def fake():
    started = []

    def start(tags: list[str], **kwargs) -> FakeRegistry:
        started.append(FakeRegistry(tags, **kwargs))
        return started[-1]

    yield start
    for s in started:
        s.stop()


def many_tags() -> list[str]:
    return [f"ci-{i:06d}" for i in range(MANY)] + FAMILY


def test_tags_of_200000_is_bounded_in_requests_and_time_with_progress_and_a_note(fake):
    registry = fake(many_tags(), head_delay=0.002, page_delay=0.01)
    start = time.monotonic()
    result = registry_tool(
        "tags", NAME, "--registry", registry.host, "--catalog", CATALOG, timeout=300
    )
    took = time.monotonic() - start
    assert result.code == 0, (result.err[-2000:], dict(registry.counts))
    rows = [line.split("\t") for line in result.out.splitlines()]
    assert len(rows) == MANY + len(FAMILY)
    # the first 1000 tags in tag order have their digest, the rest "-" (not looked up)
    assert [r[1] for r in rows[:1000]] == [digest(r[0]) for r in rows[:1000]]
    assert {r[1] for r in rows[1000:]} == {"-"}
    # target, arch and kind for every tag, looked up or not
    by_tag = {r[0]: r for r in rows}
    assert by_tag["4.5.6-9.8.7-full-gfx950"][2:] == ["pytorch", "gfx950", "versioned"]
    assert by_tag["latest-gfx950-test"][2:] == ["pytorch-test", "gfx950", "floating"]
    assert by_tag["ci-199999"][2:] == ["-", "-", "unknown"]
    # bounded: pages of 1000, one HEAD per digest looked up, 8 at once
    assert registry.counts["list"] == (MANY + len(FAMILY)) // MAX_PAGE + 1
    assert registry.counts["head"] == 1000
    assert 2 <= registry.peak <= 8
    # what was not looked up, said on stderr
    assert (
        f"tags: note: {registry.host}/{NAME} has 200003 tags; looked up the digests of the"
        " first 1000 in tag order (up to ci-000998); the other 199003 are listed with digest"
        " - (not looked up); --limit 0 looks up every one (a HEAD each, --jobs at once)"
    ) in result.err.splitlines()
    # progress while listing (201 pages of 10 ms and more take over a second), at most
    # a line a second
    listed = [line for line in result.err.splitlines() if line.startswith("tags: listed ")]
    assert listed and len(listed) <= took + 1
    assert listed[-1].endswith(f" tags of {registry.host}/{NAME} so far")
    assert took < 90, took
    print(f"200,003 tags: {took:.1f} s, {sum(registry.counts.values())} requests")


def test_tags_limit_0_looks_up_every_digest_in_parallel_and_json_says_none_left(fake):
    tags = [f"ci-{i:04d}" for i in range(2500)]
    registry = fake(tags, head_delay=0.002)
    result = registry_tool(
        "tags",
        NAME,
        "--registry",
        registry.host,
        "--catalog",
        CATALOG,
        "--limit",
        "0",
        "--jobs",
        "4",
        "--json",
    )
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["not_looked_up"] == 0
    assert [t["digest"] for t in document["tags"]] == [digest(t) for t in tags]
    assert registry.counts["head"] == 2500
    assert 2 <= registry.peak <= 4
    assert "tags: note:" not in result.err
    # progress while looking up: 2500 HEADs of 2 ms, 4 at once, take more than a second
    assert any(
        line.startswith("tags: looked up ") and line.endswith("/2500 digests")
        for line in result.err.splitlines()
    )


def test_tags_json_marks_the_digests_not_looked_up(fake):
    tags = [f"ci-{i:04d}" for i in range(1500)]
    registry = fake(tags)
    result = registry_tool(
        "tags", NAME, "--registry", registry.host, "--catalog", CATALOG, "--json", "--limit", "10"
    )
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert document["not_looked_up"] == 1490
    assert [t["digest"] for t in document["tags"][:10]] == [digest(t) for t in tags[:10]]
    assert {t["digest"] for t in document["tags"][10:]} == {None}
    assert registry.counts["head"] == 10 and registry.counts["list"] == 2


@pytest.mark.parametrize(("flag", "value"), [("--limit", "-1"), ("--jobs", "0"), ("--jobs", "x")])
def test_tags_bad_limit_or_jobs_is_one_line(flag, value):
    result = registry_tool("tags", NAME, "--registry", "127.0.0.1:1", flag, value)
    assert result.code == 2
    (line,) = [x for x in result.err.splitlines() if "error" in x]
    assert f"{flag}: '{value}' is not a whole number" in line
