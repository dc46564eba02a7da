"""Fixtures: a team cache state dir and port of the test's own (never the user's)."""

from __future__ import annotations

import http.client

import pytest

from tools.process.daemon import free_port
from tools.teamcache import server


@pytest.fixture
def state(tmp_path, monkeypatch):
    """ROCM_PYTORCH_TEAMCACHE_DIR and _PORT of this test only; stops its nginx after."""
    monkeypatch.setenv(server.DIR_ENV, str(tmp_path / "teamcache"))
    monkeypatch.setenv(server.PORT_ENV, str(free_port()))
    monkeypatch.delenv(server.NGINX_ENV, raising=False)
    monkeypatch.setattr(server, "PORT_RELEASE_WAIT", 0.3)  # quick "port taken" errors
    p = server.paths()
    yield p
    server.stop(p)


def request(port: int, method: str, path: str, body: bytes | None = None, headers=None):
    """(status, response headers, body) of one request to 127.0.0.1:port."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()
