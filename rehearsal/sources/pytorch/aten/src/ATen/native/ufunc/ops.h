// ATen/native/ufunc/ops.h (stand-in): the inner loops of ATen's elementwise
// operators, host and device (native_functions.yaml's ufunc_inner_loop names
// them), computed in opmath (float for the 16-bit types and the integers,
// double for double), as ATen/native/ufunc/add.h defines add.
#pragma once

#include <c10/macros/Macros.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace at::native::ufunc {

template <typename T>
using opmath_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

#define UFUNC_UNARY(name, expr)                      \
  template <typename T>                              \
  C10_HOST_DEVICE inline T name(T self_) {           \
    using acc_t = opmath_t<T>;                       \
    const acc_t a = static_cast<acc_t>(self_);       \
    return static_cast<T>(expr);                     \
  }

#define UFUNC_BINARY(name, expr)                     \
  template <typename T>                              \
  C10_HOST_DEVICE inline T name(T self_, T other_) { \
    using acc_t = opmath_t<T>;                       \
    const acc_t a = static_cast<acc_t>(self_);       \
    const acc_t b = static_cast<acc_t>(other_);      \
    return static_cast<T>(expr);                     \
  }

UFUNC_UNARY(abs, std::abs(a))
UFUNC_UNARY(neg, -a)
UFUNC_UNARY(sgn, acc_t((a > acc_t(0)) - (a < acc_t(0))))
UFUNC_UNARY(sqrt, std::sqrt(a))
UFUNC_UNARY(rsqrt, acc_t(1) / std::sqrt(a))
UFUNC_UNARY(exp, std::exp(a))
UFUNC_UNARY(exp2, std::exp2(a))
UFUNC_UNARY(expm1, std::expm1(a))
UFUNC_UNARY(log, std::log(a))
UFUNC_UNARY(log2, std::log2(a))
UFUNC_UNARY(log10, std::log10(a))
UFUNC_UNARY(log1p, std::log1p(a))
UFUNC_UNARY(sin, std::sin(a))
UFUNC_UNARY(cos, std::cos(a))
UFUNC_UNARY(tan, std::tan(a))
UFUNC_UNARY(asin, std::asin(a))
UFUNC_UNARY(acos, std::acos(a))
UFUNC_UNARY(atan, std::atan(a))
UFUNC_UNARY(sinh, std::sinh(a))
UFUNC_UNARY(cosh, std::cosh(a))
UFUNC_UNARY(tanh, std::tanh(a))
UFUNC_UNARY(asinh, std::asinh(a))
UFUNC_UNARY(acosh, std::acosh(a))
UFUNC_UNARY(atanh, std::atanh(a))
UFUNC_UNARY(erf, std::erf(a))
UFUNC_UNARY(erfc, std::erfc(a))
UFUNC_UNARY(lgamma, std::lgamma(a))
UFUNC_UNARY(floor, std::floor(a))
UFUNC_UNARY(ceil, std::ceil(a))
UFUNC_UNARY(round, std::nearbyint(a))
UFUNC_UNARY(trunc, std::trunc(a))
UFUNC_UNARY(frac, a - std::trunc(a))
UFUNC_UNARY(reciprocal, acc_t(1) / a)
UFUNC_UNARY(sigmoid, acc_t(1) / (acc_t(1) + std::exp(-a)))
UFUNC_UNARY(relu, a > acc_t(0) ? a : acc_t(0))
UFUNC_UNARY(gelu, acc_t(0.5) * a * (acc_t(1) + std::erf(a * acc_t(M_SQRT1_2))))
UFUNC_UNARY(silu, a / (acc_t(1) + std::exp(-a)))
UFUNC_UNARY(mish, a * std::tanh(std::log1p(std::exp(a))))
UFUNC_UNARY(softplus, std::log1p(std::exp(a)))
UFUNC_UNARY(hardtanh, std::min(std::max(a, acc_t(-1)), acc_t(1)))
UFUNC_UNARY(hardsigmoid, std::min(std::max(a / acc_t(6) + acc_t(0.5), acc_t(0)), acc_t(1)))
UFUNC_UNARY(hardswish, a * std::min(std::max(a + acc_t(3), acc_t(0)), acc_t(6)) / acc_t(6))
UFUNC_UNARY(elu, a > acc_t(0) ? a : std::expm1(a))
UFUNC_UNARY(selu, acc_t(1.0507009873554805) * (a > acc_t(0) ? a : acc_t(1.6732632423543772) * std::expm1(a)))
UFUNC_UNARY(celu, std::max(acc_t(0), a) + std::min(acc_t(0), std::expm1(a)))
UFUNC_UNARY(logit, std::log(a / (acc_t(1) - a)))
UFUNC_UNARY(square, a * a)
UFUNC_UNARY(cbrt, std::cbrt(a))
UFUNC_UNARY(sinc, a == acc_t(0) ? acc_t(1) : std::sin(acc_t(M_PI) * a) / (acc_t(M_PI) * a))
UFUNC_UNARY(deg2rad, a * acc_t(M_PI / 180.0))
UFUNC_UNARY(rad2deg, a * acc_t(180.0 / M_PI))
UFUNC_UNARY(angle, a < acc_t(0) ? acc_t(M_PI) : acc_t(0))
UFUNC_UNARY(signbit, acc_t(std::signbit(a)))
UFUNC_UNARY(bitwise_not, acc_t(~static_cast<int64_t>(a)))
UFUNC_UNARY(logical_not, acc_t(a == acc_t(0)))

