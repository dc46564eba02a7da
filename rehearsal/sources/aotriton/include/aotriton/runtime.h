// AOTriton runtime (rehearsal stand-in): what the stand-in PyTorch calls.
#pragma once
namespace aotriton {
// The architectures this build has kernel images for (;-separated).
const char* target_archs();
}  // namespace aotriton
