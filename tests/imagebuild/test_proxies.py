"""The client's HTTP proxies reach the RUNs of a real image build, and nothing else.

BuildKit's predefined proxy build arguments (tools/imagebuild/proxies.py): the RUN
sees HTTPS_PROXY and https_proxy (apt reads only that one) and a no-proxy list with
the loopback addresses; the password of the proxy URL is in no log line, no argument
list and no image; another proxy is the same image (a staging hit: no action key
and no content key holds it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.registry.fixtures import Registry
from tools.imagebuild import build, proxies

DOCKERFILE = "tests/imagebuild/Dockerfile.proxies"  # runfiles path (cwd = runfiles root)
PASSWORD = "pr0xy-Secret-pw"
PROXY = f"http://builder:{PASSWORD}@127.0.0.1:9"  # port 9: nothing; --network none anyway


def digest16(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def test_build_args_name_the_proxies_and_carry_no_value():
    args, env = proxies.build_args({"https_proxy": PROXY, "NO_PROXY": "internal.example"})
    assert PASSWORD not in " ".join(args)
    assert args == [
        "--build-arg", "HTTPS_PROXY", "--build-arg", "NO_PROXY",
        "--build-arg", "https_proxy", "--build-arg", "no_proxy",
    ]  # fmt: skip
    assert env["HTTPS_PROXY"] == env["https_proxy"] == PROXY
    assert env["NO_PROXY"] == env["no_proxy"] == "internal.example,127.0.0.1,localhost,::1"
    assert proxies.build_args({"NO_PROXY": "x"}) == ([], {})  # no proxy: nothing at all


def test_the_buildx_command_names_the_proxies_without_their_values(tmp_path, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", PROXY)
    request = build.BuildRequest.from_argv(
        ["--spec", "s.json", "--dockerfile", "Dockerfile", "--output", "o.json"]
    )
    from tools.imagebuild import builders

    cmd = build.buildx_command(
        request, {"build_args": {}, "labels": {}},
        build.Scratch(tmp_path, tmp_path / "m.json"), build.Inputs({}),
        "127.0.0.1:5000/staging/x:c-1", builders.Builder(builders.LOCAL, "local", "docker"),
    )  # fmt: skip
    assert PASSWORD not in " ".join(cmd)
    assert "HTTPS_PROXY" in cmd and "https_proxy" in cmd


@pytest.fixture
def registry(tmp_path):
    r = Registry(tmp_path / "registry")
    yield r
    r.stop()


def run_build(tmp_path: Path, staging: str, name: str, nonce: str, proxy: str):
    spec = tmp_path / f"{name}.spec.json"
    spec.write_text(
        json.dumps({"target": "proxy-probe", "repository": "proxy-probe",
                    "build_args": {"NONCE": nonce}})
    )  # fmt: skip
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {
        **{k: v for k, v in os.environ.items() if "proxy" not in k.lower()},
        "PYTHONPATH": os.pathsep.join(sys.path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path / "tmp"),
        "ROCM_PYTORCH_STAGING_DIR": str(tmp_path / "staging-state"),
        "HTTPS_PROXY": proxy,
        "no_proxy": "internal.example",
    }
    return subprocess.run(
        [
            sys.executable, "-m", "tools.imagebuild.build",
            "--spec", str(spec), "--dockerfile", DOCKERFILE, "--network", "none",
            "--host-file", "busybox=/usr/bin/busybox", "--staging", staging,
            "--output", str(tmp_path / f"{name}.json"), "--log", str(tmp_path / f"{name}.log"),
        ],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_a_run_sees_the_proxy_and_another_proxy_rebuilds_nothing(tmp_path, registry):
    staging, nonce = f"{registry.host}/staging", uuid.uuid4().hex
    first = run_build(tmp_path, staging, "first", nonce, PROXY)
    assert first.returncode == 0, first.stderr[-3000:]
    log = (tmp_path / "first.log").read_text(errors="replace")
    assert f"https {digest16(PROXY)}" in log, log[-3000:]
    assert f"apt {digest16(PROXY)}" in log  # the lower-case spelling too
    assert re.search(r"no_proxy internal\.example,127\.0\.0\.1,localhost,::1\s*$", log, re.M)
    assert "builder:***@127.0.0.1:9" in log  # the settings line, masked
    # the password: in no log line, no stderr, no descriptor or image config
    for text in (log, first.stderr, (tmp_path / "first.json").read_text()):
        assert PASSWORD not in text
    config = json.loads((tmp_path / "first.json").read_text()).get("config", {})
    assert "127.0.0.1:9" not in json.dumps(config)
    # another proxy: the same image, from staging (no key holds the proxy)
    second = run_build(tmp_path, staging, "second", nonce, "http://127.0.0.1:8")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "staging hit" in (tmp_path / "second.log").read_text()
    digests = [
        json.loads((tmp_path / f"{n}.json").read_text())["digest"] for n in ("first", "second")
    ]
    assert digests[0] == digests[1]
