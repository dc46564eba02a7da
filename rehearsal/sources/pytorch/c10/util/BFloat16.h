// c10/util/BFloat16.h (stand-in): the upper 16 bits of a float, rounded to
// nearest even, as c10::BFloat16 is.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <cstring>
#include <ostream>

namespace c10 {

struct alignas(2) BFloat16 {
  uint16_t x;
  BFloat16() = default;
  C10_HOST_DEVICE BFloat16(float value) {
    uint32_t w;
    __builtin_memcpy(&w, &value, sizeof w);
    if ((w & 0x7fffffffu) > 0x7f800000u) {
      x = 0x7fc0;
    } else {
      w += 0x7fffu + ((w >> 16) & 1u);
      x = static_cast<uint16_t>(w >> 16);
    }
  }
  C10_HOST_DEVICE operator float() const {
    uint32_t w = static_cast<uint32_t>(x) << 16;
    float f;
    __builtin_memcpy(&f, &w, sizeof f);
    return f;
  }
};

inline std::ostream& operator<<(std::ostream& out, const BFloat16& value) {
  return out << static_cast<float>(value);
}

}  // namespace c10
