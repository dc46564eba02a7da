// ATen/TensorIterator.h (stand-in): the operands of an elementwise op, their
// common dtype (type promotion) and shape, and the output it allocates, as
// TensorIteratorBase does for every structured kernel of ATen.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace at {

class TORCH_API TensorIteratorBase {
 public:
  static TensorIteratorBase unary_op(const Tensor& self);
  static TensorIteratorBase binary_op(const Tensor& self, const Tensor& other);
  static TensorIteratorBase comparison_op(const Tensor& self, const Tensor& other);

  int ntensors() const { return static_cast<int>(operands_.size()); }
  int ninputs() const { return ntensors() - 1; }
  const Tensor& output() const { return operands_[0]; }
  const Tensor& input(int i) const { return operands_[i + 1]; }
  ScalarType common_dtype() const { return common_dtype_; }
  ScalarType dtype(int arg = 0) const { return operands_[arg].scalar_type(); }
  Device device() const { return operands_[0].device(); }
  int64_t numel() const { return operands_[0].numel(); }
  bool is_contiguous() const;
  char* data_ptr(int arg) const { return static_cast<char*>(operands_[arg].data_ptr()); }
  int64_t element_stride(int arg) const;

 private:
  std::vector<Tensor> operands_;
  ScalarType common_dtype_ = ScalarType::Undefined;
};

using TensorIterator = TensorIteratorBase;

}  // namespace at
