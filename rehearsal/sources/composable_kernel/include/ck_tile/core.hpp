// ck_tile (rehearsal stand-in): the device helpers the generated fmha kernels use.
#pragma once
#include <hip/hip_runtime.h>

namespace ck_tile {

using fp16_t = _Float16;
using bf16_t = __bf16;

template <typename T>
__device__ inline float to_float(T x) { return static_cast<float>(x); }

template <typename T>
__device__ inline T from_float(float x) { return static_cast<T>(x); }

__device__ inline float exp2(float x) { return __builtin_amdgcn_exp2f(x); }

// One row of scores: out = exp2(s * scale - max), optionally masked past `valid`,
// with the log-sum-exp when asked. Enough arithmetic to be a real kernel.
template <int HDim, typename T, bool Mask, bool Lse>
__device__ inline void fmha_row(const T* s, T* out, float* lse, float scale, int valid) {
    int i = threadIdx.x;
    if (i >= HDim) return;
    float x = to_float(s[i]) * scale;
    if (Mask && i >= valid) x = -1e30f;
    float e = exp2(x);
    out[i] = from_float<T>(e);
    if (Lse && i == 0) *lse = x;
}

}  // namespace ck_tile
