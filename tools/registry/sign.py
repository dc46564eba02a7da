"""Signatures of published digests: cosign signs, this module checks.

Signing runs Debian's cosign 3 (`tools/install_cosign.sh`; bootstrap installs
it) with a key: a cosign key file, its PEM in ``$COSIGN_KEY``, or a KMS URI
(`awskms://`, `gcpkms://`, `azurekms://`, `hashivault://`, `k8s://`), its
password in ``$COSIGN_PASSWORD``. No transparency log and no Fulcio: an
empty signing config keeps cosign offline. cosign attaches a sigstore bundle
(a DSSE envelope over an in-toto statement naming the digest) as an OCI 1.1
referrer of the digest, or under the `sha256-<hex>` tag where the registry
has no referrers API.

Checking needs no cosign: a bundle is read from the registry and its
ECDSA/Ed25519/RSA signature checked here against the public key (the same
check as `cosign verify --key K --insecure-ignore-tlog`), which makes a no-op
publish cheap (no process per digest) and `registry verify` fast.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tools.oci.errors import RegistryError
from tools.oci.reference import Reference
from tools.places import user_path
from tools.registry.provenance import IN_TOTO, STATEMENT

BUNDLE = "application/vnd.dev.sigstore.bundle.v0.3+json"
COSIGN_DIR = "/var/lib/rocm-pytorch-images/bin"  # tools/install_cosign.sh's default
# cosign with neither a transparency log nor a CA: signing with a key, offline
EMPTY_SIGNING_CONFIG = {
    "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
    "rekorTlogConfig": {},
    "tsaConfig": {},
}
KMS_SCHEMES = ("awskms://", "gcpkms://", "azurekms://", "hashivault://", "k8s://", "pkcs11:")


class SignError(RegistryError):
    """No key, no cosign, a key that does not open, a signature that does not hold."""


def find_cosign() -> str:
    """The cosign binary: $ROCM_PYTORCH_COSIGN, else PATH, else where bootstrap puts it."""
    explicit = os.environ.get("ROCM_PYTORCH_COSIGN")
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise SignError(f"ROCM_PYTORCH_COSIGN={explicit}: not an executable")
        return explicit
    found = shutil.which("cosign")
    if found:
        return found
    places = (Path(os.environ.get("ROCM_PYTORCH_COSIGN_DIR") or COSIGN_DIR), Path("/usr/bin"))
    for place in places:
        if os.access(place / "cosign", os.X_OK):
            return str(place / "cosign")
    raise SignError(
        f"cosign not found (PATH, {places[0]}, /usr/bin); run tools/bootstrap.sh as root"
        " (or with sudo; or tools/install_cosign.sh), or set ROCM_PYTORCH_COSIGN"
    )


def key_argument(key: str | None) -> str:
    """What `cosign --key` gets for ``key`` (a path, a KMS URI) or, without one, $COSIGN_KEY."""
    if key:
        if key.startswith(KMS_SCHEMES) or key.startswith("env://"):
            return key
        if not user_path(key).is_file():
            raise SignError(f"--key {key}: no such file")
        return str(user_path(key).absolute())
    value = os.environ.get("COSIGN_KEY", "")
    if not value:
        raise SignError(
            "signing needs a key: --key FILE|KMS-URI or $COSIGN_KEY (the key's PEM, a path or a"
            " KMS URI), its password in $COSIGN_PASSWORD; make one with `cosign generate-key-pair`"
        )
    if value.lstrip().startswith("-----BEGIN"):
        return "env://COSIGN_KEY"
    return key_argument(value)


def key_hint(public_pem: bytes) -> str:
    """The bundle's `publicKey.hint` for a key: base64 of the sha256 of its DER."""
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_public_key(public_pem)
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what the signature is over."""
    t = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


@dataclass
class PublicKey:
    pem: bytes

    @property
    def hint(self) -> str:
        return key_hint(self.pem)

    def verify(self, signature: bytes, data: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

        key = serialization.load_pem_public_key(self.pem)
        try:
            if isinstance(key, ec.EllipticCurvePublicKey):
                key.verify(signature, data, ec.ECDSA(hashes.SHA256()))
            elif isinstance(key, ed25519.Ed25519PublicKey):
                key.verify(signature, data)
            elif isinstance(key, rsa.RSAPublicKey):
                key.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
            else:
                return False
        except InvalidSignature:
            return False
        return True

    def check_bundle(self, bundle: dict, digest: str) -> str:
        """Why ``bundle`` is not a signature of ``digest`` by this key ('' when it is)."""
        if bundle.get("mediaType") != BUNDLE:
            return f"not a sigstore bundle ({bundle.get('mediaType')})"
        hint = ((bundle.get("verificationMaterial") or {}).get("publicKey") or {}).get("hint")
        if hint and hint != self.hint:
            return "signed with another key"
        envelope = bundle.get("dsseEnvelope")
        if not envelope:
            return "no DSSE envelope (only cosign's DSSE bundles are checked)"
        try:
            payload = base64.b64decode(envelope["payload"])
            statement = json.loads(payload)
            sigs = [base64.b64decode(s["sig"]) for s in envelope["signatures"]]
        except (KeyError, ValueError, TypeError):
            return "a malformed DSSE envelope"
        if envelope.get("payloadType") != IN_TOTO or statement.get("_type") != STATEMENT:
            return "not an in-toto statement"
        if not any(self.verify(sig, pae(envelope["payloadType"], payload)) for sig in sigs):
            return "the signature does not verify with this key"
        algorithm, _, hex_ = digest.partition(":")
        subjects = [s.get("digest", {}).get(algorithm) for s in statement.get("subject") or []]
        if hex_ not in subjects:
            return f"signs {', '.join(str(s) for s in subjects)}, not {digest}"
        return ""


def load_public_key(key: str | None, cosign: str | None = None) -> PublicKey:
    """A public key from a PEM file, or from a private key / KMS URI through cosign."""
    if key and user_path(key).is_file():
        text = user_path(key).read_bytes()
        if b"PUBLIC KEY-----" in text:
            return PublicKey(text)
    return PublicKey(private_key_opens(key, cosign))


KEY_CHECK_TIMEOUT = 120.0  # a KMS key is a round trip to the cloud's service


def private_key_opens(key: str | None, cosign: str | None = None) -> bytes:
    """The public half of the signing key ``key`` (else $COSIGN_KEY) as cosign opens it
    (`cosign public-key`: a key file with $COSIGN_PASSWORD, the PEM in $COSIGN_KEY, a KMS
    URI): what signing needs. ``SignError`` in one line when it does not open."""
    arg = key_argument(key)
    cosign = cosign or find_cosign()
    try:
        proc = subprocess.run(
            [cosign, "public-key", "--key", arg],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            check=False,
            timeout=KEY_CHECK_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise SignError(
            f"cosign public-key --key {arg}: no answer in {KEY_CHECK_TIMEOUT:.0f} s (a KMS that"
            " does not answer?)"
        ) from None
    if proc.returncode != 0 or b"PUBLIC KEY-----" not in proc.stdout:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise SignError(
            f"cosign public-key --key {arg}: {detail[0]} (is $COSIGN_PASSWORD the key's password?)"
        )
    return proc.stdout


class Signer:
    """Signs digests with cosign and one key."""

    def __init__(
        self,
        key: str | None,
        *,
        insecure: bool = False,
        ca_file: Path | None = None,
        log=lambda _msg: None,
    ) -> None:
        self.cosign = find_cosign()
        self.key = key_argument(key)
        self.public = load_public_key(key, self.cosign)
        self.insecure = insecure
        self.ca_file = ca_file
        self.log = log
        self._dir = tempfile.TemporaryDirectory(prefix="registry-sign-")
        self.signing_config = Path(self._dir.name) / "signing-config.json"
        self.signing_config.write_text(json.dumps(EMPTY_SIGNING_CONFIG))

    def close(self) -> None:
        self._dir.cleanup()

    def sign(self, host: str, name: str, digest: str) -> None:
        """Sign ``host/name@digest``: cosign attaches the bundle."""
        ref = str(Reference(host, name, digest=digest).without_scheme())
        cmd = [
            self.cosign,
            "sign",
            "--yes",
            "--key",
            self.key,
            "--signing-config",
            str(self.signing_config),
        ]
        if self.insecure or host.startswith("http://"):
            cmd += ["--allow-insecure-registry", "--allow-http-registry"]
        if self.ca_file:
            cmd += ["--registry-cacert", str(self.ca_file)]
        env = {**os.environ, "TUF_ROOT": os.path.join(self._dir.name, "tuf")}
        proc = subprocess.run(
            [*cmd, ref], capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env
        )
        if proc.returncode != 0:
            lines = [
                line
                for line in proc.stderr.strip().splitlines()
                if line and not line.startswith("WARNING")
            ]
            raise SignError(f"cosign sign {ref}: {lines[-1] if lines else 'failed'}")
        self.log(f"  signed {ref}")
