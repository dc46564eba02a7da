"""imagecheck: would this image work on a GPU host? Its libraries and its kernels, without a GPU.

    python3 -m tools.imagecheck IMAGE [--arch ARCH] [--pull] [--json]
    bazel run //tools/imagecheck -- IMAGE ...

IMAGE is a reference the local Docker engine can run (a published
`registry/repo:tag` or `@sha256:...`, pulled with --pull; a staging ref; a
local name). In the image, as its user, with its environment and its own
loader configuration (no network), tools/imagecheck/probe.py:

- loads every ROCm library the family's PyTorch needs (needs.toml), by the
  soname the loader's cache gives, with ctypes as `import torch` would;
- for each package of needs.toml the image has (torch, vllm, triton, ...):
  imports it, finds every shared object of its distributions whose
  libraries the loader cannot resolve (ldd), and loads each library the real
  project links or opens, which its shared objects must link too;
- reads the kernels: rocBLAS's, hipBLASLt's and MIOpen's kernel files, the
  code objects of rocFFT and of every fat binary of those packages, AOTriton's
  images; each must cover every arch the image claims (ARCH, else its
  /etc/rocm-pytorch/gpu-arch: one arch or a family's, `;`-separated), by its
  own code object or its LLVM generic target's.

Prints one PASS/FAIL line per check, each naming what is missing, then
`imagecheck: N passed, M failed`; exits 1 when a check fails, 2 when the
image cannot be run.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NEEDS = HERE / "needs.toml"
# libraries that ship with torch (in torch/lib or the family's MAGMA), not with ROCm
WITH_TORCH = {"magma", "aotriton_v2"}
GENERIC = (
    (r"gfx90[0246c]", "gfx9-generic"),
    (r"gfx94[012]|gfx950", "gfx9-4-generic"),
    (r"gfx101[0-3]", "gfx10-1-generic"),
    (r"gfx103[0-6]", "gfx10-3-generic"),
    (r"gfx110[0-3]|gfx115[0-3]", "gfx11-generic"),
    (r"gfx120[01]", "gfx12-generic"),
)


class ImageCheckError(Exception):
    """The image could not be probed at all."""


@dataclass(frozen=True)
class Result:
    name: str
    ok: bool
    detail: str


def generic_target(arch: str) -> str:
    """The LLVM generic processor whose code objects run on ``arch`` ("" when none)."""
    return next((g for pattern, g in GENERIC if re.fullmatch(pattern, arch)), "")


def covers(target: str, arch: str) -> bool:
    """Whether code for ``target`` (gfx90a, gfx90a:xnack-, gfx11-generic) runs on ``arch``."""
    processor = target.split(":", 1)[0]
    return processor == arch or (processor == generic_target(arch) != "")


def load_needs(path: Path = NEEDS) -> dict:
    return tomllib.loads(path.read_text())


def spec(needs: dict) -> dict:
    """The probe's input: needs.toml as the probe reads it."""
    torch = next(p for p in needs["package"] if p["name"] == "torch")
    rocm = [n["library"] for n in torch["needs"] if n["library"] not in WITH_TORCH]
    debian_less = {
        n["library"] for p in needs["package"] for n in p["needs"] if n.get("debian") is False
    }
    return {
        "rocm_libraries": rocm,
        "not_in_debian": sorted(debian_less),
        "packages": needs["package"],
        "kernels": needs["kernels"],
        "kernel_dirs": needs.get("kernel_dirs", []),
    }


