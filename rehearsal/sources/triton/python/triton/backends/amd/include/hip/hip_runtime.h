/* The HIP runtime API the stand-in Triton's generated C uses: the few types and
 * entry points of AMD's hip_runtime_api.h it names. Triton carries HIP's headers
 * in its AMD backend (third_party/amd/backend/include) and dlopens
 * libamdhip64.so at run time instead of linking it; so does the stand-in. */
#ifndef STANDIN_TRITON_HIP_RUNTIME_H
#define STANDIN_TRITON_HIP_RUNTIME_H

typedef enum hipError_t {
    hipSuccess = 0,
    hipErrorNoDevice = 100,
} hipError_t;

typedef struct ihipStream_t *hipStream_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef void *hipDeviceptr_t;

typedef hipError_t (*hipGetDeviceCount_fn)(int *count);
typedef const char *(*hipGetErrorString_fn)(hipError_t error);
typedef hipError_t (*hipModuleLaunchKernel_fn)(hipFunction_t f, unsigned gridX, unsigned gridY,
                                               unsigned gridZ, unsigned blockX, unsigned blockY,
                                               unsigned blockZ, unsigned sharedMemBytes,
                                               hipStream_t stream, void **kernelParams,
                                               void **extra);

#endif
