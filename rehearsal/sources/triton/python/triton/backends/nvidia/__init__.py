"""The NVIDIA backend (rehearsal stand-in): its Python package, no CUDA binaries."""

TARGET = "cuda"
