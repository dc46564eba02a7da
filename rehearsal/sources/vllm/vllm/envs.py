"""The environment variables vLLM reads (the stand-in's subset), with vLLM's defaults.

setup.py loads this file by path before vllm is installed: standard library only.
"""

import os
from pathlib import Path

VLLM_TARGET_DEVICE: str = os.getenv("VLLM_TARGET_DEVICE", "cuda").lower()
VLLM_MAIN_CUDA_VERSION: str = os.getenv("VLLM_MAIN_CUDA_VERSION", "12.9").lower() or "12.9"
MAX_JOBS: str | None = os.getenv("MAX_JOBS")
VLLM_HOST_IP: str = os.getenv("VLLM_HOST_IP", "")
VLLM_PORT: int | None = int(os.environ["VLLM_PORT"]) if "VLLM_PORT" in os.environ else None
VLLM_USE_RUST_FRONTEND: bool = os.getenv("VLLM_USE_RUST_FRONTEND", "0") == "1"


def rust_frontend_path() -> str | None:
    """VLLM_RUST_FRONTEND_PATH: `auto` (the default) is the vllm-rs in the package."""
    value = os.getenv("VLLM_RUST_FRONTEND_PATH", "auto")
    if value != "auto":
        return value
    packaged = Path(__file__).parent / "vllm-rs"
    return str(packaged) if packaged.is_file() else None
