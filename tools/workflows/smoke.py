"""The GPU smoke of a weekly publish: the host's health, then each image on the device.

`python3 -m tools.workflows gpu-smoke --arch gfx950 --push push-gfx950.json`
runs on a GPU host after the push (.github/workflows/gpu-smoke.yml):

1. the host's health first, as PyTorch's ROCm CI does before its GPU jobs:
   /dev/kfd and a /dev/dri render node the runner's user can open, and a
   Docker engine that answers. A runner without /dev/kfd is no GPU host: the
   smoke says so in one line and passes (skipped), so a mislabelled runner
   shows in the log, not as a red run;
2. every image of the push that runs (not a wheel image, not arch-free),
   pulled by the digest the push wrote, never by a tag that may have moved:
   - `tools.imagecheck --pull` (its libraries and kernels, as in the
     rehearsal);
   - on the device (`--device /dev/kfd --device /dev/dri`): with PyTorch,
     a tensor computed on the GPU and the device's arch among the image's;
     without, `rocminfo` lists an agent of one of the image's archs.

Prints one `PASS`/`FAIL` line per check and `gpu-smoke: N passed, N failed`
(or `... skipped: ...`); writes the same to $GITHUB_STEP_SUMMARY when set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tools.tagconf.model import Catalog

# What the device check runs in an image with PyTorch: the arch of device 0
# must be one of the image's (a gfx942 host cannot vouch for a gfx950 image).
TORCH_CHECK = """\
import sys, torch
archs = sys.argv[1].split(";")
assert torch.cuda.is_available(), "torch sees no GPU"
name = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
assert name in archs, f"the device is {name}, the image is for {archs}"
x = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
assert float((x * 2).sum()) == float(x.sum()) * 2, "wrong sum on the GPU"
print(f"{name}: {torch.cuda.device_count()} device(s), a sum computed on it")
"""
ROCMINFO = 'for r in /opt/rocm*/bin/rocminfo; do exec "$r"; done; echo no rocminfo; exit 1'
DEVICES = ["--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "video"]


class SmokeError(Exception):
    """A problem of the inputs: one line naming it and the fix."""


@dataclass(frozen=True)
class Result:
    name: str
    ok: bool
    detail: str


def health(dev: Path = Path("/dev"), docker: str = "docker") -> tuple[str | None, list[Result]]:
    """(why the smoke is skipped or None, the host's checks)."""
    kfd = dev / "kfd"
    if not kfd.exists():
        return f"no {kfd} on this runner: not a GPU host (label GPU hosts only)", []
    results = [Result("/dev/kfd opens", os.access(kfd, os.R_OK | os.W_OK), str(kfd))]
    nodes = sorted((dev / "dri").glob("renderD*")) if (dev / "dri").is_dir() else []
    usable = [n for n in nodes if os.access(n, os.R_OK | os.W_OK)]
    results.append(
        Result(
            "a render node opens",
            bool(usable),
            ", ".join(map(str, usable)) or f"none of {len(nodes)} in {dev / 'dri'} (group video?)",
        )
    )
    proc = subprocess.run(
        [docker, "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    tail = (proc.stdout + proc.stderr).strip().splitlines() or ["?"]
    results.append(Result("the Docker engine answers", proc.returncode == 0, tail[-1]))
    return None, results


def runnable(push: dict, catalog: Catalog) -> list[tuple[str, str]]:
    """[(target name, repository@digest)] of the pushed images that run, each digest once."""
    runs: dict[str, str] = {}  # repository -> the first target of it (pytorch, not pytorch-test)
    for t in catalog.targets:
        if t.arch and t.stage != "wheel":
            runs.setdefault(t.repository, t.name)
    seen: dict[str, tuple[str, str]] = {}
    for entry in push.get("refs", []):
        ref, digest = entry.get("ref", ""), entry.get("digest")
        if not digest:
            continue
        name = ref.rsplit(":", 1)[0] if ":" in ref.rsplit("/", 1)[-1] else ref
        repository = name.rsplit("/", 1)[-1]
        if repository in runs and digest not in seen:
            seen[digest] = (runs[repository], f"{name}@{digest}")
    return sorted(seen.values())


def _run(cmd: list[str]) -> tuple[bool, str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = (proc.stdout + proc.stderr).strip().splitlines() or ["(no output)"]
    return proc.returncode == 0, lines[-1][:300]


def device_checks(ref: str, archs: tuple[str, ...], docker: str = "docker") -> list[Result]:
    members = ";".join(archs)
    ok, detail = _run([sys.executable, "-m", "tools.imagecheck", "--pull", "--arch", members, ref])
    results = [Result(f"imagecheck {ref}", ok, detail)]
    has_torch, _ = _run([docker, "run", "--rm", ref, "python3", "-c", "import torch"])
    if has_torch:
        ok, detail = _run(
            [docker, "run", "--rm", *DEVICES, ref, "python3", "-c", TORCH_CHECK, members]
        )
        results.append(Result(f"PyTorch on the device: {ref}", ok, detail))
    else:
        proc = subprocess.run(
            [docker, "run", "--rm", *DEVICES, ref, "sh", "-c", ROCMINFO],
            capture_output=True,
            text=True,
            check=False,
        )
        agents = [a for a in archs if a in proc.stdout.split()]
        tail = ((proc.stdout + proc.stderr).strip().splitlines() or ["(no output)"])[-1]
        results.append(
            Result(
                f"rocminfo on the device: {ref}",
                proc.returncode == 0 and bool(agents),
                f"agents of {', '.join(agents)}" if agents else f"no agent of {members}: {tail}",
            )
        )
    return results


def smoke(arch: str, push_file: Path, catalog: Catalog, dev: Path = Path("/dev")) -> int:
    if arch not in catalog.variants:
        raise SmokeError(f"--arch {arch}: not an arch or family of {catalog.path}")
    try:
        push = json.loads(push_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SmokeError(f"--push {push_file}: {e}; give the push's --json output") from e
    skipped, results = health(dev)
    if skipped:
        return _report([], f"gpu-smoke: skipped: {skipped}")
    if all(r.ok for r in results):
        images = runnable(push, catalog)
        if not images:
            raise SmokeError(f"--push {push_file}: no image of it runs (only wheels or none)")
        for _target, ref in images:
            results += device_checks(ref, catalog.members(arch))
    failed = sum(not r.ok for r in results)
    return _report(results, f"gpu-smoke: {len(results) - failed} passed, {failed} failed")


def _report(results: list[Result], last: str) -> int:
    lines = [f"{'PASS' if r.ok else 'FAIL'}: {r.name}: {r.detail}" for r in results] + [last]
    print("\n".join(lines))
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write("".join(f"- {line}\n" for line in lines))
    return 1 if any(not r.ok for r in results) else 0
