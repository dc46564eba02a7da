// A torchvision op's GPU kernel (rehearsal stand-in): scale boxes by a factor.
#include <hip/hip_runtime.h>

extern "C" __global__ void roi_scale_kernel(float* boxes, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 4 * n) boxes[i] *= factor;
}

extern "C" const char* torchvision_archs() { return TORCHVISION_ARCHS; }
