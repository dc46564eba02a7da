// NIXL (rehearsal stand-in): the GPU side of descriptor lists.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
// Gathers `count` blocks of `block` bytes at `src + offsets[i]` into `dst`, on
// the GPU (a HIP kernel); 0 or the HIP error code.
int nixlRocmGather(void *dst, const void *src, const uint64_t *offsets, size_t count,
                   size_t block);
// The GPU targets the kernel's code objects were compiled for.
const char *nixlRocmTargets();
}
