// c10/core/TensorImpl.h (stand-in): sizes, strides, dtype and a shared
// storage, which every ATen kernel reads through TensorIterator.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace c10 {

struct C10_API StorageImpl {
  StorageImpl(size_t nbytes, Allocator* alloc) : nbytes(nbytes), data(alloc->allocate(nbytes)) {}
  size_t nbytes;
  DataPtr data;
};

class C10_API TensorImpl {
 public:
  TensorImpl(std::vector<int64_t> sizes, ScalarType dtype, Device device);
  const std::vector<int64_t>& sizes() const { return sizes_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->data.device(); }
  bool is_contiguous() const;
  void* data() const {
    return static_cast<char*>(storage_->data.get()) +
           storage_offset_ * static_cast<int64_t>(elementSize(dtype_));
  }
  void set_sizes_and_strides(std::vector<int64_t> sizes, std::vector<int64_t> strides);

 private:
  std::shared_ptr<StorageImpl> storage_;
  std::vector<int64_t> sizes_, strides_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 1;
  ScalarType dtype_;
};

}  // namespace c10
