// c10/macros/Macros.h (stand-in): the export and branch-hint macros every
// header of c10 and ATen starts from, as in PyTorch's c10/macros.
#pragma once

#define C10_API __attribute__((__visibility__("default")))
#define TORCH_API C10_API
#define C10_LIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 1))
#define C10_UNLIKELY(expr) (__builtin_expect(static_cast<bool>(expr), 0))
#define C10_CONCATENATE_IMPL(s1, s2) s1##s2
#define C10_CONCATENATE(s1, s2) C10_CONCATENATE_IMPL(s1, s2)
#define C10_ANONYMOUS_VARIABLE(str) C10_CONCATENATE(str, __COUNTER__)
#if defined(__HIPCC__) || defined(__CUDACC__)
#define C10_HOST_DEVICE __host__ __device__
#else
#define C10_HOST_DEVICE
#endif
