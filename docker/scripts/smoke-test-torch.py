"""Smoke test of an installed torch wheel built for ROCm.

Usage: python smoke-test-torch.py [--version 2.15.0] [--arch gfx950] [--triton 3.9.0]

--arch defaults to the arch the image was built for (/etc/rocm-pytorch/gpu-arch);
without --version or --triton those checks are skipped.

Runs anywhere: the build checks (a HIP build, the expected version, our
triton, MAGMA, AOTriton, RCCL and Kineto compiled in) and small CPU computations always
run; the GPU checks (rocBLAS, MAGMA, AOTriton's flash attention) run when a GPU
is visible (`docker run --device /dev/kfd --device /dev/dri ...`) and are
reported as skipped otherwise, so the image builds on GPU-less builders and
the same command is the first thing to run on a GPU host.
"""

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import torch

ARCH_FILE = "/etc/rocm-pytorch/gpu-arch"
FAILED: list[str] = []


def check(name: str, test: Callable[[], None]) -> None:
    try:
        test()
    except Exception as error:
        FAILED.append(name)
        print(f"FAIL {name}: {error!r}")
    else:
        print(f"ok   {name}")


def image_arch() -> str | None:
    try:
        with open(ARCH_FILE, encoding="utf-8") as f:
            return f.read().strip() or None
    except OSError:
        return None


def build_checks(version: str | None, triton_version: str | None) -> None:
    def is_hip_build() -> None:
        assert torch.version.hip, "torch.version.hip is empty: not a ROCm build"
        assert torch.version.cuda is None, f"CUDA build: {torch.version.cuda}"

    def has_version() -> None:
        public = torch.__version__.split("+")[0]
        assert public == version, f"torch {torch.__version__}, expected {version}"

    def has_triton() -> None:
        import triton

        assert triton.__version__.startswith(triton_version), triton.__version__

    def has_magma() -> None:
        # PyTorch builds without MAGMA, warning only, when it finds none.
        assert torch.cuda.has_magma, "torch.cuda.has_magma is False: built without MAGMA"

    def has_aotriton() -> None:
        # Flash and memory-efficient SDPA on ROCm are AOTriton's kernels.
        assert torch.backends.cuda.is_flash_attention_available(), "built without flash attention"
        lib = Path(torch.__file__).parent / "lib"
        assert (lib / "libaotriton_v2.so").is_file(), f"no libaotriton_v2.so in {lib}"
        images = lib / "aotriton.images"
        assert images.is_dir() and any(images.iterdir()), f"no AOTriton kernels in {images}"

    def has_rccl() -> None:
        # torch.distributed's NCCL backend is RCCL on ROCm (USE_DISTRIBUTED, USE_RCCL).
        import torch.distributed as dist

        assert dist.is_available(), "torch.distributed unavailable: built without USE_DISTRIBUTED"
        assert dist.is_nccl_available(), "no nccl backend: built without RCCL (USE_RCCL)"

    def has_kineto() -> None:
        # The profiler's Kineto (roctracer on ROCm) is USE_KINETO.
        from torch.autograd import profiler

        assert profiler.kineto_available(), "built without Kineto (USE_KINETO)"

    check("HIP build", is_hip_build)
    check("MAGMA compiled in", has_magma)
    check("AOTriton (flash attention) compiled in", has_aotriton)
    check("RCCL (torch.distributed, nccl backend) compiled in", has_rccl)
    check("Kineto (profiler) compiled in", has_kineto)
    if version:
        check(f"torch version {version}", has_version)
    if triton_version:
        check(f"triton {triton_version} importable", has_triton)


def cpu_checks() -> None:
    def matmul() -> None:
        a = torch.randn(64, 32, dtype=torch.float64)
        torch.testing.assert_close(a @ torch.eye(32, dtype=torch.float64), a)

    def autograd() -> None:
        x = torch.randn(16, requires_grad=True)
        (x * x).sum().backward()
        torch.testing.assert_close(x.grad, 2 * x.detach())

    def conv() -> None:
        image = torch.ones(1, 1, 5, 5)
        out = torch.nn.functional.conv2d(image, torch.ones(1, 1, 3, 3))
        torch.testing.assert_close(out, torch.full((1, 1, 3, 3), 9.0))

    def lapack() -> None:
        # A torch built without LAPACK (no MKL found: Eigen) fails here.
        a = torch.randn(8, 8, dtype=torch.float64)
        spd = a @ a.T + 8 * torch.eye(8, dtype=torch.float64)
        low = torch.linalg.cholesky(spd)
        torch.testing.assert_close(low @ low.T, spd)

    check("CPU matmul", matmul)
    check("CPU LAPACK (cholesky)", lapack)
    check("CPU autograd", autograd)
    check("CPU conv2d", conv)


def gpu_checks(arch: str | None) -> None:
    if not torch.cuda.is_available():
        print("skip GPU checks: no GPU visible")
        return

    def runs_on_arch() -> None:
        props = torch.cuda.get_device_properties(0)
        assert props.gcnArchName.split(":")[0] == arch, (
            f"GPU is {props.gcnArchName}, image is for {arch}"
        )

    def matmul() -> None:
        a = torch.randn(256, 256)
        b = torch.randn(256, 256)
        expected = a @ b
        torch.testing.assert_close((a.cuda() @ b.cuda()).cpu(), expected, rtol=1e-3, atol=1e-3)

    def magma_linalg() -> None:
        a = torch.randn(64, 64, dtype=torch.float64)
        spd = a @ a.T + 64 * torch.eye(64, dtype=torch.float64)
        previous = torch.backends.cuda.preferred_linalg_library()
        torch.backends.cuda.preferred_linalg_library("magma")
        try:
            low = torch.linalg.cholesky(spd.cuda()).cpu()
        finally:
            torch.backends.cuda.preferred_linalg_library(previous)
        torch.testing.assert_close(low @ low.T, spd)

    def flash_attention() -> None:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        q, k, v = (torch.randn(1, 2, 128, 64, dtype=torch.float16) for _ in range(3))
        expected = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = torch.nn.functional.scaled_dot_product_attention(q.cuda(), k.cuda(), v.cuda())
        torch.testing.assert_close(out.float().cpu(), expected, rtol=2e-2, atol=2e-2)

    if arch:
        check(f"GPU is {arch}", runs_on_arch)
    check("GPU matmul (rocBLAS)", matmul)
    check("GPU cholesky (MAGMA)", magma_linalg)
    check("GPU flash attention (AOTriton)", flash_attention)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", help="expected torch version, e.g. 2.15.0")
    parser.add_argument(
        "--arch", default=image_arch(), help="GPU architecture the wheel was built for"
    )
    parser.add_argument("--triton", help="expected triton version, if triton is installed")
    args = parser.parse_args()

    print(
        f"torch {torch.__version__}, HIP {torch.version.hip}, image arch {args.arch or 'unknown'}"
    )
    build_checks(args.version, args.triton)
    cpu_checks()
    gpu_checks(args.arch)
    if FAILED:
        print(f"{len(FAILED)} smoke check(s) failed: {', '.join(FAILED)}")
        return 1
    print("all smoke checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
