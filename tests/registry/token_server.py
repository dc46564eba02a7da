"""A small token server for docker-registry's `auth: token` (the distribution token spec).

It grants exactly what each request asks, to anyone, and records the scopes
asked (one `scope` parameter each). Tokens are ES256 JWTs whose `x5c` header
holds the self-signed certificate the registry trusts (its rootcertbundle).
"""

from __future__ import annotations

import base64
import datetime
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

SERVICE = "test-registry"
ISSUER = "test-token-issuer"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class TokenServer:
    """HTTP on a free loopback port; ``config`` is the registry's `auth: token:` section."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "token signer")])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(1)
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.bundle = root / "token-signer.pem"
        self.bundle.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        self.x5c = base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()
        self.asked: list[list[str]] = []  # the scopes of each token request, in order
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                query = parse_qs(urlsplit(self.path).query)
                scopes = query.get("scope", [])
                server.asked.append(scopes)
                body = json.dumps({"token": server.token(scopes), "expires_in": 300}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.realm = f"http://127.0.0.1:{self.server.server_address[1]}/token"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def config(self) -> dict[str, str]:
        return {
            "realm": self.realm,
            "service": SERVICE,
            "issuer": ISSUER,
            "rootcertbundle": str(self.bundle),
        }

    def challenge(self, scope: str) -> str:
        return f'Bearer realm="{self.realm}",service="{SERVICE}",scope="{scope}"'

    def token(self, scopes: list[str]) -> str:
        access = []
        for scope in scopes:  # repository:NAME:ACTIONS (NAME may hold a colon: host:port)
            kind, _, rest = scope.partition(":")
            name, _, actions = rest.rpartition(":")
            access.append({"type": kind, "name": name, "actions": actions.split(",")})
        now = int(time.time())
        header = {"typ": "JWT", "alg": "ES256", "x5c": [self.x5c]}
        claims = {
            "iss": ISSUER,
            "sub": "anonymous",
            "aud": SERVICE,
            "exp": now + 300,
            "nbf": now - 10,
            "iat": now,
            "jti": f"t{len(self.asked)}",
            "access": access,
        }
        signing_input = ".".join(
            _b64url(json.dumps(part).encode()) for part in (header, claims)
        ).encode()
        r, s = decode_dss_signature(self.key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return f"{signing_input.decode()}.{_b64url(signature)}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
