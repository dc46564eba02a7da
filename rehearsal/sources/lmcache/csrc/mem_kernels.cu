// LMCache's KV-cache copy kernel (rehearsal stand-in), in CUDA spelling as
// LMCache writes it: setup.py hipifies it into mem_kernels.hip for ROCm.
#include <cuda_runtime.h>

extern "C" __global__ void load_and_reshape_kernel(float* paged, const float* chunk,
                                                   const long* slots, int tokens, int width) {
    int token = blockIdx.x;
    if (token >= tokens) return;
    for (int i = threadIdx.x; i < width; i += blockDim.x) {
        paged[slots[token] * width + i] = chunk[token * width + i];
    }
}

extern "C" int lmcache_load_and_reshape(float* paged, const float* chunk, const long* slots,
                                        int tokens, int width, cudaStream_t stream) {
    load_and_reshape_kernel<<<tokens, 128, 0, stream>>>(paged, chunk, slots, tokens, width);
    return static_cast<int>(cudaGetLastError());
}

extern "C" const char* lmcache_gpu_archs() { return LMCACHE_GPU_ARCHS; }