UFUNC_BINARY(add, a + b)
UFUNC_BINARY(sub, a - b)
UFUNC_BINARY(mul, a * b)
UFUNC_BINARY(div, a / b)
UFUNC_BINARY(remainder, a - b * std::floor(a / b))
UFUNC_BINARY(fmod, std::fmod(a, b))
UFUNC_BINARY(pow, std::pow(a, b))
UFUNC_BINARY(atan2, std::atan2(a, b))
UFUNC_BINARY(hypot, std::hypot(a, b))
UFUNC_BINARY(maximum, a > b ? a : b)
UFUNC_BINARY(minimum, a < b ? a : b)
UFUNC_BINARY(fmax, std::fmax(a, b))
UFUNC_BINARY(fmin, std::fmin(a, b))
UFUNC_BINARY(copysign, std::copysign(a, b))
UFUNC_BINARY(nextafter, std::nextafter(a, b))
UFUNC_BINARY(logaddexp, std::max(a, b) + std::log1p(std::exp(-std::abs(a - b))))
UFUNC_BINARY(logaddexp2, std::max(a, b) + std::log2(acc_t(1) + std::exp2(-std::abs(a - b))))
UFUNC_BINARY(xlogy, a == acc_t(0) ? acc_t(0) : a * std::log(b))
UFUNC_BINARY(eq, acc_t(a == b))
UFUNC_BINARY(ne, acc_t(a != b))
UFUNC_BINARY(lt, acc_t(a < b))
UFUNC_BINARY(le, acc_t(a <= b))
UFUNC_BINARY(gt, acc_t(a > b))
UFUNC_BINARY(ge, acc_t(a >= b))
UFUNC_BINARY(logical_and, acc_t(a != acc_t(0) && b != acc_t(0)))
UFUNC_BINARY(logical_or, acc_t(a != acc_t(0) || b != acc_t(0)))
UFUNC_BINARY(logical_xor, acc_t((a != acc_t(0)) != (b != acc_t(0))))
UFUNC_BINARY(bitwise_and, acc_t(static_cast<int64_t>(a) & static_cast<int64_t>(b)))
UFUNC_BINARY(bitwise_or, acc_t(static_cast<int64_t>(a) | static_cast<int64_t>(b)))
UFUNC_BINARY(bitwise_xor, acc_t(static_cast<int64_t>(a) ^ static_cast<int64_t>(b)))
UFUNC_BINARY(bitwise_left_shift, acc_t(static_cast<int64_t>(a) << (static_cast<int64_t>(b) & 63)))
UFUNC_BINARY(bitwise_right_shift, acc_t(static_cast<int64_t>(a) >> (static_cast<int64_t>(b) & 63)))
UFUNC_BINARY(floor_divide, std::floor(a / b))
UFUNC_BINARY(heaviside, a == acc_t(0) ? b : acc_t(a > acc_t(0)))
UFUNC_BINARY(threshold_backward, b <= acc_t(0) ? acc_t(0) : a)
UFUNC_BINARY(sigmoid_backward, a * (acc_t(1) - b) * b)
UFUNC_BINARY(tanh_backward, a * (acc_t(1) - b * b))
UFUNC_BINARY(gelu_backward, a * (acc_t(0.5) * (acc_t(1) + std::erf(b * acc_t(M_SQRT1_2))) + b * std::exp(acc_t(-0.5) * b * b) * acc_t(0.3989422804014327)))
UFUNC_BINARY(silu_backward, a * (acc_t(1) / (acc_t(1) + std::exp(-b))) * (acc_t(1) + b * (acc_t(1) - acc_t(1) / (acc_t(1) + std::exp(-b)))))
UFUNC_BINARY(elu_backward, a * (b > acc_t(0) ? acc_t(1) : std::exp(b)))
UFUNC_BINARY(softplus_backward, a / (acc_t(1) + std::exp(-b)))
UFUNC_BINARY(hardtanh_backward, (b <= acc_t(-1) || b >= acc_t(1)) ? acc_t(0) : a)
UFUNC_BINARY(hardsigmoid_backward, (b > acc_t(-3) && b < acc_t(3)) ? a / acc_t(6) : acc_t(0))
UFUNC_BINARY(hardswish_backward, b < acc_t(-3) ? acc_t(0) : b <= acc_t(3) ? a * ((b / acc_t(3)) + acc_t(0.5)) : a)
UFUNC_BINARY(mish_backward, a * (std::tanh(std::log1p(std::exp(b))) + b * (acc_t(1) - std::tanh(std::log1p(std::exp(b))) * std::tanh(std::log1p(std::exp(b)))) / (acc_t(1) + std::exp(-b))))

#undef UFUNC_UNARY
#undef UFUNC_BINARY

}  // namespace at::native::ufunc
