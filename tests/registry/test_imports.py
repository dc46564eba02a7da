"""Start-up cost: `--help` and `plan` import no HTTP client (httpx)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import sys
from tools.registry.cli import main
for argv in sys.argv[1:]:
    try:
        main(argv.split())
    except SystemExit:
        pass
print(" ".join(m for m in ("httpx", "httpcore") if m in sys.modules), file=sys.stderr)
"""


def test_help_and_plan_import_no_http_client(tmp_path):
    spec = {
        "target": "triton-wheel",
        "arch": None,
        "registry": "r.example/ns",
        "repository": "triton-wheel",
        "tags": {"versioned": "7.8.9", "floating": "latest", "immutable": None},
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"images": [{"spec": str(tmp_path / "spec.json")}]}))
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "--help", "push --help", f"plan --plan {plan}"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )
    assert "r.example/ns/triton-wheel:latest" in proc.stdout, proc.stderr
    assert proc.stderr.splitlines()[-1:] == [""], proc.stderr


def test_a_plain_http_registry_loads_no_ca_bundle_and_https_stays_verified(monkeypatch):
    import ssl

    import httpx

    from tools.oci.client import RegistryClient

    made = []

    class Recording:
        def __init__(self, verify):
            made.append(verify)

        def close(self):
            pass

    client = RegistryClient("127.0.0.1:5000")
    transport = client.http._transport
    assert transport.by_scheme == {}  # nothing made (no CA bundle read) before a request
    monkeypatch.setattr(httpx, "HTTPTransport", Recording)
    transport._for("http")
    transport._for("http")
    assert len(made) == 1  # one per scheme
    plain = made[0]
    assert isinstance(plain, ssl.SSLContext)
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    assert plain.cert_store_stats()["x509_ca"] == 0  # trusts no certificate
    transport._for("https")  # a redirect to TLS: verified with the default bundle
    assert made[1] is True
    client.close()
