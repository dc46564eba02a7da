// flash_attn_ck (rehearsal stand-in): the CK fmha API the extension is built on.
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "fmha_fwd.hpp"

extern "C" const char* torch_hip_arch_list();  // torch's libtorch_hip.so
