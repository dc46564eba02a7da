#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

namespace c10 {

const char* toString(ScalarType t) {
  switch (t) {
#define CASE(_1, n)     \
  case ScalarType::n: \
    return #n;
    AT_FORALL_SCALAR_TYPES_AND_HALF(CASE)
#undef CASE
    default:
      return "UNKNOWN_SCALAR";
  }
}

size_t elementSize(ScalarType t) {
  switch (t) {
#define CASE(cpp, n)    \
  case ScalarType::n: \
    return sizeof(cpp);
    AT_FORALL_SCALAR_TYPES_AND_HALF(CASE)
#undef CASE
    default:
      TORCH_CHECK(false, "Unknown ScalarType ", static_cast<int>(t));
  }
}

bool isFloatingType(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half ||
         t == ScalarType::BFloat16;
}

bool isIntegralType(ScalarType t) { return !isFloatingType(t) && t != ScalarType::Undefined; }

// The promotion lattice of c10/core/ScalarType.cpp, for the types here: the
// wider float wins, a float beats any integer, Half and BFloat16 meet in Float.
ScalarType promoteTypes(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined || b == ScalarType::Undefined) return ScalarType::Undefined;
  const bool fa = isFloatingType(a), fb = isFloatingType(b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (fa && fb) {
    if (a == ScalarType::Double || b == ScalarType::Double) return ScalarType::Double;
    return ScalarType::Float;
  }
  if (a == ScalarType::Byte || b == ScalarType::Byte) {
    const ScalarType other = a == ScalarType::Byte ? b : a;
    return other == ScalarType::Char ? ScalarType::Short : other;
  }
  return elementSize(a) >= elementSize(b) ? a : b;
}

}  // namespace c10
