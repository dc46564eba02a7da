"""tools/rehearsal/layout.py on a small Debian-shaped root file system (no chroot, no ldconfig)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.rehearsal import layout

ROCM = {
    "librocblas5": [
        "usr/lib/x86_64-linux-gnu/librocblas.so.5",
        "usr/lib/x86_64-linux-gnu/rocblas/5/library/Kernels.so-000-gfx1100.hsaco",
        "usr/lib/x86_64-linux-gnu/rocblas/5/library/TensileLibrary_lazy_gfx942.dat",
    ],
    "libamdhip64-dev": [
        "usr/include/hip/hip_runtime.h",
        "usr/lib/x86_64-linux-gnu/cmake/hip/hip-config.cmake",
    ],
    "hipcc": ["usr/bin/hipcc", "usr/share/doc/hipcc/copyright"],
    "libmiopen1": ["usr/share/miopen/db/gfx1100_48.kdb"],
    "rocm-device-libs-22": ["usr/lib/llvm-22/lib/clang/22/amdgcn/bitcode/ocml.bc"],
}
OTHER = {
    "libc6": ["usr/lib/x86_64-linux-gnu/libc.so.6", "usr/include/stdio.h", "usr/bin/ldd"],
    "cmake-data": ["usr/lib/x86_64-linux-gnu/cmake/other/other-config.cmake"],
}
SOURCES = "deb http://debian.invalid/debian sid main\n"
PREFS = "Package: hipcc\nPin: release a=experimental\nPin-Priority: 990\n"


def make_root(tmp_path) -> tuple[Path, dict]:
    root = tmp_path / "root"
    status, packages = [], {}
    for name, files in {**ROCM, **OTHER}.items():
        for rel in files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(rel)
        info = root / "var/lib/dpkg/info"
        info.mkdir(parents=True, exist_ok=True)
        dirs = {"/" + str(Path(f).parent) for f in files}
        (info / f"{name}.list").write_text(
            "/.\n" + "".join(f"{d}\n" for d in sorted(dirs)) + "".join(f"/{f}\n" for f in files)
        )
        status.append(f"Package: {name}\nStatus: install ok installed\nVersion: 1.0-{name}\n")
        packages[name] = f"1.0-{name}"
    (root / "var/lib/dpkg/status").write_text("\n".join(status))
    for rel, text in {
        "etc/apt/apt.conf.d/99mmdebstrap": 'Dir::Etc::netrc "/root/secret.netrc";\n',
        "etc/apt/sources.list": "deb http://mirror.example/debian sid main\n",
        "etc/hostname": "buildhost\n",
        "etc/resolv.conf": "nameserver 10.0.0.1\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root, {"packages": packages, "rocm": {"packages": sorted(ROCM)}}


def run(root, lock):
    return layout.layout(root, "10.1.0", lock, SOURCES, PREFS, ldconfig=False)


def test_amds_layout_no_rocm_library_at_debians_paths(tmp_path):
    root, lock = make_root(tmp_path)
    report = run(root, lock)
    opt = root / "opt/rocm-10.1.0"
    assert os.readlink(root / "opt/rocm") == "rocm-10.1.0"
    # libraries, kernel directories (version directory dropped), headers, tools, databases
    assert (opt / "lib/librocblas.so.5").is_file() and not (
        opt / "lib/librocblas.so.5"
    ).is_symlink()
    assert (opt / "lib/rocblas/library/Kernels.so-000-gfx1100.hsaco").is_file()
    assert os.readlink(opt / "lib/rocblas/5/library") == "../library"
    assert (opt / "include/hip/hip_runtime.h").is_file() and (opt / "bin/hipcc").is_file()
    assert (opt / "share/miopen/db/gfx1100_48.kdb").is_file()
    assert (opt / "lib/cmake/hip/hip-config.cmake").is_file()
    # as in AMD's image, nothing of ROCm's lib/ at Debian's multiarch path, not even a link
    for rel in ("librocblas.so.5", "rocblas", "cmake/hip"):
        assert not os.path.lexists(root / "usr/lib/x86_64-linux-gnu" / rel), rel
    # headers and programs: links at Debian's paths
    assert os.readlink(root / "usr/include/hip") == "/opt/rocm-10.1.0/include/hip"
    assert os.readlink(root / "usr/bin/hipcc") == "/opt/rocm-10.1.0/bin/hipcc"
    assert (opt / "lib/rocblas/5/library/TensileLibrary_lazy_gfx942.dat").is_file()  # Debian's path
    # what is not ROCm's stays, and so does a directory shared with others
    for rel in ("usr/lib/x86_64-linux-gnu/libc.so.6", "usr/include/stdio.h", "usr/bin/ldd"):
        assert (root / rel).is_file() and not (root / rel).is_symlink()
    assert not (root / "usr/lib/x86_64-linux-gnu/cmake").is_symlink()
    assert (root / "usr/lib/x86_64-linux-gnu/cmake/other/other-config.cmake").is_file()
    assert (root / "usr/share/doc/hipcc/copyright").is_file()  # docs stay where Debian has them
    # the compiler, the version, the loader
    assert os.readlink(opt / "lib/llvm") == "/usr/lib/llvm-22"
    assert os.readlink(opt / "lib/llvm-22") == "llvm" and os.readlink(opt / "llvm") == "lib/llvm"
    assert os.readlink(opt / "amdgcn") == "lib/llvm/lib/clang/22/amdgcn"
    assert (opt / ".info/version").read_text() == "10.1.0-0\n"
    assert (root / "etc/ld.so.conf.d/10-rocm.conf").read_text() == "/opt/rocm-10.1.0/lib\n"
    assert any("moved" in line for line in report)


def test_apt_and_the_build_hosts_traces(tmp_path):
    root, lock = make_root(tmp_path)
    run(root, lock)
    assert (root / "etc/apt/sources.list").read_text() == SOURCES
    assert (root / "etc/apt/preferences.d/rocm.pref").read_text() == PREFS
    assert not (root / "etc/apt/apt.conf.d/99mmdebstrap").exists()
    assert 'Check-Valid-Until "false"' in (root / "etc/apt/apt.conf.d/50snapshot").read_text()
    assert (root / "etc/hostname").read_text() == "" and (
        root / "etc/resolv.conf"
    ).read_text() == ""
    assert (root / "etc/hosts").read_text().startswith("127.0.0.1\tlocalhost\n")


def test_packages_other_than_the_locks_are_refused(tmp_path):
    root, lock = make_root(tmp_path)
    lock["packages"]["libc6"] = "2.0"
    lock["packages"]["gone"] = "1"
    del lock["packages"]["cmake-data"]
    with pytest.raises(layout.LayoutError) as e:
        run(root, lock)
    message = str(e.value)
    assert "cmake-data 1.0-cmake-data (lock: not listed)" in message
    assert "gone missing (lock: 1)" in message and "libc6 1.0-libc6 (lock: 2.0)" in message
    assert "bazel run //rehearsal:lock" in message


def test_no_hip_is_refused(tmp_path):
    root, lock = make_root(tmp_path)
    lock["rocm"]["packages"] = ["libmiopen1", "rocm-device-libs-22"]
    with pytest.raises(layout.LayoutError, match=r"nothing of HIP reached /opt/rocm-10\.1\.0"):
        run(root, lock)


def test_cli_reports_errors_in_one_line(tmp_path, capsys):
    root, _ = make_root(tmp_path)
    (tmp_path / "upstream.lock").write_text('[packages]\nlibc6 = "9"\n[rocm]\npackages = []\n')
    (tmp_path / "sources").write_text(SOURCES)
    (tmp_path / "prefs").write_text(PREFS)
    argv = [str(root), "--rocm-release", "10.1.0", "--lock", str(tmp_path / "upstream.lock")]
    argv += ["--sources", str(tmp_path / "sources"), "--preferences", str(tmp_path / "prefs")]
    assert layout.main(argv) == 1
    assert capsys.readouterr().err.startswith(
        "layout: error: the root file system is not the lock's"
    )


# Debian's hip-lang-targets.cmake and hip-config.cmake, the lines that find the prefix
HIP_LANG_TARGETS = """get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_FILE}" PATH)
get_filename_component(_realCurr "${_IMPORT_PREFIX}" REALPATH)
get_filename_component(_realOrig "/usr/lib/x86_64-linux-gnu/cmake/hip-lang" REALPATH)
if(_realCurr STREQUAL _realOrig)
  set(_IMPORT_PREFIX "/usr/lib/x86_64-linux-gnu/cmake/hip-lang")
