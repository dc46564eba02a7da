"""Does an engine answer? GET /_ping on a unix socket, over TCP (TLS too), or via the CLI."""

from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path

from tools.engine import binaries


def get_unix(path: str, url: str, timeout: float) -> tuple[int, bytes] | None:
    """GET ``url`` from the Engine API on the unix socket ``path``: (status, body), or None
    when nothing answers there."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            s.sendall(f"GET {url} HTTP/1.0\r\nHost: docker\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    except OSError:
        return None
    head, _, body = data.partition(b"\r\n\r\n")
    try:
        return int(head.split(b"\r\n", 1)[0].split(b" ")[1]), body
    except (IndexError, ValueError):
        return None


def _ping_unix(path: str, timeout: float) -> bool:
    answer = get_unix(path, "/_ping", timeout)
    return answer is not None and answer[0] == 200 and answer[1].strip() == b"OK"


def _ping_tcp(host: str, timeout: float) -> bool:
    import http.client  # here: the unix socket, every image build's case, needs neither
    import ssl

    hostport = re.sub(r"^(tcp|https?)://", "", host).split("/", 1)[0]
    name, _, port = hostport.rpartition(":")
    if not name:
        name, port = hostport, "2375"
    tls = bool(os.environ.get("DOCKER_TLS_VERIFY")) or host.startswith("https://") or port == "2376"
    try:
        if tls:
            certs = Path(os.environ.get("DOCKER_CERT_PATH") or Path.home() / ".docker")
            ctx = ssl.create_default_context(
                cafile=str(certs / "ca.pem") if (certs / "ca.pem").exists() else None
            )
            if (certs / "cert.pem").exists():
                ctx.load_cert_chain(certs / "cert.pem", certs / "key.pem")
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                name, int(port), timeout=timeout, context=ctx
            )
        else:
            conn = http.client.HTTPConnection(name, int(port), timeout=timeout)
        try:
            conn.request("GET", "/_ping")
            r = conn.getresponse()
            return r.status == 200 and r.read().strip() == b"OK"
        finally:
            conn.close()
    except (OSError, ValueError, http.client.HTTPException):
        return False


def answers(host: str, timeout: float = 3.0) -> bool:
    """Whether the engine at ``host`` (a DOCKER_HOST value) answers GET /_ping."""
    if host.startswith("unix://"):
        return _ping_unix(host.removeprefix("unix://"), timeout)
    if host.startswith(("tcp://", "http://", "https://")):
        return _ping_tcp(host, timeout)
    docker = binaries.which("docker")  # ssh:// and the like: ask the CLI
    if not docker:
        return False
    try:
        proc = subprocess.run(
            [docker, "--host", host, "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            timeout=max(timeout, 10.0),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0