def run_probe(image: str, needs: dict, docker: str = "docker") -> dict:
    """The probe's JSON, run in ``image`` as its user without network."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in ("probe.py", "elf.py"):
            shutil.copyfile(HERE / name, work / name)
        (work / "spec.json").write_text(json.dumps(spec(needs)))
        for f in work.iterdir():
            f.chmod(0o644)
        work.chmod(0o755)
        script = (
            'py=$(command -v python || command -v python3) || { echo "no python in the image"'
            ' >&2; exit 3; }; exec "$py" /w/probe.py /w/spec.json'
        )
        cmd = [docker, "run", "--rm", "--network", "none", "--volume", f"{work}:/w:ro"]
        cmd += ["--entrypoint", "", image, "sh", "-c", script]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise ImageCheckError(f"{image}: the probe could not run: {tail}")
    try:
        return json.loads(proc.stdout)
    except ValueError:
        raise ImageCheckError(
            f"{image}: the probe printed no JSON: {proc.stdout[-300:]!r}"
        ) from None


def _where(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def judge_libraries(probe: dict, not_in_debian: set[str]) -> Result:
    bad, loaded, absent = [], [], []
    for lib in probe["libraries"]:
        if not lib.get("found"):
            if lib["library"] in not_in_debian:
                absent.append(f"lib{lib['library']}")
            else:
                bad.append(f"lib{lib['library']}: not in the loader's cache (ldconfig -p)")
        elif lib.get("error"):
            bad.append(f"{lib['name']}: {lib['error']}")
        else:
            loaded.append(lib["name"])
    detail = f"{len(loaded)} ROCm libraries load ({', '.join(loaded)})"
    if absent:
        detail += f"; not in Debian, so not in the stand-in: {', '.join(absent)}"
    if bad:
        return Result("ROCm libraries load", False, "; ".join(bad))
    return Result("ROCm libraries load", True, detail)


def judge_package(pkg: dict) -> Result | None:
    name = pkg["name"]
    if not pkg.get("present"):
        return None
    title = f"{name} loads"
    bad = []
    if pkg.get("import_error"):
        bad.append(f"import {name}: {pkg['import_error']}")
    for obj in pkg.get("objects", []):
        if obj["unresolved"]:
            bad.append(f"{_where(obj['path'])} needs {', '.join(obj['unresolved'])}: not found")
    loaded, absent = [], []
    for load in pkg.get("loads", []):
        lib = f"lib{load['library']}"
        if load.get("absent_everywhere"):
            absent.append(lib)
        elif load["how"] == "linked" and not load.get("linked"):
            bad.append(f"{name} does not link {lib} (the real project does: needs.toml)")
        elif load.get("error"):
            bad.append(f"{load['name']}: {load['error']}")
        else:
            loaded.append(f"{load['name']} ({load['how']})")
    if bad:
        return Result(title, False, "; ".join(bad[:8]) + ("; ..." if len(bad) > 8 else ""))
    detail = (
        f"import {name}; {len(pkg.get('objects', []))} shared objects resolve;"
        f" {', '.join(loaded) or 'no ROCm library of its own'}"
    )
    if absent:
        detail += f"; not in Debian, so not in the stand-in: {', '.join(absent)}"
    return Result(title, True, detail)


def missing_archs(targets, archs: list[str]) -> list[str]:
    return [a for a in archs if not any(covers(t, a) for t in targets)]


def judge_kernels(probe: dict, needs: dict, archs: list[str]) -> list[Result]:
    required = {k["library"]: k.get("required", True) for k in needs["kernels"]}
    required.update({k["library"]: True for k in needs.get("kernel_dirs", [])})
    results = []
    for k in probe["kernels"]:
        library = k["library"]
        title = f"{library} kernels for {'/'.join(archs)}"
        if not k.get("exists"):
            ok = not required.get(library, True)
            results.append(Result(title, ok, f"no {k.get('where') or library} in the image"))
            continue
        targets = k.get("targets") if "targets" in k else list(k.get("tokens", {}))
        missing = missing_archs(targets, archs)
        have = ", ".join(sorted(targets)) or "none"
        if missing:
            ok = not required.get(library, True)
            note = " (reported only: not needed to run, needs.toml)" if ok else ""
            results.append(
                Result(
                    title,
                    ok,
                    f"{library} has no kernels for {', '.join(missing)} in {k['where']}"
                    f" (it has {have}){note}",
                )
            )
        else:
            results.append(Result(title, True, f"{k['where']}: {have}"))
    for pkg in probe["packages"]:
        if not pkg.get("present"):
            continue
        gaps, objects = [], 0
        for path, targets in sorted(pkg.get("fatbins", {}).items()):
            gpu = [t for t in targets if t.startswith("gfx") or t.startswith("compressed")]
            if not gpu:
                continue
            objects += 1
            missing = missing_archs(gpu, archs)
            if missing:
                gaps.append(
                    f"{_where(path)} has no code object for {', '.join(missing)}"
                    f" (it has {', '.join(gpu)})"
                )
        if objects:
            results.append(
                Result(
                    f"{pkg['name']} code objects for {'/'.join(archs)}",
                    not gaps,
                    "; ".join(gaps) if gaps else f"{objects} fat binaries cover every arch",
                )
            )
    return results


def judge(probe: dict, needs: dict, archs: list[str]) -> list[Result]:
    not_in_debian = set(spec(needs)["not_in_debian"])
    results = [judge_libraries(probe, not_in_debian)]
    results += [r for p in probe["packages"] if (r := judge_package(p))]
    results += judge_kernels(probe, needs, archs)
    return results


def claimed_archs(probe: dict, arch: str | None) -> list[str]:
    value = arch or probe.get("gpu_arch_file", "")
    if not value:
        raise ImageCheckError(
            "the image names no arch (/etc/rocm-pytorch/gpu-arch): give --arch ARCH"
        )
    return [a for a in value.split(";") if a]


def check(image: str, arch: str | None = None, docker: str = "docker") -> list[Result]:
    needs = load_needs()
    probe = run_probe(image, needs, docker)
    return judge(probe, needs, claimed_archs(probe, arch))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="imagecheck", description=__doc__.splitlines()[0])
    p.add_argument("image", help="an image reference the local Docker engine can run")
    p.add_argument(
        "--arch",
        help="the archs the image is for (a family's members `;`-separated);"
        " default: its /etc/rocm-pytorch/gpu-arch",
    )
    p.add_argument("--pull", action="store_true", help="docker pull IMAGE first (a published one)")
    p.add_argument("--docker", default="docker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        if args.pull:
            proc = subprocess.run(
                [args.docker, "pull", "--quiet", args.image],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
                raise ImageCheckError(f"docker pull {args.image}: {tail}")
        results = check(args.image, args.arch, args.docker)
    except ImageCheckError as e:
        print(f"imagecheck: error: {e}", file=sys.stderr)
        return 2
    for r in results:
        print(f"{'PASS' if r.ok else 'FAIL'}: {r.name}: {r.detail}")
    failed = sum(not r.ok for r in results)
    print(f"imagecheck: {len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
