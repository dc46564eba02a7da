// ATen/native/cpu/Loops.h (stand-in): cpu_kernel_vec, the loop behind every
// elementwise CPU kernel: a vectorized path over contiguous operands (whole
// vectors, then the tail), a scalar path over strided ones, split across
// grains as at::parallel_for splits it. Included by every
// UfuncCPUKernel_*.cpp, so each of them instantiates it per dtype.
#pragma once

#include <ATen/TensorIterator.h>
#include <ATen/cpu/vec/vec_base.h>
#include <c10/util/irange.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace at::native {
inline namespace CPU_CAPABILITY {

constexpr int64_t GRAIN_SIZE = 32768;

// at::parallel_for's shape (ATen/Parallel.h), serial here: the range in
// grains, each grain handed to the loop body. PyTorch runs the grains on its
// OpenMP pool; the stand-in's kernels only need to compile as ATen's do.
template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  for (int64_t start = begin; start < end; start += grain) {
    f(start, std::min(end, start + grain));
  }
}

template <typename scalar_t, typename Op, typename VecOp>
void cpu_kernel_vec_unary(TensorIteratorBase& iter, const Op& op, const VecOp& vop) {
  using Vec = vec::Vectorized<scalar_t>;
  auto* out = reinterpret_cast<scalar_t*>(iter.data_ptr(0));
  const auto* in = reinterpret_cast<const scalar_t*>(iter.data_ptr(1));
  if (!iter.is_contiguous()) {
    const int64_t so = iter.element_stride(0), si = iter.element_stride(1);
    for (const auto i : c10::irange(iter.numel())) out[i * so] = op(in[i * si]);
    return;
  }
  parallel_for(0, iter.numel(), GRAIN_SIZE, [&](int64_t begin, int64_t end) {
    int64_t i = begin;
    for (; i + Vec::size() <= end; i += Vec::size()) {
      vop(Vec::loadu(in + i)).store(out + i);
    }
    for (; i < end; ++i) out[i] = op(in[i]);
  });
}

template <typename scalar_t, typename Op, typename VecOp>
void cpu_kernel_vec_binary(TensorIteratorBase& iter, const Op& op, const VecOp& vop) {
  using Vec = vec::Vectorized<scalar_t>;
  auto* out = reinterpret_cast<scalar_t*>(iter.data_ptr(0));
  const auto* a = reinterpret_cast<const scalar_t*>(iter.data_ptr(1));
  const auto* b = reinterpret_cast<const scalar_t*>(iter.data_ptr(2));
  if (!iter.is_contiguous()) {
    const int64_t so = iter.element_stride(0), sa = iter.element_stride(1),
                  sb = iter.element_stride(2);
    for (const auto i : c10::irange(iter.numel())) out[i * so] = op(a[i * sa], b[i * sb]);
    return;
  }
  parallel_for(0, iter.numel(), GRAIN_SIZE, [&](int64_t begin, int64_t end) {
    int64_t i = begin;
    for (; i + Vec::size() <= end; i += Vec::size()) {
      vop(Vec::loadu(a + i), Vec::loadu(b + i)).store(out + i);
    }
    for (; i < end; ++i) out[i] = op(a[i], b[i]);
  });
}

}  // namespace CPU_CAPABILITY
}  // namespace at::native
