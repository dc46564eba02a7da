// ATen/core/Tensor.h (stand-in): at::Tensor, a shared handle on a TensorImpl.
#pragma once

#include <c10/core/TensorImpl.h>

#include <memory>
#include <vector>

namespace at {

using c10::Device;
using c10::DeviceType;
using c10::ScalarType;

class TORCH_API Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<c10::TensorImpl> impl) : impl_(std::move(impl)) {}
  bool defined() const { return static_cast<bool>(impl_); }
  c10::TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const std::vector<int64_t>& sizes() const { return impl_->sizes(); }
  const std::vector<int64_t>& strides() const { return impl_->strides(); }
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  void* data_ptr() const { return impl_->data(); }
  template <typename T>
  T* data_ptr() const {
    return static_cast<T*>(impl_->data());
  }
  Tensor to(ScalarType dtype) const;

 private:
  std::shared_ptr<c10::TensorImpl> impl_;
};

TORCH_API Tensor empty(const std::vector<int64_t>& sizes, ScalarType dtype,
                       Device device = Device(DeviceType::CPU));
TORCH_API Tensor empty_like(const Tensor& self, ScalarType dtype);

}  // namespace at
