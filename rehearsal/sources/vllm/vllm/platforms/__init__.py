"""The platform vLLM runs on: the stand-in knows ROCm only."""

from vllm.platforms.rocm import RocmPlatform

current_platform = RocmPlatform()
