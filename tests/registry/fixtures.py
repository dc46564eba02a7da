"""Test fixtures: a real distribution registry per test, and a fault-injecting proxy.

The registry is Debian's `docker-registry` (distribution 2.8) started on a
free loopback port with its own storage, optionally with htpasswd auth or
TLS. The proxy sits between the push tool and a registry and injects 5xx
bursts, 429s, connection resets in the middle of a blob upload, slow
requests and answers, and hangs (no answer ever, an answer trickled a byte at
a time, an upload whose body is read at a crawl or not at all); it also
records every request so tests can count them.
"""

from __future__ import annotations

import base64
import datetime
import http.client
import json
import os
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tools.process.daemon import free_port

REGISTRY_BIN = os.environ.get("REGISTRY_BIN", "/usr/bin/docker-registry")


class Registry:
    """A docker-registry process on 127.0.0.1; stop() ends it."""

    def __init__(
        self,
        root: Path,
        *,
        users: dict[str, str] | None = None,
        tls: bool = False,
        token: dict[str, str] | None = None,
    ):
        self.root = root
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.ca_file: Path | None = None
        root.mkdir(parents=True, exist_ok=True)
        lines = [
            "version: 0.1",
            "log: {level: warn}",
            "storage:",
            f"  filesystem: {{rootdirectory: {root / 'data'}}}",
            "  delete: {enabled: true}",
            "http:",
            f"  addr: {self.host}",
        ]
        if tls:
            self.ca_file, cert, key = make_tls(root)
            lines += ["  tls:", f"    certificate: {cert}", f"    key: {key}"]
        if users:
            htpasswd = root / "htpasswd"
            htpasswd.write_text("".join(f"{u}:{bcrypt_hash(p)}\n" for u, p in users.items()))
            lines += ["auth:", "  htpasswd:", "    realm: test", f"    path: {htpasswd}"]
        if token:  # realm, service, issuer, rootcertbundle: a token server's
            lines += ["auth:", "  token:", *(f"    {k}: {v}" for k, v in token.items())]
        config = root / "config.yml"
        config.write_text("\n".join(lines) + "\n")
        self.log = (root / "registry.log").open("w")
        self.proc = subprocess.Popen(
            [REGISTRY_BIN, "serve", str(config)], stdout=self.log, stderr=subprocess.STDOUT
        )
        self._wait()

    def _wait(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"registry exited: {(self.root / 'registry.log').read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("registry did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()

    # -- reading it back (plain HTTP, no auth) --------------------------------

    def get(self, path: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        body = r.read()
        conn.close()
        return r.status, dict(r.getheaders()), body

    def all_refs(self) -> dict[str, str]:
        """Every repository:tag in the registry, with its manifest digest."""
        _, _, body = self.get("/v2/_catalog?n=1000")
        out = {}
        accept = {
            "Accept": "application/vnd.oci.image.manifest.v1+json,"
            "application/vnd.oci.image.index.v1+json"
        }
        for repo in json.loads(body)["repositories"]:
            _, _, tags = self.get(f"/v2/{repo}/tags/list")
            for tag in json.loads(tags).get("tags") or []:
                _, headers, _ = self.get(f"/v2/{repo}/manifests/{tag}", accept)
                out[f"{repo}:{tag}"] = headers.get("Docker-Content-Digest", "")
        return out


def bcrypt_hash(password: str) -> str:
    import bcrypt

    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()


def make_tls(root: Path) -> tuple[Path, Path, Path]:
    """A self-signed CA and a 127.0.0.1 server certificate it signs."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(2)
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    paths = root / "ca.pem", root / "cert.pem", root / "key.pem"
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(cert.public_bytes(pem))
    paths[2].write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


def docker_config(root: Path, host: str, user: str, password: str) -> Path:
    """A DOCKER_CONFIG directory whose config.json logs in to ``host``."""
    root.mkdir(parents=True, exist_ok=True)
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    (root / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))
    return root


@dataclass
class Fault:
    """Inject ``kind`` on the next ``count`` requests matching method and path."""

    method: str  # "*": any
    path: str  # regex searched in the request path
    # an HTTP status ("503", "429", "500", ...) | "reset" | "slow" (``delay`` before the
    # request goes on) | "late" (forwarded at once, answered ``delay`` later) | "hang" (the
    # request read, never answered) | "trickle" (the answer's first line sent a byte every
    # ``delay`` seconds, never finished) | "stall" (the body read at ``rate`` bytes a
    # second, 0: not at all; never answered)
    kind: str
    count: int = 1
    delay: float = 0.0
    hits: int = 0  # counted as each request arrives
    body: bytes = b""  # of a status answer
    rate: int = 0

    def matches(self, method: str, path: str) -> bool:
        return self.method in ("*", method) and re.search(self.path, path) is not None


@dataclass
class FaultProxy:
    """A loopback HTTP proxy in front of ``upstream`` (host:port)."""

    upstream: str
    faults: list[Fault] = field(default_factory=list)
    requests: list[tuple[str, str, int]] = field(default_factory=list)
    drop_headers: tuple[str, ...] = ()  # lower-case names left out of every answer
    # (method, path, body) -> the body the client gets instead: a damaged copy or a liar
    tamper: Callable[[str, str, bytes], bytes] | None = None

    def __post_init__(self) -> None:
        proxy = self
        self.stopping = threading.Event()  # set by stop(): hung requests end

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                fault = next(
                    (
                        f
                        for f in proxy.faults
                        if f.hits < f.count and f.matches(self.command, self.path)
                    ),
                    None,
                )
                if fault:
                    fault.hits += 1
                    if fault.kind == "reset":
                        # take part of the body, then drop the connection
                        self.rfile.read(min(length, 1024))
                        proxy.requests.append((self.command, self.path, 0))
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return
                    if fault.kind.isdigit():
                        self.rfile.read(length)
                        proxy.requests.append((self.command, self.path, int(fault.kind)))
                        self.send_response(int(fault.kind))
                        if fault.kind == "429":
                            self.send_header("Retry-After", "0")
                        if fault.body:
                            self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(fault.body)))
                        self.end_headers()
                        self.wfile.write(fault.body)
                        return
                    if fault.kind == "slow":
                        time.sleep(fault.delay)
                    if fault.kind == "hang":
                        self.rfile.read(length)
                        proxy.stopping.wait()
                        self.close_connection = True
                        return
                    if fault.kind == "trickle":
                        self.rfile.read(length)
                        for byte in b"HTTP/1.1 200 OK\r\nX-Trickle: " + b"." * 100_000:
                            if proxy.stopping.wait(fault.delay):
                                break
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                        self.close_connection = True
                        return
                    if fault.kind == "stall":
                        left = length
                        while left and fault.rate and not proxy.stopping.is_set():
                            left -= len(self.rfile.read(min(fault.rate, left)))
                            proxy.stopping.wait(1)
                        proxy.stopping.wait()
                        self.close_connection = True
                        return
                body = self.rfile.read(length) if length else None
                host, port = proxy.upstream.split(":")
                conn = http.client.HTTPConnection(host, int(port), timeout=60)
                headers = {k: v for k, v in self.headers.items()}
                conn.request(self.command, self.path, body=body, headers=headers)
                r = conn.getresponse()
                data = r.read()
                if proxy.tamper is not None:
                    data = proxy.tamper(self.command, self.path, data)
                proxy.requests.append((self.command, self.path, r.status))
                if fault and fault.kind == "late":
                    time.sleep(fault.delay)
                self.send_response(r.status)
                for k, v in r.getheaders():
                    skip = (
                        "transfer-encoding",
                        "connection",
                        "content-length",
                        *proxy.drop_headers,
                    )
                    if k.lower() not in skip:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _handle

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:
                # clients dropping idle keep-alive connections are not errors
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def writes(self, sessions: bool = True) -> list[tuple[str, str, int]]:
        """Requests that would change the registry (uploads, manifests, tags); without
        ``sessions``, not the upload sessions opened and cancelled (POST, DELETE of
        /blobs/uploads/: the registry check of a dry run), which leave nothing."""
        out = [r for r in self.requests if r[0] in ("POST", "PUT", "PATCH", "DELETE")]
        if sessions:
            return out
        return [r for r in out if not (r[0] in ("POST", "DELETE") and "/blobs/uploads/" in r[1])]

    def stop(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
