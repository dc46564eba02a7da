// A MAGMA BLAS kernel (rehearsal stand-in): x *= alpha, compiled for the GPU.
#include <cuda_runtime.h>

extern "C" __global__ void magmablas_dscal_kernel(int n, double alpha, double* x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= alpha;
}

extern "C" void magmablas_dscal(int n, double alpha, double* x, cudaStream_t queue) {
    magmablas_dscal_kernel<<<(n + 255) / 256, 256, 0, queue>>>(n, alpha, x);
}
