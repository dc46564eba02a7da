/* cpuinfo (rehearsal stand-in): the one call the stand-in PyTorch makes. */
#pragma once
static inline int cpuinfo_initialize(void) { return 1; }