endif()
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)
set_target_properties(hip-lang::amdhip64 PROPERTIES
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/x86_64-linux-gnu/libamdhip64.so.7")
"""
HIP_CONFIG = (
    'get_filename_component(PACKAGE_PREFIX_DIR "${CMAKE_CURRENT_LIST_DIR}/../../../../" ABSOLUTE)\n'
    """if(_realCurr STREQUAL _realOrig)
  set(PACKAGE_PREFIX_DIR "/usr")
endif()
set_and_check( hip_LIB_INSTALL_DIR "${PACKAGE_PREFIX_DIR}/lib/x86_64-linux-gnu" )
include("${AMD_COMGR_PREFIX}/lib/x86_64-linux-gnu/cmake/amd_comgr/amd_comgr-targets.cmake")
"""
)


def test_cmake_package_files_name_the_rocm_prefix_as_amds_do(tmp_path):
    """At <opt>/lib/cmake a Debian package file would find its prefix one level too
    high (/opt) and its libraries under lib/<multiarch>: CMake's HIP language then
    fails (`hip-lang::amdhip64 references /opt/lib/x86_64-linux-gnu/...`)."""
    opt = "opt/rocm-10.1.0"
    cmake = tmp_path / opt / "lib" / "cmake"
    (cmake / "hip-lang").mkdir(parents=True)
    (cmake / "hip").mkdir()
    (cmake / "hip-lang" / "hip-lang-targets.cmake").write_text(HIP_LANG_TARGETS)
    (cmake / "hip" / "hip-config.cmake").write_text(HIP_CONFIG)
    (cmake / "hip" / "other.txt").write_text("/usr/lib/x86_64-linux-gnu/")

    changed = layout.fix_cmake_packages(tmp_path, opt)

    assert sorted(changed) == [
        f"{opt}/lib/cmake/hip-lang/hip-lang-targets.cmake",
        f"{opt}/lib/cmake/hip/hip-config.cmake",
    ]
    targets = (cmake / "hip-lang" / "hip-lang-targets.cmake").read_text()
    assert targets.count('get_filename_component(_IMPORT_PREFIX "${_IMPORT_PREFIX}" PATH)') == 3
    assert f'"/{opt}/lib/cmake/hip-lang"' in targets
    assert '"${_IMPORT_PREFIX}/lib/libamdhip64.so.7"' in targets
    assert "x86_64-linux-gnu" not in targets
    config = (cmake / "hip" / "hip-config.cmake").read_text()
    assert '/../../../" ABSOLUTE)' in config and "../../../../" not in config
    assert f'set(PACKAGE_PREFIX_DIR "/{opt}")' in config
    assert '"${PACKAGE_PREFIX_DIR}/lib" )' in config
    assert '"${AMD_COMGR_PREFIX}/lib/cmake/amd_comgr/amd_comgr-targets.cmake"' in config
    assert (cmake / "hip" / "other.txt").read_text() == "/usr/lib/x86_64-linux-gnu/"  # not CMake's
    # the prefix the file now computes, walked as CMake walks it: <opt>
    prefix = cmake / "hip-lang" / "hip-lang-targets.cmake"
    for _ in range(1 + 3):
        prefix = prefix.parent
    assert prefix == tmp_path / opt
