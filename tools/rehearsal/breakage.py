"""breakage: would tools/imagecheck notice? Images derived from a built one, each missing one thing.

For a built image (a serving image: vllm), one derived image per removal,
each a `FROM <image>` and one `RUN rm` (the recipes stay as they are):

- each ROCm library of needs.toml the image has (the file the loader's cache
  names, resolved), and each other library its packages link or open (MAGMA
  and AOTriton in torch/lib, CuPy's rocFFT and rocSPARSE, ...);
- for each device library with kernel files (rocBLAS, hipBLASLt), the files
  whose names cover the image's arch (its own and its generic target's);
  AOTriton's images for the arch.

tools/imagecheck must fail on each, naming the missing library or the arch.
`run` gives (tried, named, misses); .ci/rehearsal_checks.py wants 0 misses.
"""

from __future__ import annotations

import concurrent.futures
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tools.imagecheck import check as imagecheck
from tools.rehearsal import check


@dataclass(frozen=True)
class Removal:
    what: str  # what the check's failure must name
    paths: tuple[str, ...]  # what `RUN rm -rf` removes


def _sh(image: str, script: str, docker: str) -> str:
    return check.run_in(image, script, docker, entrypoint="")


def removals(
    image: str, probe: dict, needs: dict, arch: str, docker: str = "docker"
) -> list[Removal]:
    """What to take away from ``image``, one at a time (``probe``: its imagecheck probe)."""
    loaded = [lib for lib in probe["libraries"] if lib.get("path") and not lib.get("error")]
    for pkg in probe["packages"]:  # what the packages link beyond those: MAGMA, AOTriton, ...
        loaded += [x for x in pkg.get("loads", []) if x.get("path") and not x.get("error")]
    # the file each was loaded from, its links resolved (one container for all)
    script = "; ".join(f"readlink -f '{lib['path']}' || echo" for lib in loaded)
    reals = _sh(image, script, docker).splitlines() if loaded else []
    out: list[Removal] = []
    seen: set[str] = set()
    for lib, real in zip(loaded, reals, strict=True):
        if real and real not in seen:
            seen.add(real)
            out.append(Removal(lib["name"], (real,)))
    archs = {arch, imagecheck.generic_target(arch)} - {""}
    for k in needs["kernels"]:
        if k.get("required", True) and "files" in k:
            pattern = " -o ".join(f"-name '*{a}*'" for a in sorted(archs))
            files = _sh(image, f"find {k['files']}/ \\( {pattern} \\) -type f", docker).split()
            if files:
                out.append(Removal(f"{k['library']} has no kernels for {arch}", tuple(files)))
    for k in probe["kernels"]:
        if k["library"] in {d["library"] for d in needs.get("kernel_dirs", [])} and k.get("exists"):
            dirs = _sh(image, f"find {k['where']} -maxdepth 1 -name '*{arch}*'", docker).split()
            if dirs:
                out.append(Removal(f"{k['library']} has no kernels for {arch}", tuple(dirs)))
    return out


def derive(image: str, removal: Removal, tag: str, docker: str = "docker") -> None:
    """``tag``: ``image`` less ``removal.paths`` (built by the engine, no network)."""
    with tempfile.TemporaryDirectory() as ctx:
        user = subprocess.run(
            [docker, "image", "inspect", "--format", "{{.Config.User}}", image],
            capture_output=True, text=True, check=False,
        ).stdout.strip()  # fmt: skip
        back = f"USER {user}\n" if user else ""
        paths = " ".join(f"'{p}'" for p in removal.paths)
        (Path(ctx) / "Dockerfile").write_text(f"FROM {image}\nUSER 0\nRUN rm -rf {paths}\n{back}")
        proc = subprocess.run(
            [docker, "buildx", "build", "--network", "none", "--load", "--tag", tag, ctx],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    if proc.returncode != 0:
        raise imagecheck.ImageCheckError(f"building {tag}: {proc.stderr[-500:]}")


def named(results: list[imagecheck.Result], removal: Removal) -> bool:
    """Whether a failing result names what ``removal`` took away."""
    word = removal.what
    if word.startswith("lib"):  # a library: its soname or its link name
        stem = word.split(".so", 1)[0]
        return any(not r.ok and stem in r.detail for r in results)
    return any(not r.ok and word in r.detail for r in results)


def attempt(image: str, arch: str, n: int, removal: Removal, docker: str) -> str | None:
    """Derive image ``n`` without ``removal`` and check it: None when a failure names
    what was removed, else the miss."""
    tag = f"rocm-pytorch-breakage:{n}"
    derive(image, removal, tag, docker)
    try:
        results = imagecheck.check(tag, arch, docker)
    finally:
        subprocess.run([docker, "rmi", "--force", tag], capture_output=True, check=False)
    if named(results, removal):
        return None
    failed = [r.name for r in results if not r.ok] or ["every check passed"]
    return f"without {removal.what}: {'; '.join(failed)}"


def run(image: str, arch: str, docker: str = "docker", jobs: int = 2) -> tuple[int, int, list[str]]:
    """(derived images tried, failures that named the removal, the misses); ``jobs``
    derived images at a time."""
    needs = imagecheck.load_needs()
    probe = imagecheck.run_probe(image, needs, docker)
    todo = removals(image, probe, needs, arch, docker)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        outcomes = list(
            pool.map(lambda nr: attempt(image, arch, nr[0], nr[1], docker), enumerate(todo))
        )
    misses = [m for m in outcomes if m is not None]
    return len(todo), len(todo) - len(misses), misses
