# ATen's generated sources, as PyTorch's cmake/Codegen.cmake: torchgen writes
# them at configure time (again when native_functions.yaml or torchgen
# changes), and each CPU kernel file is copied once per CPU capability and
# compiled with that capability's flags (-DCPU_CAPABILITY=AVX2 -mavx2 -mfma),
# the DispatchStub picking one at run time.
set(ATen_GEN_DIR "${CMAKE_BINARY_DIR}/aten/src/ATen")
set(ATen_YAML "${PROJECT_SOURCE_DIR}/aten/src/ATen/native/native_functions.yaml")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  "${ATen_YAML}" "${PROJECT_SOURCE_DIR}/torchgen/gen.py")
execute_process(
  COMMAND "${Python_EXECUTABLE}" -m torchgen.gen
          --source-path "${PROJECT_SOURCE_DIR}/aten/src/ATen"
          --install-dir "${ATen_GEN_DIR}"
          --output-dependencies "${CMAKE_BINARY_DIR}/generated_sources.txt"
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
  RESULT_VARIABLE torchgen_result)
if(NOT torchgen_result EQUAL 0)
  message(FATAL_ERROR "torchgen failed (${torchgen_result}): see its output above")
endif()
file(READ "${CMAKE_BINARY_DIR}/generated_sources.txt" ATen_GENERATED)

set(CPU_CAPABILITY_NAMES DEFAULT)
set(CPU_CAPABILITY_FLAGS_DEFAULT "")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  list(APPEND CPU_CAPABILITY_NAMES AVX2)
  set(CPU_CAPABILITY_FLAGS_AVX2 -mavx2 -mfma -mf16c -DCPU_CAPABILITY_AVX2)
endif()

set(ATen_CPU_GENERATED_SRCS)
set(ATen_CUDA_GENERATED_SRCS)
set(ATen_CPU_KERNEL_SRCS)
foreach(file ${ATen_GENERATED})
  get_filename_component(name "${file}" NAME)
  if(name MATCHES "^UfuncCPUKernel_.*\\.cpp$")
    get_filename_component(stem "${file}" NAME_WE)
    foreach(capability ${CPU_CAPABILITY_NAMES})
      set(copy "${ATen_GEN_DIR}/native/cpu/${stem}.cpp.${capability}.cpp")
      configure_file("${file}" "${copy}" COPYONLY)
      set_source_files_properties("${copy}" PROPERTIES
        COMPILE_OPTIONS "-DCPU_CAPABILITY=${capability};${CPU_CAPABILITY_FLAGS_${capability}}")
      list(APPEND ATen_CPU_KERNEL_SRCS "${copy}")
    endforeach()
  elseif(name MATCHES "^RegisterCUDA_.*\\.cpp$")
    list(APPEND ATen_CUDA_GENERATED_SRCS "${file}")
  elseif(name MATCHES "\\.cpp$")
    list(APPEND ATen_CPU_GENERATED_SRCS "${file}")
  endif()
endforeach()
list(LENGTH ATen_CPU_KERNEL_SRCS n_kernels)
list(LENGTH ATen_CPU_GENERATED_SRCS n_generated)
message(STATUS "ATen: ${n_generated} generated sources, ${n_kernels} CPU kernel builds"
               " (${CPU_CAPABILITY_NAMES})")
