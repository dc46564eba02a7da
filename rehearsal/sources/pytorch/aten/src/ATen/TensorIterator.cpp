#include <ATen/TensorIterator.h>
#include <c10/util/Exception.h>

namespace at {

TensorIteratorBase TensorIteratorBase::unary_op(const Tensor& self) {
  TensorIteratorBase iter;
  iter.common_dtype_ = self.scalar_type();
  iter.operands_ = {empty_like(self, iter.common_dtype_), self};
  return iter;
}

static void check_same_shape(const Tensor& self, const Tensor& other) {
  TORCH_CHECK(self.sizes() == other.sizes(), "The size of tensor a (", self.numel(),
              " elements) must match the size of tensor b (", other.numel(), " elements)");
  TORCH_CHECK(self.device() == other.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ",
              self.device(), " and ", other.device(), "!");
}

TensorIteratorBase TensorIteratorBase::binary_op(const Tensor& self, const Tensor& other) {
  check_same_shape(self, other);
  TensorIteratorBase iter;
  iter.common_dtype_ = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  iter.operands_ = {empty_like(self, iter.common_dtype_), self.to(iter.common_dtype_),
                    other.to(iter.common_dtype_)};
  return iter;
}

// Comparisons compute in the common dtype and write it (the stand-in has no
// Bool dtype): 1 for true, 0 for false.
TensorIteratorBase TensorIteratorBase::comparison_op(const Tensor& self, const Tensor& other) {
  return binary_op(self, other);
}

bool TensorIteratorBase::is_contiguous() const {
  for (const auto& t : operands_) {
    if (!t.is_contiguous()) return false;
  }
  return true;
}

int64_t TensorIteratorBase::element_stride(int arg) const {
  const auto& strides = operands_[arg].strides();
  return strides.empty() ? 1 : strides.back();
}

}  // namespace at
