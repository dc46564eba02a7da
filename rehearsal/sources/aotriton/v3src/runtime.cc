// AOTriton runtime (rehearsal stand-in).
#include "aotriton/runtime.h"

namespace aotriton {
const char* target_archs() { return AOTRITON_ARCHS; }
}  // namespace aotriton
