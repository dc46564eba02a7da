#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>
#include <c10/util/irange.h>

namespace c10 {

static std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * std::max<int64_t>(sizes[i + 1], 1);
  }
  return strides;
}

TensorImpl::TensorImpl(std::vector<int64_t> sizes, ScalarType dtype, Device device)
    : sizes_(std::move(sizes)), dtype_(dtype) {
  for (const auto s : sizes_) {
    TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s);
    numel_ *= s;
  }
  strides_ = contiguous_strides(sizes_);
  storage_ = std::make_shared<StorageImpl>(numel_ * elementSize(dtype), GetAllocator(device.type));
}

bool TensorImpl::is_contiguous() const { return strides_ == contiguous_strides(sizes_); }

void TensorImpl::set_sizes_and_strides(std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  TORCH_CHECK(sizes.size() == strides.size(), "dimensionality of sizes (", sizes.size(),
              ") must match dimensionality of strides (", strides.size(), ")");
  int64_t numel = 1;
  for (const auto i : irange(sizes.size())) numel *= sizes[i];
  TORCH_CHECK(numel == numel_, "set_sizes_and_strides: ", numel, " elements, storage has ",
              numel_);
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
}

}  // namespace c10
