// A CUDA kernel of the stand-in ATen; tools/amd_build/build_amd.py hipifies
// it into aten/src/ATen/native/hip/Scale.hip, which hipcc compiles for
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <cuda_runtime.h>

extern "C" __global__ void scale_kernel(float* data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}

extern "C" int scale_launch(float* data, float factor, int n, cudaStream_t stream) {
    scale_kernel<<<(n + 255) / 256, 256, 0, stream>>>(data, factor, n);
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
