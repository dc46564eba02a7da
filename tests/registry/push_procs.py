"""Real `registry push` processes for the race tests, and what to read back from them.

Shared by test_push_races.py and test_immutable_races.py (list it in the srcs of
both targets).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

from tests.registry.staging_images import layer, stage, write_plan


class Push:
    """A `registry push` process; stdout lines are collected as they are printed."""

    def __init__(self, plan: Path, registry: str, env: dict, *args: str) -> None:
        self.proc = subprocess.Popen(
            [
                os.environ["REGISTRY_BIN_TOOL"],
                "push",
                "--plan",
                str(plan),
                "--registry",
                registry,
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.registry = registry
        self.lines: list[str] = []
        self.err = ""
        self._out = threading.Thread(target=self._read_out)
        self._err = threading.Thread(target=self._read_err)
        self._out.start()
        self._err.start()

    def _read_out(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def _read_err(self) -> None:
        self.err = self.proc.stderr.read()

    def wait(self, timeout: float = 120) -> int:
        code = self.proc.wait(timeout)
        self._out.join()
        self._err.join()
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.wait()

    def pushed(self) -> list[str]:
        """The refs of its `pushed` lines, without the registry host (as all_refs has them)."""
        host = self.registry.split("/", 1)[0]
        return [
            line.removeprefix(f"pushed {host}/")
            for line in self.lines
            if line.startswith("pushed ")
        ]

    def refs_written(self) -> int:
        """The summary's count of refs written."""
        (n,) = re.findall(r"; (\d+) refs written, ", self.err) or [-1]
        return int(n)


def immutable_tag(spec: Path) -> str:
    return json.loads(spec.read_text())["tags"]["immutable"]


def two_builds(tmp_path: Path, staging):
    """Two builds of rocm-runtime with different content and the same VCS_REF."""
    builds = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        image = stage(
            staging.host, tmp_path / name, "rocm-runtime", [layer(200_000, name)], vcs_ref="1234567"
        )
        builds.append(image)
    plans = [write_plan(tmp_path / name, [b]) for name, b in zip("ab", builds, strict=True)]
    return builds, plans


def wait_for(check, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "error" in line]
