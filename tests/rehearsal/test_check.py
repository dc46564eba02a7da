"""tools/rehearsal/check.py's reading of what the images print (docker run faked)."""

from __future__ import annotations

import socket
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from tools.rehearsal import check

PRUNE = Path("docker/scripts/prune-rocm-arch.sh")  # runfiles path


@pytest.mark.parametrize(
    "arch", ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1151", "gfx1201", "gfx1030"]
)
def test_generic_targets_agree_with_the_prune_script(arch):
    # the script's own table: source it and call generic_targets
    script = f'eval "$(sed -n "/^generic_targets()/,/^}}/p" {PRUNE})"; generic_targets {arch}'
    out = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert check.generic_target(arch) == out


def fake(monkeypatch, outputs: dict[str, str]):
    def run_in(image, script, docker="docker"):
        for marker, out in outputs.items():
            if marker in script:
                return out
        raise AssertionError(script)

    monkeypatch.setattr(check, "run_in", run_in)


def test_kernel_files_of_the_arch_and_its_generic_target_pass(monkeypatch):
    fake(
        monkeypatch,
        {
            "find /opt/rocm/": "/opt/rocm/lib/rocblas/library/Kernels.so-000-gfx1100.hsaco\n"
            "/opt/rocm/lib/hipblaslt/library/x_gfx11-generic.co\n"
        },
    )
    r = check.check_kernels("img", "gfx1100")
    assert r.ok and "rocBLAS 1, hipBLASLt 1, MIOpen 0" in r.detail


def test_another_archs_kernel_fails(monkeypatch):
    fake(
        monkeypatch,
        {
            "find /opt/rocm/": "/opt/rocm/lib/rocblas/library/Kernels.so-000-gfx1100.hsaco\n"
            "/opt/rocm/share/miopen/db/gfx942130.kdb\n"
        },
    )
    r = check.check_kernels("img", "gfx1100")
    assert not r.ok and "share/miopen/db" in r.detail and "gfx942130" in r.detail


def test_no_rocblas_kernel_fails(monkeypatch):
    fake(monkeypatch, {"find /opt/rocm/": "/opt/rocm/lib/hipblaslt/library/x_gfx1100.co\n"})
    assert not check.check_kernels("img", "gfx1100").ok


def test_a_familys_kernel_files_are_exactly_its_members(monkeypatch):
    tree = (
        "/opt/rocm/lib/rocblas/library/Kernels.so-000-gfx1100.hsaco\n"
        "/opt/rocm/lib/rocblas/library/Kernels.so-000-gfx1101.hsaco\n"
        "/opt/rocm/share/miopen/db/gfx1101_30.kdb\n"
    )
    fake(monkeypatch, {"find /opt/rocm/": tree})
    assert check.check_kernels("img", "gfx1100;gfx1101").ok
    # a member without rocBLAS kernels of its own fails, naming it
    r = check.check_kernels("img", "gfx1100;gfx1101;gfx1102")
    assert not r.ok and "no rocBLAS kernel file for gfx1102" in r.detail
    # a non-member's kernel fails
    fake(monkeypatch, {"find /opt/rocm/": tree + "/opt/rocm/lib/rocblas/library/x-gfx1102.co\n"})
    r = check.check_kernels("img", "gfx1100;gfx1101")
    assert not r.ok and "gfx1102" in r.detail


def test_hipcc_wants_a_code_object_per_member_of_a_family(monkeypatch):
    out = (
        "Extracting offload bundle: k.o.0.hipv4-amdgcn-amd-amdhsa--gfx1100\n"
        "Extracting offload bundle: k.o.0.hipv4-amdgcn-amd-amdhsa--gfx1101\n"
        "  Machine:                           EM_AMDGPU\n"
        "  Flags:                             0x41, gfx1100\n"
        "  Machine:                           EM_AMDGPU\n"
        "  Flags:                             0x42, gfx1101\n"
    )
    scripts = []

    def run_in(image, script, docker="docker"):
        scripts.append(script)
        return out

    monkeypatch.setattr(check, "run_in", run_in)
    assert check.check_hipcc("img", "gfx1100;gfx1101").ok
    assert "--offload-arch=gfx1100 --offload-arch=gfx1101 -c" in scripts[0]
    assert not check.check_hipcc("img", "gfx1100;gfx1101;gfx1102").ok


def test_loader_and_arch(monkeypatch):
    fake(
        monkeypatch,
        {"ldconfig": "\tlibamdhip64.so.7 => /x\n\tlibrocblas.so.5 => /y\ngpu-arch=gfx1100\n"},
    )
    assert check.check_loader("img", "gfx1100").ok
    fake(monkeypatch, {"ldconfig": "\tlibamdhip64.so.7 => /x\ngpu-arch=gfx950\n"})
    r = check.check_loader("img", "gfx1100")
    assert not r.ok and "librocblas.so" in r.detail and "gfx950" in r.detail


