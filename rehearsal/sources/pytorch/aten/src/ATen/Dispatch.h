// ATen/Dispatch.h (stand-in): AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16, ...),
// a switch over the dtypes that instantiates the lambda once per type as
// scalar_t: the reason each kernel TU of ATen compiles the same loop nine times.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#define AT_PRIVATE_CASE_TYPE(cpp, n, ...) \
  case ::c10::ScalarType::n: {            \
    using scalar_t = cpp;                 \
    return __VA_ARGS__();                 \
  }

#define AT_DISPATCH_ALL_TYPES_AND_HALF(TYPE, NAME, ...)                                   \
  [&] {                                                                                   \
    const ::c10::ScalarType _st = (TYPE);                                                 \
    switch (_st) {                                                                        \
      AT_PRIVATE_CASE_TYPE(uint8_t, Byte, __VA_ARGS__)                                    \
      AT_PRIVATE_CASE_TYPE(int8_t, Char, __VA_ARGS__)                                     \
      AT_PRIVATE_CASE_TYPE(int16_t, Short, __VA_ARGS__)                                   \
      AT_PRIVATE_CASE_TYPE(int32_t, Int, __VA_ARGS__)                                     \
      AT_PRIVATE_CASE_TYPE(int64_t, Long, __VA_ARGS__)                                    \
      AT_PRIVATE_CASE_TYPE(float, Float, __VA_ARGS__)                                     \
      AT_PRIVATE_CASE_TYPE(double, Double, __VA_ARGS__)                                   \
      AT_PRIVATE_CASE_TYPE(::c10::Half, Half, __VA_ARGS__)                                \
      AT_PRIVATE_CASE_TYPE(::c10::BFloat16, BFloat16, __VA_ARGS__)                        \
      default:                                                                            \
        TORCH_CHECK(false, '"', NAME, "\" not implemented for '", ::c10::toString(_st), "'"); \
    }                                                                                     \
  }()

#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...)                              \
  [&] {                                                                                   \
    const ::c10::ScalarType _st = (TYPE);                                                 \
    switch (_st) {                                                                        \
      AT_PRIVATE_CASE_TYPE(float, Float, __VA_ARGS__)                                     \
      AT_PRIVATE_CASE_TYPE(double, Double, __VA_ARGS__)                                   \
      AT_PRIVATE_CASE_TYPE(::c10::Half, Half, __VA_ARGS__)                                \
      default:                                                                            \
        TORCH_CHECK(false, '"', NAME, "\" not implemented for '", ::c10::toString(_st), "'"); \
    }                                                                                     \
  }()
