"""Fixtures: a private engine dir per test, a fake Docker API on a unix socket, the CLI.

Nothing here touches an engine the tests did not make: every test gets its own
ROCM_PYTORCH_ENGINE_DIR (short, under /tmp: unix socket paths are limited to
107 bytes) and a host socket path that does not exist, and DOCKER_HOST and
DOCKER_CONFIG are cleared.
"""

from __future__ import annotations

import shutil
import socketserver
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.engine.helpers import isolate, short_dir


@pytest.fixture
def scratch(monkeypatch) -> Iterator[Path]:
    """A short temporary dir; the engine dir is <it>/engine, the host socket absent."""
    root = short_dir("rpe-")
    isolate(monkeypatch, root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


class _Ping(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        request = self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass
        self.server.requests.append(request.decode().strip())  # type: ignore[attr-defined]
        if request.startswith(b"GET /_ping "):
            self.wfile.write(b"HTTP/1.0 200 OK\r\nApi-Version: 1.51\r\n\r\nOK")
        else:
            self.wfile.write(b"HTTP/1.0 404 Not Found\r\n\r\n")


@dataclass
class FakeEngine:
    socket: Path
    requests: list[str]

    @property
    def host(self) -> str:
        return f"unix://{self.socket}"


@pytest.fixture
def fake_engine_at():
    """Start a fake Docker API (GET /_ping -> OK) on the unix socket path given."""
    servers = []

    def start(path: Path) -> FakeEngine:
        path.parent.mkdir(parents=True, exist_ok=True)
        server = socketserver.ThreadingUnixStreamServer(str(path), _Ping)
        server.requests = []  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return FakeEngine(path, server.requests)  # type: ignore[attr-defined]

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
