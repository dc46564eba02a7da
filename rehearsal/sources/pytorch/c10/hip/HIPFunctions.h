// c10/hip/HIPFunctions.h (hipified from c10/cuda/CUDAFunctions.h, stand-in):
// the device count, asked of the HIP runtime without failing on a host
// without GPUs.
#pragma once

#include <c10/macros/Macros.h>

namespace c10::hip {

C10_API int device_count() noexcept;

}  // namespace c10::hip
