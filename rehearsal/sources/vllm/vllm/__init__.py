"""vLLM (rehearsal stand-in): a high-throughput and memory-efficient inference and
serving engine for LLMs, in small: the package layout, the native parts and the
`vllm serve` entry point of vLLM's ROCm build."""

from vllm.version import __version__, __version_tuple__

__all__ = ["__version__", "__version_tuple__"]
