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
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tools.imagecheck.check import generic_target
from tools.oci import media
from tools.oci.reference import Reference
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


def run_in(
    image: str,
    script: str,
    docker: str = "docker",
    mount: Path | None = None,
    entrypoint: str | None = None,
) -> str:
    """``script`` run by bash in ``image`` without network (``mount`` read-only at /w;
    ``entrypoint`` "" for an image whose ENTRYPOINT would take the script as arguments)."""
    volume = ["--volume", f"{mount}:/w:ro"] if mount else []
    first = [] if entrypoint is None else ["--entrypoint", entrypoint]
    proc = subprocess.run(
        [docker, "run", "--rm", "--network", "none", *volume, *first, image, "bash", "-c", script],
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


def members(arch: str) -> list[str]:
    """The archs of PYTORCH_ROCM_ARCH: one, or an arch family's `;`-separated members."""
    return arch.split(";")


def check_kernels(image: str, arch: str) -> Result:
    archs = members(arch)
    keep = {a for m in archs for a in (m, generic_target(m))} - {""}
    found = kernel_files(image)
    others = {
        d: sorted(t for t in c if t not in keep and not any(t.startswith(m) for m in archs))
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
    # a family: every member keeps rocBLAS kernels of its own (or its generic target's)
    rocblas = {t for d, c in found.items() if "rocblas/" in d for t in c}
    for m in archs if len(archs) > 1 else []:
        if not any(t.startswith(m) or t == generic_target(m) for t in rocblas):
            return Result("kernel files", False, f"no rocBLAS kernel file for {m}: {summary}")
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


# ROCm libraries the stand-in may have outside /opt/rocm-<release>/lib, each with its
# reason (docs/rehearsal.md, "How the stand-in differs from AMD's image"): none.
ROCM_OUTSIDE_ALLOWED: dict[str, str] = {}
ROCM_OUTSIDE = r"""cd /opt/rocm/lib && ls -1 | grep -E '^lib.*\.so' > /tmp/rocm-names
find / -xdev \( -path /proc -o -path /sys -o -path '/opt/rocm-*' \) -prune -o \
    \( -type f -o -type l \) -name 'lib*.so*' -print 2>/dev/null \
  | awk -F/ 'NR==FNR { rocm[$0] = 1; next } ($NF in rocm) { print }' /tmp/rocm-names -
echo "names $(wc -l < /tmp/rocm-names)"
"""


def check_rocm_outside(image: str) -> Result:
    """No file or link named like a library of the image's /opt/rocm/lib anywhere else (AMD's
    layout: the loader finds ROCm through /etc/ld.so.conf.d only), but those allowed."""
    out = run_in(image, ROCM_OUTSIDE, entrypoint="").split()
    names = int(out[-1])
    found = sorted(out[:-2])
    extra = [f for f in found if f not in ROCM_OUTSIDE_ALLOWED]
    return Result(
        "no ROCm library outside /opt/rocm-*/lib",
        names > 0 and not extra,
        f"none of its {names} library files has a name or a link elsewhere"
        if not found
        else f"elsewhere: {', '.join(extra or found)}",
    )


def check_hipcc(image: str, arch: str) -> Result:
    script = f"""set -e; cd /tmp; cat > k.hip <<'EOF'
{KERNEL}EOF
hipcc {" ".join(f"--offload-arch={m}" for m in members(arch))} -c k.hip -o k.o 2>/dev/null
/opt/rocm/llvm/bin/llvm-objdump --offloading k.o | grep 'offload bundle'
for f in k.o.*amdgcn*; do /opt/rocm/llvm/bin/llvm-readelf -h "$f" | grep -E 'Machine|Flags'; done"""
    out = run_in(image, script)
    bundles = re.findall(r"hipv4-amdgcn-amd-amdhsa--(\S+)", out)
    flags = re.findall(r"Flags:\s+\S+,\s*(gfx[0-9a-z]+)", out)
    want = sorted(members(arch))
    if sorted(bundles) != want or sorted(flags) != want or "EM_AMDGPU" not in out:
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


# A Python C extension compiled and imported as Triton's runtime/build.py compiles its
# launcher: the compiler from CC, else gcc, else clang on PATH; Python.h from sysconfig's
# include of the running interpreter (Debian's posix_local scheme read as posix_prefix).
C_EXTENSION = r"""
import importlib.util, os, shutil, subprocess, sys, sysconfig, tempfile
cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang")
if cc is None:
    sys.exit("no C compiler: CC is unset and neither gcc nor clang is on PATH")
scheme = sysconfig.get_default_scheme()
include = sysconfig.get_paths(scheme="posix_prefix" if scheme == "posix_local" else scheme)[
    "include"]
if not os.path.isfile(os.path.join(include, "Python.h")):
    sys.exit(f"no Python.h in {include} (sysconfig's include)")
work = tempfile.mkdtemp()
src = os.path.join(work, "probe.c")
with open(src, "w") as f:
    f.write('#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n'
            'static PyObject *add(PyObject *s, PyObject *a) { long x, y;'
            ' if (!PyArg_ParseTuple(a, "ll", &x, &y)) return NULL;'
            ' return PyLong_FromLong(x + y); }\n'
            'static PyMethodDef m[] = {{"add", add, METH_VARARGS, NULL}, {NULL, NULL, 0, NULL}};\n'
            'static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "probe", NULL, -1, m};\n'
            'PyMODINIT_FUNC PyInit_probe(void) { return PyModule_Create(&d); }\n')
so = os.path.join(work, "probe" + sysconfig.get_config_var("EXT_SUFFIX"))
subprocess.run([cc, src, "-O3", "-shared", "-fPIC", "-o", so, f"-I{include}"], check=True)
spec = importlib.util.spec_from_file_location("probe", so)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print("compiled", cc, include, module.add(2, 3), os.getuid())
"""


def check_c_extension(image: str, name: str) -> Result:
    """In ``image``, as its user, a Python C extension compiles with the image's own compiler
    and headers, found the way Triton finds them, and imports."""
    try:
        out = run_in(image, f"python - <<'EOF'\n{C_EXTENSION}\nEOF", entrypoint="").split()
    except CheckError as e:
        return Result(f"{name} compiles a C extension", False, str(e)[-400:])
    ok = out[:1] == ["compiled"] and out[3:4] == ["5"]
    return Result(
        f"{name} compiles a C extension",
        ok,
        f"{out[1] if ok else out} against {out[2] if ok else '?'}/Python.h, imported as uid"
        f" {out[4] if ok else '?'} (Triton's launcher path)",
    )


# torch's JIT of C++ extensions, as a GPU host's code calls it: load_inline with ninja from
# PATH, $CXX else c++, torch's headers and Python.h, built under the user's
# ~/.cache/torch_extensions (TORCH_EXTENSIONS_DIR when set) and imported.
LOAD_INLINE = r"""
import os, shutil
from torch.utils.cpp_extension import load_inline
module = load_inline(
    "rehearsal_probe",
    "int64_t add(int64_t a, int64_t b) { return a + b; }",
    functions=["add"],
)
cxx = os.environ.get("CXX", "c++")
print("loaded", module.add(2, 3), shutil.which(cxx) or cxx, shutil.which("ninja"),
      os.path.dirname(module.__file__), os.getuid())
"""


def check_load_inline(image: str, name: str) -> Result:
    """In ``image``, as its user, torch.utils.cpp_extension.load_inline builds a C++ function
    into an extension with the image's ninja, C++ compiler and headers, and imports it."""
    title = f"{name} builds a torch C++ extension"
    try:
        out = run_in(image, f"python - <<'EOF'\n{LOAD_INLINE}\nEOF", entrypoint="").split()
    except CheckError as e:
        return Result(title, False, str(e)[-500:])
    ok = out[:2] == ["loaded", "5"] and len(out) == 6
    return Result(
        title,
        ok,
        f"load_inline: add(2, 3) = 5 built by {out[2]} with {out[3]} in {out[4]}, imported as"
        f" uid {out[5]}"
        if ok
        else f"load_inline printed {out}",
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


NIXL_PROBE = """set -e
python -m pip install --quiet --no-index --no-deps /w/wheels/*.whl
python -c '
import json, nixl, nixl_rocm._bindings as b
from nixl._api import nixl_agent
from nixl_rocm._api import nixl_agent as rocm_agent
agent = nixl_agent("rehearsal-check")
print(json.dumps({"same": nixl_agent is rocm_agent, "ucx": b.ucx_version(),
    "params": agent.get_backend_params("UCX"), "mems": agent.get_backend_mem_types("UCX")}))'
pkg=$(python -c 'import nixl_rocm, os; print(os.path.dirname(nixl_rocm.__file__))')
for f in "$pkg"/_bindings*.so "$pkg".libs/ucx/libuct_rocm.so*; do
    /opt/rocm/llvm/bin/llvm-objcopy --dump-section=.hip_fatbin=/tmp/fb.bin "$f" /dev/null
    /opt/rocm/llvm/bin/clang-offload-bundler --list --type=o --input=/tmp/fb.bin \\
        | sed "s|^|$(basename "$f") |"
done
"""


def check_nixl_wheel(image: str, wheel_image: str, version: str, python: str, arch: str) -> Result:
    """nixl-wheel holds the nixl-rocm wheel of ``version`` for ``python`` and the `nixl`
    shim over it. The nixl-rocm wheel carries UCX's transport modules (nixl_rocm.libs/ucx,
    repair-wheel.py --plugins); both wheels install in ``image`` without an index and both
    import names give one nixl_agent, whose UCX backend loads the ROCm transports from the
    wheel (no /opt/ucx there); the HIP code of the bindings and of libuct_rocm is for ``arch``
    only."""
    tag = f"cp{python.replace('.', '')}"
    want = [f"nixl-{version}-py3-none-any.whl", f"nixl_rocm-{version}-{tag}-{tag}-linux_x86_64.whl"]
    with tempfile.TemporaryDirectory() as tmp:
        wheels = copy_out(wheel_image, "/wheels", Path(tmp))
        names = sorted(w.name for w in wheels.iterdir())
        if names != want:
            return Result("nixl wheels", False, f"/wheels holds {names}, not {want}")
        with zipfile.ZipFile(wheels / want[1]) as z:
            plugins = sorted(
                n.rsplit("/", 1)[1] for n in z.namelist() if n.startswith("nixl_rocm.libs/ucx/")
            )
        out = run_in(image, NIXL_PROBE, mount=Path(tmp))
    first, *objects = out.strip().splitlines() or [""]
    try:
        probe = json.loads(first)
    except ValueError:
        return Result("nixl wheels", False, f"the import probe printed {out.strip()[:300]!r}")
    transports = probe.get("params", {}).get("transports", "").split(",")
    targets: dict[str, set[str]] = {}
    for line in objects:
        name, _, bundle = line.partition(" ")
        if "amdgcn" in bundle:
            targets.setdefault(name.split(".")[0], set()).add(bundle.rsplit("--", 1)[-1])
    missing = [p for p in ("libuct_rocm.so.0", "libucm_rocm.so.0") if p not in plugins]
    ok = (
        not missing
        and probe.get("same") is True
        and {"rocm_cpy", "rocm_ipc"} <= set(transports)
        and "VRAM" in probe.get("mems", [])
        and sorted(targets) == ["_bindings", "libuct_rocm"]
        and all(t == {arch} for t in targets.values())
    )
    return Result(
        "nixl wheels",
        ok,
        f"{', '.join(names)} install without an index; nixl and nixl_rocm give one nixl_agent"
        f" {'(yes)' if probe.get('same') else '(NO)'}; UCX {probe.get('ucx', '?')} from the wheel"
        f" loads {','.join(transports)} (memory {','.join(probe.get('mems', []))}); UCX modules"
        f" in the wheel: {', '.join(plugins) or 'none'}"
        f"{f' (missing {missing})' if missing else ''}; GPU code for"
        f" {', '.join(f'{k} {sorted(v)}' for k, v in sorted(targets.items())) or 'nothing'}",
    )


def _get(url: str, body: dict | None = None, timeout: float = 5) -> tuple[int, str]:
    """(status, body) of a GET of ``url``, or of a POST of the JSON ``body``."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


# vllm serve's completion: the prompt's words echoed by the stand-in's Triton kernel
COMPLETION = {"model": "rehearsal-model", "prompt": "ROCm serves PyTorch", "max_tokens": 5}
COMPLETION_TEXT = " ROCm serves PyTorch ROCm serves"
# the launchers Triton compiled into the serving user's cache (TRITON_CACHE_DIR, else
# $TRITON_HOME/.triton/cache, TRITON_HOME defaulting to the home directory)
LAUNCHERS = (
    'find "${TRITON_CACHE_DIR:-${TRITON_HOME:-$HOME}/.triton/cache}" -name "__triton_launcher*.so"'
)


def completion_text(body: str) -> str | None:
    """choices[0].text of an OpenAI completion response, None if it has none."""
    try:
        text = json.loads(body)["choices"][0]["text"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return text if isinstance(text, str) else None


def blob_holds(host: str, name: str, layer, needle: bytes) -> bool:
    """Whether the (gzip, zstd or plain) layer blob ``layer`` of ``host``/``name``, read
    from that loopback registry and decompressed as it streams, holds ``needle``."""
    url = f"http://{host}/v2/{name}/blobs/{layer.digest}"
    with urllib.request.urlopen(url, timeout=60) as response:
        if "zstd" in layer.media_type:
            unzstd = subprocess.Popen(
                ["zstd", "-dc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            feeder = threading.Thread(
                target=lambda: (shutil.copyfileobj(response, unzstd.stdin), unzstd.stdin.close())
            )
            feeder.start()
            found = _search(unzstd.stdout, needle)
            unzstd.stdout.close()
            unzstd.kill()
            feeder.join()
            return found
        if "gzip" in layer.media_type:
            return _search(gzip.GzipFile(fileobj=response), needle)
        return _search(response, needle)


def _search(stream, needle: bytes, chunk: int = 1 << 20) -> bool:
    tail = b""
    while block := stream.read(chunk):
        if needle in tail + block:
            return True
        tail = block[-len(needle) :]
    return False


def registry_digest(ref: str) -> str:
    """The digest tag ``ref`` (HOST:PORT/NAME:TAG of a loopback registry) names now."""
    r = Reference.parse(ref)
    request = urllib.request.Request(
        f"http://{r.domain}/v2/{r.repository}/manifests/{r.identifier}",
        method="HEAD",
        headers={"Accept": media.MANIFEST_TYPES},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.headers.get("Docker-Content-Digest", "")
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code}"


def container_exit(container: str, docker: str = "docker") -> int | None:
    """The exit code of ``container`` once it has stopped; None while it runs."""
    proc = subprocess.run(
        [docker, "inspect", "--format", "{{.State.Running}} {{.State.ExitCode}}", container],
        capture_output=True,
        text=True,
        check=False,
    )
    running, _, code = proc.stdout.strip().partition(" ")
    if proc.returncode != 0 or running == "true":
        return None
    return int(code) if code.lstrip("-").isdigit() else -1


def last_lines(container: str, docker: str = "docker", lines: int = 8) -> str:
    """The last ``lines`` lines ``container`` wrote (stdout and stderr), joined by " | "."""
    proc = subprocess.run(
        [docker, "logs", "--tail", str(lines), container],
        capture_output=True,
        text=True,
        check=False,
    )
    out = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    return " | ".join(out[-lines:]) or "(none)"


def check_serving(
    image: str, name: str, port: int, limit: float, *extra: str, docker: str = "docker"
) -> Result:
    """``image`` started with its default command (ENTRYPOINT, user) answers /health on
    loopback ``port`` within ``limit`` seconds, and its own HEALTHCHECK says healthy;
    /v1/models answers, and a /v1/completions request answers 200 with ``choices[0].text``,
    having compiled Triton's launcher into the serving user's Triton cache (the image's C
    compiler and Python.h at run time)."""
    container = f"rehearsal-{name}-{port}"
    # no --rm: a server that dies at start keeps its log until the finally below
    run = [docker, "run", "--detach", "--name", container, "--network", "host"]
    run += ["--env", f"HEALTHCHECK_PORT={port}", image, "rehearsal-model"]
    run += ["--host", "127.0.0.1", "--port", str(port), *extra]
    started = subprocess.run(run, capture_output=True, text=True, check=False)
    if started.returncode != 0:
        return Result(
            f"{name} serves",
            False,
            f"docker run exited {started.returncode}: {started.stderr[-400:]}",
        )
    begin = time.monotonic()
    try:
        status, took = 0, 0.0
        while time.monotonic() - begin < limit:
            try:
                status, _ = _get(f"http://127.0.0.1:{port}/health")
            except OSError:
                status = 0
            if status == 200:
                took = time.monotonic() - begin
                break
            exited = container_exit(container, docker)
            if exited is not None:
                return Result(
                    f"{name} serves",
                    False,
                    f"the server exited with code {exited} after"
                    f" {time.monotonic() - begin:.1f}s, before /health answered; its last log"
                    f" lines: {last_lines(container, docker)}",
                )
            time.sleep(0.5)
        logs = subprocess.run(
            [docker, "logs", container], capture_output=True, text=True, check=False
        )
        if status != 200:
            return Result(
                f"{name} serves",
                False,
                f"no 200 from /health on 127.0.0.1:{port} within {limit:.0f}s;"
                f" logs: {(logs.stdout + logs.stderr)[-600:]}",
            )
        fmt = "{{json .Config.Healthcheck.Test}} {{.Config.User}}"
        inspect = subprocess.run(
            [docker, "inspect", "--format", fmt, container],
            capture_output=True, text=True, check=True,
        ).stdout.split(" ", 1)  # fmt: skip
        test, user = json.loads(inspect[0]), inspect[1].strip()
        command = test[1:] if test and test[0] == "CMD" else ["sh", "-c", *test[1:]]
        health = subprocess.run(
            [docker, "exec", container, *command], capture_output=True, text=True, check=False
        )
        models_status, models = _get(f"http://127.0.0.1:{port}/v1/models")
        try:
            status, body = _get(f"http://127.0.0.1:{port}/v1/completions", COMPLETION, 60)
        except OSError as e:
            status, body = 0, str(e)
        text = completion_text(body) if status == 200 else None
        found = subprocess.run(
            [docker, "exec", container, "sh", "-c", LAUNCHERS],
            capture_output=True, text=True, check=False,
        ).stdout.split()  # fmt: skip
        logs = subprocess.run(
            [docker, "logs", container], capture_output=True, text=True, check=False
        )
        ok = health.returncode == 0 and user == "1001" and models_status == 200
        ok = ok and text == COMPLETION_TEXT and bool(found)
        detail = (
            f"/v1/completions {status} choices[0].text {text!r}; launcher {found[0]}"
            if text is not None and found
            else f"/v1/completions {status} {body[:200]!r}; launchers in the Triton cache:"
            f" {found or 'none'}; logs: {(logs.stdout + logs.stderr)[-600:]}"
        )
        return Result(
            f"{name} serves",
            ok,
            f"`{' '.join(run[-6 - len(extra) :])}` as user {user}: /health 200 after {took:.1f}s"
            f" (limit {limit:.0f}s); HEALTHCHECK `{' '.join(command)}` exit {health.returncode};"
            f" /v1/models {models_status} {models[:120]}; {detail}",
        )
    finally:
        subprocess.run([docker, "rm", "--force", container], capture_output=True, check=False)


def _wheel_pins(wheelhouse: Path) -> dict[str, str]:
    """project -> ``name==version`` of every wheel in ``wheelhouse``."""
    pins = {}
    for wheel in sorted(wheelhouse.glob("*.whl")):
        name, version = wheel.name.split("-")[:2]
        pins[name.replace("_", "-").lower()] = f"{name.replace('_', '-')}=={version}"
    return pins


# The platforms a wheel of PyPI may be built for to install in the family's images.
_PLATFORMS = (
    "linux_x86_64",
    "manylinux2014_x86_64",
    *(f"manylinux_2_{n}_x86_64" for n in (17, 24, 27, 28, 31, 34, 35, 36, 38, 39, 40)),
)


def download_dependencies(wheelhouse: Path, deps: Path, projects: list[str], python: str) -> None:
    """Into ``deps``: what ``projects`` of ``wheelhouse`` need from PyPI (through this host's
    mirror settings), for CPython ``python``, every project of the wheelhouse held to its wheel."""
    from tools.mirrors import secrets, settings

    resolved = secrets.resolve(settings.load())
    pins = _wheel_pins(wheelhouse)
    constraints = deps.with_suffix(".constraints.txt")
    constraints.write_text("".join(f"{pin}\n" for pin in pins.values()))
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(deps)]
    cmd += ["--only-binary=:all:", "--implementation", "cp", "--python-version", python]
    cmd += [a for platform in _PLATFORMS for a in ("--platform", platform)]
    cmd += ["--find-links", str(wheelhouse), "--constraint", str(constraints)]
    if resolved.pip.index_url:
        cmd += ["--index-url", resolved.pip.index_url]
    cmd += [a for url in resolved.pip.extra_index_urls for a in ("--extra-index-url", url)]
    cmd += [a for host in resolved.pip.trusted_hosts for a in ("--trusted-host", host)]
    if resolved.ca_bundle:
        cmd += ["--cert", resolved.ca_bundle]
    proc = subprocess.run(
        [*cmd, *(pins[p] for p in projects)],
        env={**os.environ, "PIP_CONFIG_FILE": os.devnull},
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise CheckError(f"pip download of {projects}' dependencies: {proc.stderr[-800:]}")
    for wheel in wheelhouse.glob("*.whl"):  # the wheelhouse's own stay there only
        (deps / wheel.name).unlink(missing_ok=True)


def check_wheelhouse(runtime: str, wheelhouse: Path, deps: Path, projects: list[str]) -> Result:
    """``projects`` install from ``wheelhouse`` (and ``deps``, their PyPI dependencies)
    with no index, in a clean virtual environment of ``runtime``, and import."""
    house = _wheel_pins(wheelhouse)
    pins = [house[p] for p in projects]
    imports = ", ".join(p.replace("-", "_") for p in projects)
    with tempfile.TemporaryDirectory() as tmp:
        for src, dest in ((wheelhouse, "wheelhouse"), (deps, "deps")):
            shutil.copytree(src, Path(tmp) / dest)
        os.chmod(tmp, 0o755)
        out = run_in(
            runtime,
            "python -m venv /tmp/clean && /tmp/clean/bin/pip install --quiet --no-index"
            f" --find-links /w/wheelhouse --find-links /w/deps {' '.join(pins)}"
            f" && /tmp/clean/bin/python -c 'import {imports}; print(\"imported\")'"
            " && /tmp/clean/bin/pip list --format=freeze",
            mount=Path(tmp),
            entrypoint="",
        )
    installed = [line for line in out.splitlines() if "==" in line]
    ok = "imported" in out and all(pin in installed for pin in pins)
    ours = [line for line in installed if line.split("==")[0].lower() in house]
    return Result(
        "wheelhouse installs",
        ok,
        f"pip install --no-index {' '.join(pins)} in a clean venv of runtime: {len(installed)}"
        f" packages, {len(ours)} of them from the wheelhouse ({', '.join(ours)})",
    )


OUTSIDE = """/usr/bin/pythonVERSION -m venv /tmp/clean \\
    && /tmp/clean/bin/pip install --quiet --no-index --find-links /w/wheelhouse \\
    --find-links /w/deps PIN && echo installed
/tmp/clean/bin/python -c 'import torch' 2>/tmp/err; echo "import exit $?"; tail -n 1 /tmp/err
"""
MISSING = re.compile(r"ImportError: (lib[^:/\s]+\.so[.0-9]*): cannot open shared object file")


def check_outside_images(
    runtime: str, wheelhouse: Path, deps: Path, python: str, docker: str = "docker"
) -> Result:
    """The torch wheel of ``wheelhouse`` on a host without the family's ROCm (runtime's
    /opt hidden by an empty tmpfs: no ROCm, no venv; its system Python stays): pip installs
    it, and `import torch` fails in one line naming a library of runtime's /opt/rocm/lib
    (docs/wheelhouse.md, "What the wheels need")."""
    pin = _wheel_pins(wheelhouse)["torch"]
    with tempfile.TemporaryDirectory() as tmp:
        for src, dest in ((wheelhouse, "wheelhouse"), (deps, "deps")):
            shutil.copytree(src, Path(tmp) / dest)
        os.chmod(tmp, 0o755)
        proc = subprocess.run(
            [docker, "run", "--rm", "--network", "none", "--tmpfs", "/opt", "--volume",
             f"{tmp}:/w:ro", "--entrypoint", "", runtime, "bash", "-c",
             OUTSIDE.replace("PIN", pin).replace("VERSION", python)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    out = proc.stdout.strip().splitlines()
    last = out[-1] if out else ""
    missing = MISSING.search(last)
    rocm = ""
    if missing:
        rocm = run_in(
            runtime, f"ls /opt/rocm/lib/{missing.group(1)} 2>/dev/null || true", entrypoint=""
        ).strip()
    ok = "installed" in out and "import exit 1" in out and bool(missing) and bool(rocm)
    return Result(
        "torch wheel outside the images",
        ok,
        f"with runtime's /opt hidden, pip install --no-index {pin}:"
        f" {'installed' if 'installed' in out else 'FAILED ' + proc.stderr[-300:]}; import torch:"
        f" {last or proc.stderr[-300:]!r}"
        f"{f' ({rocm} in the image)' if rocm else ' (not a library of its /opt/rocm/lib)'}",
    )


def run(arch: str, upstream: Path, runtime: Path, base: Path) -> list[Result]:
    loaded = {
        "upstream": desc.load(upstream),
        "runtime": desc.load(runtime),
        "base": desc.load(base),
    }
    images = {name: d.staging_ref for name, d in loaded.items()}
    results = [check_rocm_outside(images["upstream"])]
    results += [check_kernels(images["runtime"], arch), fat_binaries(images["runtime"])]
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
    p.add_argument(
        "--arch",
        required=True,
        help="the arch rocm-runtime and base were built for (a family: its members, `;`-separated)",
    )
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
