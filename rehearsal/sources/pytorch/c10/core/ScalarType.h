// c10/core/ScalarType.h (stand-in): the dtypes, listed once through an
// X-macro as AT_FORALL_SCALAR_TYPES is, so every dispatch over them (and
// every template instantiated per dtype in ATen's kernels) follows the list.
#pragma once

#include <c10/macros/Macros.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cstdint>
#include <ostream>
#include <string>

namespace c10 {

#define AT_FORALL_SCALAR_TYPES_AND_HALF(_) \
  _(uint8_t, Byte)                         \
  _(int8_t, Char)                          \
  _(int16_t, Short)                        \
  _(int32_t, Int)                          \
  _(int64_t, Long)                         \
  _(float, Float)                          \
  _(double, Double)                        \
  _(c10::Half, Half)                       \
  _(c10::BFloat16, BFloat16)

enum class ScalarType : int8_t {
#define DEFINE_ENUM(_1, n) n,
  AT_FORALL_SCALAR_TYPES_AND_HALF(DEFINE_ENUM)
#undef DEFINE_ENUM
      Undefined,
  NumOptions
};

template <typename T>
struct CppTypeToScalarType;
#define SPECIALIZE(cpp, n)                                            \
  template <>                                                         \
  struct CppTypeToScalarType<cpp> {                                   \
    static constexpr ScalarType value = ScalarType::n;                \
  };
AT_FORALL_SCALAR_TYPES_AND_HALF(SPECIALIZE)
#undef SPECIALIZE

C10_API const char* toString(ScalarType t);
C10_API size_t elementSize(ScalarType t);
C10_API bool isFloatingType(ScalarType t);
C10_API bool isIntegralType(ScalarType t);
C10_API ScalarType promoteTypes(ScalarType a, ScalarType b);

inline std::ostream& operator<<(std::ostream& out, ScalarType t) { return out << toString(t); }

}  // namespace c10
