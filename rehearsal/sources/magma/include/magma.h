/* MAGMA (rehearsal stand-in): the C API the stand-in PyTorch calls. */
#pragma once
#ifdef __cplusplus
extern "C" {
#endif
typedef int magma_int_t;
#define MAGMA_VERSION_MAJOR 2
#define MAGMA_VERSION_MINOR 9
#define MAGMA_VERSION_MICRO 0
void magma_version(magma_int_t* major, magma_int_t* minor, magma_int_t* micro);
/* The threads MKL runs the CPU side with (MAGMA's hybrid algorithms). */
int magma_get_lapack_numthreads(void);
#ifdef __cplusplus
}
#endif
