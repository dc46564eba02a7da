// The fmha API (rehearsal stand-in): what the generated files define and the
// users (aiter, flash-attention) call.
#pragma once
#include "ck_tile/core.hpp"

struct fmha_args {
    const void* s;
    void* out;
    float* lse;
    float scale;
    int valid;
};

// Each generated fmha_<direction>_api.cpp defines these for its direction:
// how many kernel instances it holds and each one's name.
#define FMHA_DECLARE_API(direction)                                      \
    extern "C" int fmha_##direction##_num_instances();                   \
    extern "C" const char* fmha_##direction##_instance_name(int i);

FMHA_DECLARE_API(fwd)
FMHA_DECLARE_API(fwd_appendkv)
FMHA_DECLARE_API(fwd_splitkv)
FMHA_DECLARE_API(bwd)
