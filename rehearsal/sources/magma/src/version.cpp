// MAGMA (rehearsal stand-in): the version and MKL's thread count, so the
// library links MKL as MAGMA's CPU side does.
#include "magma.h"

extern "C" int MKL_Get_Max_Threads(void);

extern "C" void magma_version(magma_int_t* major, magma_int_t* minor, magma_int_t* micro) {
    *major = MAGMA_VERSION_MAJOR;
    *minor = MAGMA_VERSION_MINOR;
    *micro = MAGMA_VERSION_MICRO;
}

extern "C" int magma_get_lapack_numthreads(void) { return MKL_Get_Max_Threads(); }
