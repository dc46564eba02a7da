"""docker/scripts/prune-rocm-arch.sh on fixture ROCm trees (no Docker).

The script runs in rocm-runtime's only RUN step; here it prunes small trees
laid out as AMD's image (lib/rocblas/library) and as Debian's packages
(lib/rocblas/<version>/library), with `--tree-only` so the host's loader
configuration is left alone.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SCRIPT = Path("docker/scripts/prune-rocm-arch.sh").resolve()  # runfiles path (cwd = runfiles root)

# kernel files of an AMD-shaped tree, by directory under the ROCm root
AMD_TREE = {
    "lib/rocblas/library": [
        "Kernels.so-000-gfx1100.hsaco",
        "Kernels.so-000-gfx90a.hsaco",
        "TensileLibrary_lazy_gfx1100.dat",
        "TensileLibrary_lazy_gfx942.dat",
        "TensileManifest.txt",
    ],
    "lib/hipblaslt/library": [
        "extop_gfx1100.co",
        "extop_gfx942.co",
        "hipblasltTransform_gfx11-generic.hsaco",
    ],
    "share/miopen/db": [
        "gfx1100_48.kdb",
        "gfx942130.kdb",
        "gfx90a6e.HIP.fdb.txt",
    ],
}


def make_tree(root: Path, tree: dict[str, list[str]], so: bool = True) -> Path:
    for directory, files in tree.items():
        (root / directory).mkdir(parents=True, exist_ok=True)
        for name in files:
            (root / directory / name).write_bytes(b"k" * 1024)
    if so:
        (root / "lib").mkdir(parents=True, exist_ok=True)
        (root / "lib/librocblas.so.5").write_bytes(b"elf")
    return root


def prune(root: Path, arch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), "--tree-only", arch, str(root)],
        capture_output=True,
        text=True,
        check=False,
    )


def files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_keeps_the_arch_and_its_generic_target_and_files_without_an_arch(tmp_path):
    root = make_tree(tmp_path / "rocm", AMD_TREE)
    proc = prune(root, "gfx1100")
    assert proc.returncode == 0, proc.stderr
    assert files(root) == {
        "lib/librocblas.so.5",
        "lib/rocblas/library/Kernels.so-000-gfx1100.hsaco",
        "lib/rocblas/library/TensileLibrary_lazy_gfx1100.dat",
        "lib/rocblas/library/TensileManifest.txt",
        "lib/hipblaslt/library/extop_gfx1100.co",
        "lib/hipblaslt/library/hipblasltTransform_gfx11-generic.hsaco",
        "share/miopen/db/gfx1100_48.kdb",
    }
    assert "kept kernels for gfx1100" in proc.stdout and "deleted 5 files" in proc.stdout


def test_several_archs_keep_each(tmp_path):
    root = make_tree(tmp_path / "rocm", AMD_TREE)
    assert prune(root, "gfx1100;gfx942").returncode == 0
    assert "lib/rocblas/library/TensileLibrary_lazy_gfx942.dat" in files(root)
    assert "share/miopen/db/gfx942130.kdb" in files(root)
    assert "lib/rocblas/library/Kernels.so-000-gfx90a.hsaco" not in files(root)


def test_a_family_keeps_exactly_its_members_kernels(tmp_path):
    root = make_tree(tmp_path / "rocm", AMD_TREE)
    proc = prune(root, "gfx1100;gfx90a")
    assert proc.returncode == 0, proc.stderr
    assert files(root) == {
        "lib/librocblas.so.5",
        "lib/rocblas/library/Kernels.so-000-gfx1100.hsaco",
        "lib/rocblas/library/Kernels.so-000-gfx90a.hsaco",
        "lib/rocblas/library/TensileLibrary_lazy_gfx1100.dat",
        "lib/rocblas/library/TensileManifest.txt",
        "lib/hipblaslt/library/extop_gfx1100.co",
        "lib/hipblaslt/library/hipblasltTransform_gfx11-generic.hsaco",
        "share/miopen/db/gfx1100_48.kdb",
        "share/miopen/db/gfx90a6e.HIP.fdb.txt",
    }
    assert "kept kernels for gfx1100;gfx90a" in proc.stdout


def test_a_family_member_without_rocblas_kernels_is_fatal(tmp_path):
    # gfx1100 has rocBLAS kernels, gfx1103 none: one image for both would
    # fail on the gfx1103 card, so the prune refuses it, naming the member
    root = make_tree(tmp_path / "rocm", AMD_TREE)
    proc = prune(root, "gfx1100;gfx1103")
    assert proc.returncode == 1
    assert (
        "prune-rocm-arch: this ROCm ships no rocBLAS kernels for gfx1103 (of gfx1100;gfx1103)"
        in proc.stderr
    )


def test_no_rocblas_kernels_for_the_arch_is_fatal(tmp_path):
    root = make_tree(tmp_path / "rocm", AMD_TREE)
    proc = prune(root, "gfx950")
    assert proc.returncode == 1
    assert "prune-rocm-arch: this ROCm ships no rocBLAS kernels for gfx950" in proc.stderr


@pytest.mark.parametrize("arch, ok", [("gfx1100", True), ("gfx950", False)])
def test_debian_layout_with_a_version_directory(tmp_path, arch, ok):
    # Debian keeps rocBLAS's kernels at lib/rocblas/<version>/library: the
    # fatal check used to look at lib/rocblas/library only, so a gfx950
    # build on this layout "succeeded" with 3 MiB of ROCm and no BLAS kernels.
    tree = {"lib/rocblas/5/library": AMD_TREE["lib/rocblas/library"]}
    root = make_tree(tmp_path / "rocm", tree)
    proc = prune(root, arch)
    assert (proc.returncode == 0) is ok, proc.stderr
    if not ok:
        assert "no rocBLAS kernels for gfx950" in proc.stderr


def test_rocblas_without_a_kernel_directory_is_refused(tmp_path):
    root = make_tree(tmp_path / "rocm", {"lib/hipblaslt/library": ["extop_gfx1100.co"]})
    proc = prune(root, "gfx1100")
    assert proc.returncode == 1
    assert "has librocblas but no rocBLAS kernel directory" in proc.stderr


def test_other_libraries_without_kernels_for_the_arch_only_warn(tmp_path):
    tree = {
        "lib/rocblas/library": ["Kernels.so-000-gfx942.hsaco"],
        "lib/hipsparselt/library": ["spmm_gfx950.co"],
    }
    root = make_tree(tmp_path / "rocm", tree)
    proc = prune(root, "gfx942")
    assert proc.returncode == 0, proc.stderr
    assert (
        "warning: " in proc.stderr
        and "hipsparselt/library has no kernels for gfx942" in proc.stderr
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["gfx95O"], "'gfx95O' is not a GPU architecture like gfx950"),
        ([], "usage: prune-rocm-arch.sh [--tree-only] ARCH"),
    ],
)
def test_bad_arguments(tmp_path, argv, message):
    proc = subprocess.run(
        ["bash", str(SCRIPT), "--tree-only", *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1 and message in proc.stderr


def test_not_a_rocm_tree(tmp_path):
    (tmp_path / "lib").mkdir()
    proc = prune(tmp_path, "gfx1100")
    assert proc.returncode == 1
    assert "no kernel library directories under" in proc.stderr
