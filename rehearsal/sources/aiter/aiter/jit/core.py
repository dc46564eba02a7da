"""aiter's module builder (rehearsal stand-in): hipcc, for the archs of GPU_ARCHS.

setup.py imports this file without importing aiter (PREBUILD_KERNELS builds
the modules into the wheel); at run time aiter.get_module() imports a
prebuilt module or builds it first (JIT), from the sources the wheel ships
in aiter_meta.
"""

import concurrent.futures
import functools
import importlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

this_dir = os.path.dirname(os.path.abspath(__file__))
AITER_ROOT_DIR = os.path.abspath(f"{this_dir}/../../")
# Installed: the sources are in site-packages/aiter_meta; in the source tree: the root.
AITER_META_DIR = os.environ.get("AITER_META_DIR") or os.path.join(AITER_ROOT_DIR, "aiter_meta")
if not os.path.isdir(os.path.join(AITER_META_DIR, "csrc")):
    AITER_META_DIR = AITER_ROOT_DIR
AITER_CSRC_DIR = f"{AITER_META_DIR}/csrc"
CK_DIR = os.environ.get("CK_DIR", f"{AITER_META_DIR}/3rdparty/composable_kernel")
ROCM_PATH = os.environ.get("ROCM_PATH", "/opt/rocm")
HIPCC = os.path.join(ROCM_PATH, "bin", "hipcc")
ALLOWED_ARCHS = [
    "native",
    "gfx90a",
    "gfx940",
    "gfx941",
    "gfx942",
    "gfx1100",
    "gfx1101",
    "gfx1102",
    "gfx1103",
    "gfx1150",
    "gfx1151",
    "gfx1152",
    "gfx1153",
    "gfx1200",
    "gfx1201",
    "gfx950",
]


def get_user_jit_dir() -> str:
    """Where modules are built to and imported from: the package if writable."""
    if "AITER_JIT_DIR" in os.environ:
        path = os.environ["AITER_JIT_DIR"]
        os.makedirs(path, exist_ok=True)
        return path
    if os.access(this_dir, os.W_OK):
        return this_dir
    return os.path.join(os.path.expanduser("~"), ".aiter", "jit")


def validate_and_update_archs() -> list[str]:
    """GPU_ARCHS (default native: rocminfo's first GPU), each one checked."""
    archs = [a.strip() for a in os.getenv("GPU_ARCHS", "native").split(";") if a.strip()]
    if archs == ["native"]:
        try:
            out = subprocess.run(
                [os.path.join(ROCM_PATH, "bin", "rocminfo")], capture_output=True, text=True
            ).stdout
        except OSError as e:
            raise RuntimeError(f"GPU_ARCHS=native: rocminfo failed: {e}") from e
        found = [w for line in out.splitlines() for w in line.split() if w.startswith("gfx")]
        if not found:
            raise RuntimeError("GPU_ARCHS=native: rocminfo shows no GPU; set GPU_ARCHS")
        archs = found[:1]
    bad = [a for a in archs if a not in ALLOWED_ARCHS]
    assert not bad, f"One of GPU archs of {archs} is invalid or not supported"
    return archs


def _config() -> dict:
    with open(os.path.join(this_dir, "optCompilerConfig.json")) as f:
        return json.load(f)


def _fill(value):
    where = {"AITER_CSRC_DIR": AITER_CSRC_DIR, "CK_DIR": CK_DIR}
    if isinstance(value, list):
        return [_fill(v) for v in value]
    return value.format(**where) if isinstance(value, str) else value


def get_args_of_build(md_name: str, exclude: list[str] | None = None):
    """One module's build arguments, or with "all" every module's but ``exclude``'s."""
    config = _config()
    if md_name == "all":
        return [get_args_of_build(n) for n in config if n not in (exclude or [])]
    if md_name not in config and md_name.startswith(MHA_VARLEN_FWD + "_"):
        return mha_varlen_fwd_variant(md_name)
    return {"md_name": md_name, **{k: _fill(v) for k, v in config[md_name].items()}}


MHA_VARLEN_FWD = "mha_varlen_fwd"
# The variants PREBUILD_KERNELS=1 builds (aiter's setup.py names the same two).
MHA_VARLEN_FWD_PREBUILT = (
    "mha_varlen_fwd_bf16_nlogits_nbias_mask_nlse_ndropout_nskip_nqscale",
    "mha_varlen_fwd_bf16_nlogits_nbias_nmask_lse_ndropout_nskip_nqscale",
)


def mha_varlen_fwd_variant(md_name: str, receipt: int = 200) -> dict:
    """A variant of module_mha_varlen_fwd holding only the CK kernels its name says:
    mha_varlen_fwd_bf16_nlogits_nbias_mask_nlse_ndropout_nskip_nqscale."""
    tokens = md_name[len(MHA_VARLEN_FWD) + 1 :].split("_")
    kernel_filter = f"*{tokens[0]}*" + "".join(f"_{t}*" for t in tokens[1:])
    generate = "{CK_DIR}/example/ck_tile/01_fmha/generate.py"
    args = get_args_of_build("module_" + MHA_VARLEN_FWD)
    args["md_name"] = md_name
    args["blob_gen_cmd"] = _fill(
        [
            f"{generate} -d fwd --receipt {receipt} --filter {kernel_filter} --output_dir {{{{}}}}",
            f'{generate} -d fwd_splitkv --receipt {receipt} --filter " @ " --output_dir {{{{}}}}',
        ]
    )
    return args


