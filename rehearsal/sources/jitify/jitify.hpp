// jitify (rehearsal stand-in): the header the stand-in CuPy includes.
#pragma once
namespace jitify {
inline int version() { return 2; }
}  // namespace jitify
