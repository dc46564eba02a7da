# AOTriton for SDPA on ROCm (rehearsal stand-in): the pin docker/'s
# build-aotriton.sh reads, in the form PyTorch's own file has it.
if(NOT __AOTRITON_INCLUDED)
  set(__AOTRITON_INCLUDED TRUE)
  set(__AOTRITON_VER "0.11.0b")
  set(__AOTRITON_CI_COMMIT "@aotriton@")
  set(__AOTRITON_CI_COMMIT "$ENV{PYTORCH_AOTRITON_COMMIT}" CACHE STRING "" FORCE)
  if(DEFINED ENV{AOTRITON_INSTALLED_PREFIX})
    set(__AOTRITON_INSTALL_DIR "$ENV{AOTRITON_INSTALLED_PREFIX}")
  endif()
endif()