def test_hipcc_wants_one_code_object_for_the_arch(monkeypatch):
    good = (
        "Extracting offload bundle: k.o.0.host-x86_64-unknown-linux-gnu-\n"
        "Extracting offload bundle: k.o.0.hipv4-amdgcn-amd-amdhsa--gfx1100\n"
        "  Machine:                           EM_AMDGPU\n"
        "  Flags:                             0x41, gfx1100\n"
    )
    fake(monkeypatch, {"hipcc": good})
    assert check.check_hipcc("img", "gfx1100").ok
    fake(monkeypatch, {"hipcc": good.replace("0x41, gfx1100", "0x4c, gfx942")})
    assert not check.check_hipcc("img", "gfx1100").ok


NIXL_WHEELS = ["nixl-7.7.7-py3-none-any.whl", "nixl_rocm-7.7.7-cp321-cp321-linux_x86_64.whl"]
NIXL_PROBE_OUT = (
    '{"same": true, "ucx": "1.19.0", "params": {"transports": "cma,rocm_cpy,rocm_ipc",'
    ' "mem_hooks": "rocm", "ucx_version": "1.19.0"}, "mems": ["DRAM", "VRAM"]}\n'
    "_bindings.cpython-314-x86_64-linux-gnu.so host-x86_64-unknown-linux-gnu-\n"
    "_bindings.cpython-314-x86_64-linux-gnu.so hipv4-amdgcn-amd-amdhsa--gfx1100\n"
    "libuct_rocm.so.0 hipv4-amdgcn-amd-amdhsa--gfx1100\n"
)


def fake_nixl(monkeypatch, wheels, plugins, probe_out):
    def copy_out(image, path, dest, docker="docker"):
        out = dest / "wheels"
        out.mkdir()
        for name in wheels:
            with zipfile.ZipFile(out / name, "w") as z:
                z.writestr("nixl_rocm/__init__.py", "")
                for p in plugins if name.startswith("nixl_rocm-") else []:
                    z.writestr(f"nixl_rocm.libs/ucx/{p}", "")
        return out

    monkeypatch.setattr(check, "copy_out", copy_out)
    monkeypatch.setattr(check, "run_in", lambda image, script, **kw: probe_out)


def test_nixl_wheels_with_ucx_rocm_modules_inside_pass(monkeypatch):
    fake_nixl(monkeypatch, NIXL_WHEELS, ["libucm_rocm.so.0", "libuct_rocm.so.0"], NIXL_PROBE_OUT)
    r = check.check_nixl_wheel("pytorch", "nixl-wheel", "7.7.7", "3.21", "gfx1100")
    assert r.ok, r.detail
    assert "loads cma,rocm_cpy,rocm_ipc" in r.detail and "libuct_rocm.so.0" in r.detail


def test_nixl_wheel_without_the_rocm_modules_fails(monkeypatch):
    fake_nixl(monkeypatch, NIXL_WHEELS, ["libuct_cma.so.0"], NIXL_PROBE_OUT)
    r = check.check_nixl_wheel("pytorch", "nixl-wheel", "7.7.7", "3.21", "gfx1100")
    assert not r.ok and "missing ['libuct_rocm.so.0', 'libucm_rocm.so.0']" in r.detail


def test_nixl_without_rocm_transports_or_for_another_arch_fails(monkeypatch):
    plugins = ["libucm_rocm.so.0", "libuct_rocm.so.0"]
    fake_nixl(monkeypatch, NIXL_WHEELS, plugins, NIXL_PROBE_OUT.replace(",rocm_cpy,rocm_ipc", ""))
    assert not check.check_nixl_wheel("p", "w", "7.7.7", "3.21", "gfx1100").ok
    fake_nixl(
        monkeypatch, NIXL_WHEELS, plugins, NIXL_PROBE_OUT.replace("--gfx1100\nlib", "--gfx942\nlib")
    )
    r = check.check_nixl_wheel("p", "w", "7.7.7", "3.21", "gfx1100")
    assert not r.ok and "_bindings ['gfx942']" in r.detail


def test_nixl_wheels_named_otherwise_fail(monkeypatch):
    fake_nixl(monkeypatch, NIXL_WHEELS[1:], [], NIXL_PROBE_OUT)
    r = check.check_nixl_wheel("p", "w", "7.7.7", "3.21", "gfx1100")
    assert not r.ok and "/wheels holds" in r.detail


