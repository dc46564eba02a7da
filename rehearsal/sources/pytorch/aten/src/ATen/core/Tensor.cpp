#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <c10/util/irange.h>

namespace at {

Tensor empty(const std::vector<int64_t>& sizes, ScalarType dtype, Device device) {
  return Tensor(std::make_shared<c10::TensorImpl>(sizes, dtype, device));
}

Tensor empty_like(const Tensor& self, ScalarType dtype) {
  return empty(self.sizes(), dtype, self.device());
}

// The CPU copy between dtypes (ATen/native/Copy.cpp's copy_kernel): one loop
// per pair of dtypes, 81 instantiations.
Tensor Tensor::to(ScalarType dtype) const {
  if (dtype == scalar_type()) return *this;
  TORCH_CHECK(device().is_cpu(), "to(): only CPU tensors convert here, got ", device());
  TORCH_CHECK(is_contiguous(), "to(): a non-contiguous tensor");
  Tensor out = empty_like(*this, dtype);
  AT_DISPATCH_ALL_TYPES_AND_HALF(scalar_type(), "to", [&] {
    using src_t = scalar_t;
    const src_t* src = data_ptr<src_t>();
    AT_DISPATCH_ALL_TYPES_AND_HALF(dtype, "to", [&] {
      scalar_t* dst = out.data_ptr<scalar_t>();
      for (const auto i : c10::irange(numel())) {
        dst[i] = static_cast<scalar_t>(static_cast<float>(src[i]));
      }
    });
  });
  return out;
}

}  // namespace at
