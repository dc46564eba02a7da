// CUTLASS (rehearsal stand-in): the header flash-attention's CUDA build checks for.
#pragma once
#define CUTLASS_MAJOR 4