def hip_version() -> str:
    try:
        import torch

        return (torch.version.hip or "0").split("-")[0]
    except ImportError:
        return "0"


def _newer(version: str, than: str) -> bool:
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in v.split(".") if p.isdigit())

    return key(version) > key(than)


@functools.lru_cache
def _hip_flag_ok(flag: str) -> bool:
    """Whether this hipcc takes ``flag`` (aiter drops the ones it does not)."""
    cmd = [HIPCC, *shlex.split(flag), "-x", "hip", "-E", "-P", "/dev/null", "-o", "/dev/null"]
    ok = subprocess.run(cmd, capture_output=True).returncode == 0
    if not ok:
        print(f"[aiter] this hipcc does not take {flag}, skipping it", flush=True)
    return ok


def hip_flags(archs: list[str]) -> list[str]:
    flags = [
        "-D__HIP_PLATFORM_AMD__=1",
        "-U__HIP_NO_HALF_CONVERSIONS__",
        "-fgpu-flush-denormals-to-zero",
        "-mllvm --amdgpu-kernarg-preload-count=16",
    ]
    # The CK settings by HIP version, as aiter (and CK's CMakeLists) set them.
    hip = hip_version()
    if _newer(hip, "5.5"):
        flags.append("-mllvm --lsr-drop-solution=1")
    if _newer(hip, "6.1.40090"):
        flags.append("-mllvm -enable-post-misched=0")
    if _newer(hip, "6.2.41133"):
        flags.append("-mllvm -amdgpu-coerce-illegal-types=1")
    return [f for f in flags if _hip_flag_ok(f)] + [f"--offload-arch={a}" for a in archs]


def build_module(
    md_name, srcs, flags_extra_cc, flags_extra_hip, blob_gen_cmd, extra_include, prebuilt=False
) -> str:
    """Compile one module with hipcc into get_user_jit_dir(); its path."""
    archs = validate_and_update_archs()
    op_dir = os.path.join(get_user_jit_dir(), "build", md_name)
    shutil.rmtree(op_dir, ignore_errors=True)
    blob_dir = os.path.join(op_dir, "blob")
    os.makedirs(blob_dir)
    sources = list(srcs)
    for cmd in [blob_gen_cmd] if isinstance(blob_gen_cmd, str) else blob_gen_cmd:
        if cmd:
            subprocess.run([sys.executable, *shlex.split(cmd.format(blob_dir))], check=True)
    sources += sorted(os.path.join(blob_dir, f) for f in os.listdir(blob_dir))
    import torch  # the torch the module is built for, and links

    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    target = os.path.join(op_dir, f"{md_name}.so")
    # Prebuilt modules sit in site-packages/aiter/jit, beside site-packages/torch.
    rpath = "$ORIGIN/../../torch/lib" if prebuilt else torch_lib
    cmd = [
        HIPCC,
        "-shared",
        "-fPIC",
        "-O3",
        "-std=c++20",
        *flags_extra_cc,
        *(p for f in hip_flags(archs) + list(flags_extra_hip) for p in shlex.split(f)),
        f"-DTORCH_EXTENSION_NAME={md_name}",
        f'-DAITER_GPU_ARCHS="{";".join(archs)}"',
        f"-I{sysconfig.get_paths()['include']}",
        f"-I{AITER_CSRC_DIR}/include",
        f"-I{CK_DIR}/include",
        f"-I{blob_dir}",
        *(f"-I{i}" for i in extra_include),
        "-x",
        "hip",
        *sources,
        "-o",
        target,
        f"-L{torch_lib}",
        "-ltorch_hip",
        f"-Wl,-rpath,{rpath}",
    ]
    print(f"[aiter] build [{md_name}]: {' '.join(cmd)}", flush=True)
    subprocess.run(cmd, check=True)
    shutil.copy(target, get_user_jit_dir())
    return os.path.join(get_user_jit_dir(), f"{md_name}.so")


def build_modules(all_args: list[dict], threads: int, prebuilt: bool) -> None:
    def one(args: dict) -> str:
        return build_module(
            args["md_name"],
            args["srcs"],
            args["flags_extra_cc"],
            args["flags_extra_hip"],
            args["blob_gen_cmd"],
            args["extra_include"],
            prebuilt=prebuilt,
        )

    with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as pool:
        for path in pool.map(one, all_args):
            print(f"[aiter] built {path}", flush=True)


_modules: dict = {}


def get_module(md_name: str):
    """The module, imported from the JIT directory; built first (JIT) when absent."""
    if md_name not in _modules:
        jit_dir = get_user_jit_dir()
        if not os.path.exists(os.path.join(jit_dir, f"{md_name}.so")):
            print(f"[aiter] {md_name} is not prebuilt: building it (JIT)", flush=True)
            build_module(**get_args_of_build(md_name))
        if jit_dir == this_dir:
            _modules[md_name] = importlib.import_module(f"{__package__}.{md_name}")
        else:
            sys.path.insert(0, jit_dir)
            _modules[md_name] = importlib.import_module(md_name)
    return _modules[md_name]
