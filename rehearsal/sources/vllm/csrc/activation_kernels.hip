// vLLM's fused activation (rehearsal stand-in): out = silu(x) * y, the
// gate of a gated MLP, compiled by hipcc for each arch of PYTORCH_ROCM_ARCH.
#include <hip/hip_runtime.h>

extern "C" __global__ void silu_and_mul_kernel(float* out, const float* input, int d) {
    int token = blockIdx.x;
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
        float x = input[token * 2 * d + i];
        float y = input[token * 2 * d + d + i];
        out[token * d + i] = x / (1.0f + __expf(-x)) * y;
    }
}

extern "C" int vllm_silu_and_mul(float* out, const float* input, int tokens, int d,
                                 hipStream_t stream) {
    hipLaunchKernelGGL(silu_and_mul_kernel, dim3(tokens), dim3(256), 0, stream, out, input, d);
    return static_cast<int>(hipGetLastError());
}

extern "C" const char* vllm_hip_archs() { return VLLM_HIP_ARCHS; }
