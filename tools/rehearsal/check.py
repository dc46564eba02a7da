"""check: what the rehearsal built from docker/ holds, read from the images themselves.

    python3 -m tools.rehearsal.check --arch gfx1100 \\
        --upstream UPSTREAM.json --runtime ROCM-RUNTIME.json --base BASE.json

(the descriptors `bazel cquery --output=files` names after a `--config=rehearsal`
build; .ci/rehearsal_checks.py runs it). Each image runs from staging in the
local Docker engine, without network:

- rocm-runtime keeps kernel files (rocBLAS's and hipBLASLt's library/, MIOpen's
  databases, any other *gfx* file under its ROCm) for the arch or its generic
  target only; the fat binaries pruning cannot touch are listed with the
  targets their code objects are for;
- its ROCm tree's size against the upstream's;
- `ldconfig -p` finds libamdhip64 and librocblas; /etc/rocm-pytorch/gpu-arch
  names the arch;
- in base, hipcc compiles a HIP kernel for the arch and the object carries an
  amdgcn code object for exactly that processor;
- in base, AMD SMI as the stand-in carries it (tools/rehearsal/amdsmi.py):
  /opt/rocm/share/amd_smi imports with base's Python, its libamd_smi.so
  exports every function the wrapper binds, and amdsmi_init() raises
  AMDSMI_STATUS_DRIVER_NOT_LOADED, as AMD's library does without a GPU driver.

Prints one line per check and exits 1 when one fails.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tools.staging import descriptor as desc

TOKEN = re.compile(r"gfx[0-9a-z]+(?:-[0-9]+)?(?:-generic)?")
FAT_BINARIES = ("librocrand.so.1", "librccl.so.1", "librocsolver.so.0")
KERNEL = """#include <hip/hip_runtime.h>
__global__ void axpy(float a, const float* x, float* y) { y[threadIdx.x] += a * x[threadIdx.x]; }
"""


class CheckError(Exception):
    pass


@dataclass
class Result:
    name: str
    ok: bool
    detail: str


def generic_target(arch: str) -> str:
    """The LLVM generic processor covering ``arch`` (docker/scripts/prune-rocm-arch.sh's table)."""
    table = (
        (r"gfx90[0246c]", "gfx9-generic"),
        (r"gfx94[012]|gfx950", "gfx9-4-generic"),
        (r"gfx101[0-3]", "gfx10-1-generic"),
        (r"gfx103[0-6]", "gfx10-3-generic"),
        (r"gfx110[0-3]|gfx115[0-3]", "gfx11-generic"),
        (r"gfx120[01]", "gfx12-generic"),
    )
    return next((generic for pattern, generic in table if re.fullmatch(pattern, arch)), "")


def run_in(image: str, script: str, docker: str = "docker", mount: Path | None = None) -> str:
    """``script`` run by bash in ``image`` without network (``mount`` read-only at /w)."""
    volume = ["--volume", f"{mount}:/w:ro"] if mount else []
    proc = subprocess.run(
        [docker, "run", "--rm", "--network", "none", *volume, image, "bash", "-c", script],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise CheckError(
            f"{image}: `{script[:60]}...` exited {proc.returncode}: {proc.stderr[-600:]}"
        )
    return proc.stdout


def kernel_files(image: str) -> dict[str, Counter]:
    """{directory: Counter of gfx targets} of the files under the image's ROCm naming one."""
    # /opt/rocm/ (the link followed, nothing below it): Debian's lib/rocblas/<version>/library
    # link to AMD's lib/rocblas/library is not counted twice
    out = run_in(image, "find /opt/rocm/ -xdev -type f -name '*gfx*' 2>/dev/null | sort")
    found: dict[str, Counter] = {}
    for path in out.split():
        directory, name = path.rsplit("/", 1)
        found.setdefault(directory.removeprefix("/opt/rocm/"), Counter()).update(
            set(TOKEN.findall(name))
        )
    return found


def check_kernels(image: str, arch: str) -> Result:
    keep = {arch, generic_target(arch)} - {""}
    found = kernel_files(image)
    others = {
        d: sorted(t for t in c if t not in keep and not t.startswith(arch))
        for d, c in found.items()
    }
    others = {d: t for d, t in others.items() if t}
    counts = {
        library: sum(sum(c.values()) for d, c in found.items() if marker in d)
        for library, marker in (
            ("rocBLAS", "rocblas/"),
            ("hipBLASLt", "hipblaslt/"),
            ("MIOpen", "miopen/"),
        )
    }
    summary = ", ".join(f"{library} {n}" for library, n in counts.items())
    summary += ", rocSOLVER none (its code objects are in librocsolver.so)"
    if others:
        return Result("kernel files", False, f"other archs' kernels remain: {others}")
    if not counts["rocBLAS"]:
        return Result("kernel files", False, f"no rocBLAS kernel file for {arch}: {summary}")
    return Result("kernel files", True, f"only {'/'.join(sorted(keep))} kernel files: {summary}")


def fat_binaries(image: str) -> Result:
    """The targets of the code objects inside ROCm's fat libraries (not prunable by name)."""
    llvm = "/opt/rocm/llvm/bin"
    script = (
        f"cd /tmp; for so in {' '.join(FAT_BINARIES)}; do\n"
        "  p=$(readlink -f /opt/rocm/lib/$so) || continue\n"
        f'  {llvm}/llvm-objcopy --dump-section=.hip_fatbin=fb.bin "$p" /dev/null 2>/dev/null'
        " || continue\n"
        f"  targets=$({llvm}/clang-offload-bundler --list --type=o --input=fb.bin 2>/dev/null"
        " | sed -n 's/.*amdhsa--//p' | sort -u | tr '\\n' ' ')\n"
        '  echo "$so $(stat -c %s "$p") $targets"\n'
        "  rm -f fb.bin\n"
        "done"
    )
    parts = []
    for line in run_in(image, script).splitlines():
        so, size, *targets = line.split()
        listed = (
            f"{len(targets)} targets ({' '.join(sorted(targets))})"
            if targets
            else "compressed bundles"
        )
        parts.append(f"{so} {int(size) / 2**20:.0f} MiB: {listed}")
    return Result("fat binaries (pruning by file name keeps them whole)", True, "; ".join(parts))


def rocm_bytes(image: str) -> int:
    return int(run_in(image, "du -sbL /opt/rocm/ | cut -f1").strip())


def check_loader(image: str, arch: str) -> Result:
    out = run_in(image, "ldconfig -p; echo gpu-arch=$(cat /etc/rocm-pytorch/gpu-arch)")
    missing = [lib for lib in ("libamdhip64.so", "librocblas.so") if lib not in out]
    recorded = out.rsplit("gpu-arch=", 1)[-1].strip()
    if missing or recorded != arch:
        return Result(
            "loader and arch", False, f"ldconfig -p lacks {missing}; gpu-arch says {recorded!r}"
        )
    return Result(
        "loader and arch", True, f"ldconfig -p finds libamdhip64 and librocblas; gpu-arch {arch}"
    )


def check_hipcc(image: str, arch: str) -> Result:
    script = f"""set -e; cd /tmp; cat > k.hip <<'EOF'
{KERNEL}EOF
hipcc --offload-arch={arch} -c k.hip -o k.o 2>/dev/null
/opt/rocm/llvm/bin/llvm-objdump --offloading k.o | grep 'offload bundle'
for f in k.o.*amdgcn*; do /opt/rocm/llvm/bin/llvm-readelf -h "$f" | grep -E 'Machine|Flags'; done"""
    out = run_in(image, script)
    bundles = re.findall(r"hipv4-amdgcn-amd-amdhsa--(\S+)", out)
    flags = re.findall(r"Flags:\s+\S+,\s*(gfx[0-9a-z]+)", out)
    if bundles != [arch] or flags != [arch] or "EM_AMDGPU" not in out:
        return Result("hipcc", False, f"bundles {bundles}, device flags {flags}:\n{out}")
    return Result(
        "hipcc", True, f"hipcc --offload-arch={arch} made an amdgcn code object for {arch} only"
    )


AMD_SMI = """import amdsmi
maps = open("/proc/self/maps").read().split()
print("version", amdsmi.__version__, "library", [m for m in maps if "libamd_smi" in m][0])
try:
    amdsmi.amdsmi_init()
    print("init succeeded")
except amdsmi.AmdSmiLibraryException as e:
    print("init raised", e.get_error_code(), e.get_error_info(detailed=False))
"""


def check_amd_smi(image: str, python: str = "python") -> Result:
    """AMD's amdsmi package from /opt/rocm/share/amd_smi on the stand-in libamd_smi.so."""
    script = f"""set -e; nm -D --defined-only /opt/rocm/lib/libamd_smi.so | grep -c ' T amdsmi_'
cd /tmp && PYTHONPATH=/opt/rocm/share/amd_smi {python} -W ignore -c '{AMD_SMI}'"""
    out = run_in(image, script)
    exported = int(out.split()[0])
    want = "init raised 34 AMDSMI_STATUS_DRIVER_NOT_LOADED"
    if want not in out or not re.search(r"library /opt/rocm[-0-9.]*/lib/libamd_smi\.so", out):
        return Result("amd_smi", False, f"expected `{want}` from /opt/rocm/lib's library:\n{out}")
    version = out.split("version ", 1)[1].split()[0]
    return Result(
        "amd_smi",
        True,
        f"amdsmi {version} imports from /opt/rocm/share/amd_smi, its stand-in libamd_smi.so"
        f" exports {exported} functions, amdsmi_init() raises DRIVER_NOT_LOADED",
    )


def copy_out(image: str, path: str, dest: Path, docker: str = "docker") -> Path:
    """``path`` of ``image`` copied into the directory ``dest``: the image may be FROM
    scratch (a container of it is created, never started); where it landed."""
    created = subprocess.run(
        [docker, "create", image, "none"], capture_output=True, text=True, check=False
    )
    if created.returncode != 0:
        raise CheckError(f"{image}: docker create exited {created.returncode}: {created.stderr}")
    cid = created.stdout.strip()
    try:
        proc = subprocess.run(
            [docker, "cp", f"{cid}:{path}", str(dest)], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise CheckError(f"{image} has no {path}: {proc.stderr.strip()}")
    finally:
        subprocess.run([docker, "rm", cid], capture_output=True, check=False)
    return dest / Path(path).name


def check_triton(base: str, wheel_image: str, version: str, python: str) -> Result:
    """triton-wheel holds one triton wheel of ``version`` for base's Python, which installs
    in base without an index and imports with its native module and both backends."""
    want = (
        f"triton-{version}-cp{python.replace('.', '')}-cp{python.replace('.', '')}-linux_x86_64.whl"
    )
    with tempfile.TemporaryDirectory() as tmp:
        wheels = copy_out(wheel_image, "/wheels", Path(tmp))
        names = sorted(w.name for w in wheels.iterdir())
        if names != [want]:
            return Result("triton wheel", False, f"/wheels holds {names}, not [{want!r}]")
        out = run_in(
            base,
            "python -m pip install --quiet --no-index --no-deps /w/wheels/*.whl && python -c"
            " 'import triton, triton._C.libtriton as lib;"
            " print(triton.__version__, *sorted(triton.backends.backends), lib.__file__)'",
            mount=Path(tmp),
        )
    words = out.split()
    if words[:3] != [version, "amd", "nvidia"] or not words[-1].endswith(".so"):
        return Result("triton wheel", False, f"in base, triton says {out.strip()!r}")
    return Result(
        "triton wheel",
        True,
        f"{want} installs in base without an index; imports {version}, backends amd and"
        " nvidia, native triton._C.libtriton",
    )


def check_source_tree(image: str, root: str) -> Result:
    """The source image holds a checkout at ``root`` whose every submodule is checked out."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            gitmodules = copy_out(image, f"{root}/.gitmodules", Path(tmp)).read_text()
        except CheckError:
            gitmodules = ""
        paths = re.findall(r"^\s*path\s*=\s*(\S+)", gitmodules, re.M)
        empty = []
        for sub in paths:
            dest = Path(tmp) / "sub"
            dest.mkdir()
            got = copy_out(image, f"{root}/{sub}", dest)
            if not any(f.name != ".git" for f in got.iterdir()):
                empty.append(sub)
            shutil.rmtree(dest)
    if not paths or empty:
        return Result(
            "source tree", False, f"{root}: submodules {paths or 'none'}, not checked out: {empty}"
        )
    return Result("source tree", True, f"{root} with its {len(paths)} submodule(s) checked out")


def check_runtime(runtime: str, base: str, arch: str, python: str) -> list[Result]:
    """runtime passes the smoke test as its user, and its torch carries an amdgcn code object
    for ``arch`` only (read with base's LLVM tools: runtime has none)."""
    results = []
    out = run_in(
        runtime,
        "id; stat -c '%U %u %a' /home/rocm /opt/venv;"
        " python /usr/local/share/rocm-pytorch/smoke-test-torch.py",
    )
    ident, home, venv = out.splitlines()[:3]
    ok = "uid=1001(rocm)" in ident and home.startswith("rocm 1001") and venv.startswith("root 0")
    ok = ok and "all smoke checks passed" in out
    results.append(
        Result(
            "runtime user and smoke test",
            ok,
            f"{ident.split()[0]}; /home/rocm {home}; /opt/venv {venv}; smoke test"
            f" {'passed' if 'all smoke checks passed' in out else 'failed:' + out[-400:]}",
        )
    )
    lib = f"/opt/venv/lib/python{python}/site-packages/torch/lib/libtorch_hip.so"
    with tempfile.TemporaryDirectory() as tmp:
        copy_out(runtime, lib, Path(tmp))
        llvm = "/opt/rocm/llvm/bin"
        targets = run_in(
            base,
            f"cd /tmp && {llvm}/llvm-objcopy --dump-section=.hip_fatbin=fb.bin /w/libtorch_hip.so"
            f" /dev/null && {llvm}/clang-offload-bundler --list --type=o --input=fb.bin",
            mount=Path(tmp),
        ).split()
    gpu = sorted({t.rsplit("--", 1)[-1] for t in targets if "amdgcn" in t})
    results.append(
        Result(
            "libtorch_hip.so code objects",
            gpu == [arch],
            f"{lib} carries amdgcn code objects for {gpu or 'nothing'}",
        )
    )
    return results


def check_extension_wheels(pytorch: str, wheel_images: list[str], arch: str) -> Result:
    """The extension wheels (torchvision, cupy) install in the pytorch image without an
    index and import, their GPU code built for ``arch`` only, torchvision with its
    vendored image codecs."""
    with tempfile.TemporaryDirectory() as tmp:
        names = []
        for n, image in enumerate(wheel_images):
            (Path(tmp) / str(n)).mkdir()
            names += [w.name for w in copy_out(image, "/wheels", Path(tmp) / str(n)).iterdir()]
        out = run_in(
            pytorch,
            "python -m pip install --quiet --no-index --no-deps /w/*/wheels/*.whl && python -c"
            " 'import torchvision, cupy; print(torchvision.__version__,"
            ' ",".join(torchvision.extension_archs()), cupy.__version__,'
            ' ",".join(cupy.get_targets())); print(torchvision.image_codecs())\'',
            mount=Path(tmp),
        )
    first, codecs = [*out.strip().splitlines(), "", ""][:2]
    words = first.split()
    ok = len(words) == 4 and words[1] == arch and words[3] == arch and "jpeg" in codecs
    return Result(
        "extension wheels",
        ok,
        f"{', '.join(sorted(names))} install in pytorch without an index; torchvision"
        f" {words[0] if words else '?'} ({codecs}) and cupy {words[2] if len(words) > 2 else '?'}"
        f" carry GPU code for {sorted({w for w in words[1::2]})}",
    )


def run(arch: str, upstream: Path, runtime: Path, base: Path) -> list[Result]:
    loaded = {
        "upstream": desc.load(upstream),
        "runtime": desc.load(runtime),
        "base": desc.load(base),
    }
    images = {name: d.staging_ref for name, d in loaded.items()}
    results = [check_kernels(images["runtime"], arch), fat_binaries(images["runtime"])]
    before, after = rocm_bytes(images["upstream"]), rocm_bytes(images["runtime"])
    layers = {name: sum(b.size for b in d.layers) / 2**30 for name, d in loaded.items()}
    results.append(
        Result(
            "size",
            after < before,
            f"/opt/rocm {before / 2**30:.2f} GiB in the upstream -> {after / 2**30:.2f} GiB"
            f" in rocm-runtime ({(before - after) / 2**30:.2f} GiB pruned); image layers"
            f" {layers['upstream']:.2f} -> {layers['runtime']:.2f} GiB compressed",
        )
    )
    results.append(check_loader(images["runtime"], arch))
    results.append(check_hipcc(images["base"], arch))
    results.append(check_amd_smi(images["base"]))
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="check", description=__doc__.splitlines()[0])
    p.add_argument("--arch", required=True, help="the arch rocm-runtime and base were built for")
    p.add_argument("--upstream", type=Path, required=True, help="the stand-in's descriptor")
    p.add_argument("--runtime", type=Path, required=True, help="rocm-runtime.<arch>'s descriptor")
    p.add_argument("--base", type=Path, required=True, help="pytorch-base.<arch>'s descriptor")
    args = p.parse_args(argv)
    try:
        results = run(args.arch, args.upstream, args.runtime, args.base)
    except (CheckError, desc.DescriptorError, OSError) as e:
        print(f"check: error: {e}", file=sys.stderr)
        return 1
    for r in results:
        print(f"{'PASS' if r.ok else 'FAIL'}: {r.name}: {r.detail}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
