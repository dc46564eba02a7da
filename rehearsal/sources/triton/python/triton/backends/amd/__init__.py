"""The AMD backend (rehearsal stand-in): kernels are compiled for the GPU at hand."""

TARGET = "hip"
