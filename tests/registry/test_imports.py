"""Start-up cost: `--help` and `plan` import no HTTP client (httpx, tenacity)."""

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
print(" ".join(m for m in ("httpx", "httpcore", "tenacity") if m in sys.modules), file=sys.stderr)
"""


def test_help_and_plan_import_neither_httpx_nor_tenacity(tmp_path):
    spec = {
        "target": "triton-wheel",
        "arch": None,
        "registry": "r.example/ns",
        "repository": "triton-wheel",
        "tags": {"versioned": "3.9.0", "floating": "latest", "immutable": None},
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