def test_amd_smi_wants_the_driver_not_loaded_answer_from_rocms_library(monkeypatch):
    good = (
        "184\nversion 7.0.2 library /opt/rocm-10.1.0/lib/libamd_smi.so\n"
        "init raised 34 AMDSMI_STATUS_DRIVER_NOT_LOADED\n"
    )
    fake(monkeypatch, {"libamd_smi.so": good})
    r = check.check_amd_smi("img")
    assert r.ok and "amdsmi 7.0.2" in r.detail and "184 functions" in r.detail
    fake(monkeypatch, {"libamd_smi.so": good.replace("raised 34", "raised 18")})
    assert not check.check_amd_smi("img").ok
    fake(monkeypatch, {"libamd_smi.so": good.replace("/opt/rocm-10.1.0/lib", "/usr/lib")})
    assert not check.check_amd_smi("img").ok


def test_completion_text_is_the_first_choices_text():
    body = '{"object": "text_completion", "choices": [{"index": 0, "text": " a b"}]}'
    assert check.completion_text(body) == " a b"
    for bad in ("", "{}", '{"choices": []}', '{"choices": [{"text": 3}]}', '{"error": {}}'):
        assert check.completion_text(bad) is None


def fake_docker(tmp_path: Path, logs: str, exit_after: int) -> Path:
    """A docker CLI whose container runs for ``exit_after`` inspects, then exits 1."""
    state = tmp_path / "inspects"
    state.write_text("0")
    script = tmp_path / "docker"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        "  run) echo cid ;;\n"
        f"  inspect) n=$(cat {state}); echo $((n + 1)) > {state};"
        f' if [ "$n" -ge {exit_after} ]; then echo "false 1"; else echo "true 0"; fi ;;\n'
        f"  logs) printf '%s\\n' {logs!r} ;;\n"
        "  rm) ;;\n"
        "esac\n"
    )
    script.chmod(0o755)
    return script


def test_a_server_that_dies_at_start_is_reported_with_its_log_at_once(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    logs = (
        "Traceback (most recent call last):\n"
        "ImportError: libMIOpen.so.1: cannot open shared object file"
    )
    docker = fake_docker(tmp_path, logs, exit_after=2)
    start = time.monotonic()
    result = check.check_serving("img", "vllm", port, 60, docker=str(docker))
    took = time.monotonic() - start
    assert not result.ok
    assert "exited with code 1" in result.detail
    assert "ImportError: libMIOpen.so.1" in result.detail
    assert "No such container" not in result.detail
    assert took < 10, f"waited {took:.0f}s for a container that had exited"


def test_a_rocm_library_outside_opt_rocm_is_named(tmp_path):
    # the check's own script, run by sh on a fake root: /opt/rocm/lib and a link elsewhere
    root = tmp_path / "root"
    (root / "opt/rocm-10.1.0/lib").mkdir(parents=True)
    (root / "opt/rocm").symlink_to("rocm-10.1.0")
    (root / "opt/rocm-10.1.0/lib/libamdhip64.so.7").write_text("")
    (root / "usr/lib/x86_64-linux-gnu").mkdir(parents=True)
    (root / "usr/lib/x86_64-linux-gnu/libz.so.1").write_text("")

    def run_in(image, script, docker="docker", mount=None, entrypoint=None):
        script = script.replace("/opt/", f"{root}/opt/").replace("find / ", f"find {root} ")
        script = script.replace("/tmp/rocm-names", str(tmp_path / "names"))
        return subprocess.run(["sh", "-c", script], capture_output=True, text=True).stdout

    check.run_in, saved = run_in, check.run_in
    try:
        clean = check.check_rocm_outside("img")
        (root / "usr/lib/x86_64-linux-gnu/libamdhip64.so.7").symlink_to(
            "/opt/rocm/lib/libamdhip64.so.7"
        )
        linked = check.check_rocm_outside("img")
    finally:
        check.run_in = saved
    assert clean.ok and "none of its 1 library files" in clean.detail, clean
    assert not linked.ok
    assert linked.detail == f"elsewhere: {root}/usr/lib/x86_64-linux-gnu/libamdhip64.so.7"


def test_a_removal_counts_as_noticed_only_when_a_failure_names_it():
    from tools.imagecheck.check import Result
    from tools.rehearsal import breakage

    lib = breakage.Removal("libMIOpen.so.1", ("/opt/rocm-10.1.0/lib/libMIOpen.so.1.0",))
    kernels = breakage.Removal("rocBLAS has no kernels for gfx1100", ("/opt/rocm/lib/x",))
    loader = Result("torch loads", False, "import torch: libMIOpen.so.1: cannot open shared object")
    assert breakage.named([loader], lib)
    assert not breakage.named([Result("torch loads", True, "libMIOpen.so.1 (linked)")], lib)
    assert not breakage.named([loader], kernels)
    gap = Result("rocBLAS kernels for gfx1100", False, "rocBLAS has no kernels for gfx1100 in ...")
    assert breakage.named([gap], kernels)
