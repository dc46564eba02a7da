// aiter's activation kernels (rehearsal stand-in): silu(x) * y over [n, 2d] rows.
#include <hip/hip_runtime.h>

extern "C" __global__ void silu_and_mul_kernel(float* out, const float* input, int d) {
    const float* x = input + blockIdx.x * 2 * d;
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
        float v = x[i];
        out[blockIdx.x * d + i] = v / (1.0f + __expf(-v)) * x[d + i];
    }
}

extern "C" const char* aiter_activation_kernels() { return "silu_and_mul_kernel"; }
