# Find ROCm and set the HIP language up, as PyTorch's cmake/public/LoadHIP.cmake:
# ROCM_PATH (default /opt/rocm), the GPU archs from PYTORCH_ROCM_ARCH
# (torch_hip_get_arch_list, archs separated by ';' or ' '), CMake's HIP
# language with those archs (CMAKE_HIP_ARCHITECTURES; the compiler cache
# comes in through CMAKE_HIP_COMPILER_LAUNCHER), and the ROCm libraries
# cmake/Dependencies.cmake links, each required.
if(DEFINED ENV{ROCM_PATH})
  set(ROCM_PATH $ENV{ROCM_PATH})
else()
  set(ROCM_PATH /opt/rocm)
endif()
if(NOT EXISTS "${ROCM_PATH}/.info/version")
  message(FATAL_ERROR "No ROCm at ROCM_PATH=${ROCM_PATH} (no .info/version)")
endif()
file(READ "${ROCM_PATH}/.info/version" ROCM_VERSION_DEV)
string(REGEX MATCH "^[0-9]+\\.[0-9]+\\.[0-9]+" ROCM_VERSION "${ROCM_VERSION_DEV}")
message(STATUS "ROCm ${ROCM_VERSION} at ${ROCM_PATH}")

set(PYTORCH_ROCM_ARCH "$ENV{PYTORCH_ROCM_ARCH}")
if(NOT PYTORCH_ROCM_ARCH)
  message(FATAL_ERROR "PYTORCH_ROCM_ARCH is not set: name the GPU archs to build for (gfx...)")
endif()
string(REPLACE " " ";" PYTORCH_ROCM_ARCH "${PYTORCH_ROCM_ARCH}")
message(STATUS "Compiling with HIP for ${PYTORCH_ROCM_ARCH}")
set(CMAKE_HIP_ARCHITECTURES "${PYTORCH_ROCM_ARCH}")
list(APPEND CMAKE_PREFIX_PATH "${ROCM_PATH}" "${ROCM_PATH}/lib/cmake")
enable_language(HIP)
find_package(hip REQUIRED CONFIG PATHS "${ROCM_PATH}/lib/cmake/hip" NO_DEFAULT_PATH)

# What cmake/Dependencies.cmake puts in Caffe2_PUBLIC_HIP_DEPENDENCY_LIBS and
# Caffe2_HIP_DEPENDENCY_LIBS, LoadHIP.cmake's hsa-runtime64 and rocm_smi,
# and MIOpen's roctx64, by their names under ROCM_PATH/lib. hipSPARSELt by
# its soname: Debian has no -dev package for it (docs/rehearsal.md).
set(TORCH_ROCM_LIBRARIES)
foreach(name amdhip64 MIOpen hipblaslt hipblas rocblas hipfft hiprand hipsparse hipsolver
        rocsolver hiprtc roctx64 hsa-runtime64 rocm_smi64 libhipsparselt.so.0)
  string(MAKE_C_IDENTIFIER "${name}" var)
  find_library(ROCM_LIB_${var} NAMES ${name} PATHS "${ROCM_PATH}/lib" NO_DEFAULT_PATH)
  if(NOT ROCM_LIB_${var})
    message(FATAL_ERROR "No ${name} in ${ROCM_PATH}/lib: PyTorch's ROCm build links it"
                        " (cmake/Dependencies.cmake)")
  endif()
  list(APPEND TORCH_ROCM_LIBRARIES "${ROCM_LIB_${var}}")
endforeach()
