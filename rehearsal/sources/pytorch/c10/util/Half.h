// c10/util/Half.h (stand-in): IEEE binary16 stored as bits, computed in float,
// as c10::Half is (fp16_ieee_from_fp32_value / fp16_ieee_to_fp32_value).
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <cstring>
#include <ostream>

namespace c10 {

struct alignas(2) Half {
  uint16_t x;
  Half() = default;
  C10_HOST_DEVICE Half(float value) : x(from_float(value)) {}
  C10_HOST_DEVICE operator float() const { return to_float(x); }

  static C10_HOST_DEVICE uint16_t from_float(float f) {
    uint32_t w;
    __builtin_memcpy(&w, &f, sizeof w);
    const uint32_t sign = (w >> 16) & 0x8000u;
    const uint32_t exp = (w >> 23) & 0xffu;
    uint32_t mant = w & 0x7fffffu;
    if (exp == 0xffu) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
    int e = static_cast<int>(exp) - 127 + 15;
    if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
    if (e <= 0) {
      if (e < -10) return static_cast<uint16_t>(sign);
      mant |= 0x800000u;
      const uint32_t shift = static_cast<uint32_t>(14 - e);
      uint32_t half = mant >> shift;
      if ((mant >> (shift - 1)) & 1u) half += 1;
      return static_cast<uint16_t>(sign | half);
    }
    uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
    if (mant & 0x1000u) half += 1;
    return static_cast<uint16_t>(half);
  }

  static C10_HOST_DEVICE float to_float(uint16_t h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t w;
    if (exp == 0) {
      if (mant == 0) {
        w = sign;
      } else {
        exp = 127 - 15 + 1;
        while (!(mant & 0x400u)) {
          mant <<= 1;
          --exp;
        }
        w = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
      }
    } else if (exp == 0x1f) {
      w = sign | 0x7f800000u | (mant << 13);
    } else {
      w = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    __builtin_memcpy(&f, &w, sizeof f);
    return f;
  }
};

inline std::ostream& operator<<(std::ostream& out, const Half& value) {
  return out << static_cast<float>(value);
}

}  // namespace c10
