// ATen/cpu/vec/vec_base.h (stand-in): Vectorized<T>, a register's worth of
// lanes (32 bytes under AVX2, 16 otherwise) with elementwise map, loads and
// stores, which the compiler turns into SIMD in each capability's build.
#pragma once

#include <c10/macros/Macros.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace at::vec {
inline namespace CPU_CAPABILITY {

#if defined(CPU_CAPABILITY_AVX2)
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;
#endif

template <typename T>
class Vectorized {
 public:
  using value_type = T;
  static constexpr int size() { return kVectorBytes / static_cast<int>(sizeof(T)) > 0
                                           ? kVectorBytes / static_cast<int>(sizeof(T))
                                           : 1; }

  Vectorized() : values_{} {}
  explicit Vectorized(T v) { values_.fill(v); }

  static Vectorized loadu(const void* ptr, int count = size()) {
    Vectorized out;
    std::memcpy(out.values_.data(), ptr, sizeof(T) * std::min(count, size()));
    return out;
  }
  void store(void* ptr, int count = size()) const {
    std::memcpy(ptr, values_.data(), sizeof(T) * std::min(count, size()));
  }

  template <typename F>
  Vectorized map(F&& f) const {
    Vectorized out;
    for (int i = 0; i < size(); ++i) out.values_[i] = f(values_[i]);
    return out;
  }
  template <typename F>
  Vectorized zip(const Vectorized& other, F&& f) const {
    Vectorized out;
    for (int i = 0; i < size(); ++i) out.values_[i] = f(values_[i], other.values_[i]);
    return out;
  }

  T operator[](int i) const { return values_[i]; }

 private:
  alignas(kVectorBytes) std::array<T, kVectorBytes / sizeof(T) ? kVectorBytes / sizeof(T) : 1>
      values_;
};

}  // namespace CPU_CAPABILITY
}  // namespace at::vec
