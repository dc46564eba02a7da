#
# Stand-in UCX (rehearsal): ROCm, as UCX's config/m4/rocm.m4 finds it.
#
# --with-rocm=DIR (default: guess /opt/rocm). ROCm is the HSA runtime
# (hsa.h, hsa_ext_amd.h, libhsa-runtime64) for the rocm transports and the
# HIP runtime (hip_runtime.h, libamdhip64) for HIP code. Not found only
# warns: UCX then builds without its ROCm modules, which is why a recipe that
# needs them must look for lib/ucx/libuct_rocm.so itself.
#
# The stand-in compiles one HIP kernel into libuct_rocm with hipcc; the code
# objects are for --with-rocm-arch (a comma or semicolon list), by default the
# build's PYTORCH_ROCM_ARCH, else hipcc's own default target.
#
AC_DEFUN([UCX_CHECK_ROCM],[

AC_ARG_WITH([rocm],
    [AS_HELP_STRING([--with-rocm=(DIR)], [Enable the use of ROCm (default is autodetect).])],
    [], [with_rocm=guess])
AC_ARG_WITH([rocm-arch],
    [AS_HELP_STRING([--with-rocm-arch=LIST],
        [GPU targets of the HIP code (default: $PYTORCH_ROCM_ARCH, else hipcc's default)])],
    [], [with_rocm_arch="${PYTORCH_ROCM_ARCH:-}"])

rocm_happy=no
hip_happy=no
rocm_arch=""
AS_IF([test "x$with_rocm" != xno],
    [AS_CASE(["x$with_rocm"],
        [x|xguess|xyes], [AC_MSG_NOTICE([ROCm path was not specified. Guessing ...])
                          with_rocm=/opt/rocm],
        [AC_MSG_NOTICE([ROCm path given as $with_rocm ...])])
     ROCM_ROOT=$with_rocm
     ROCM_CPPFLAGS="-I$with_rocm/include/hsa -I$with_rocm/include"
     ROCM_LDFLAGS="-L$with_rocm/lib -L$with_rocm/lib64"
     ROCM_LIBS="-lhsa-runtime64"
     HIP_CPPFLAGS="-D__HIP_PLATFORM_AMD__ -I$with_rocm/include"
     HIP_LDFLAGS="-L$with_rocm/lib"
     HIP_LIBS="-lamdhip64"

     save_CPPFLAGS=$CPPFLAGS; save_LDFLAGS=$LDFLAGS; save_LIBS=$LIBS
     CPPFLAGS="$ROCM_CPPFLAGS $CPPFLAGS"; LDFLAGS="$ROCM_LDFLAGS $LDFLAGS"
     rocm_happy=yes
     AC_CHECK_HEADERS([hsa.h hsa_ext_amd.h], [], [rocm_happy=no])
     AS_IF([test "x$rocm_happy" = xyes],
           [AC_CHECK_LIB([hsa-runtime64], [hsa_init], [:], [rocm_happy=no])])
     CPPFLAGS="$HIP_CPPFLAGS $save_CPPFLAGS"; LDFLAGS="$HIP_LDFLAGS $save_LDFLAGS"
     AS_IF([test "x$rocm_happy" = xyes],
           [hip_happy=yes
            AC_CHECK_HEADER([hip/hip_runtime_api.h], [], [hip_happy=no])
            AS_IF([test "x$hip_happy" = xyes],
                  [AC_CHECK_LIB([amdhip64], [hipFree], [:], [hip_happy=no])])
            AC_PATH_PROG([HIPCC], [hipcc], [], [$with_rocm/bin:$PATH])
            AS_IF([test -z "$HIPCC"], [hip_happy=no])])
     CPPFLAGS=$save_CPPFLAGS; LDFLAGS=$save_LDFLAGS; LIBS=$save_LIBS

     AS_IF([test "x$rocm_happy" = xyes && test "x$hip_happy" = xno],
           [AC_MSG_WARN([HIP runtime or hipcc not found under $with_rocm: no ROCm transports])
            rocm_happy=no])
     AS_IF([test "x$rocm_happy" = xyes],
           [AC_DEFINE([HAVE_ROCM], 1, [Enable ROCM support])
            rocm_arch=$(echo "$with_rocm_arch" | tr ',;' '  ')
            HIPCC_ARCH_FLAGS=""
            for arch in $rocm_arch; do
                HIPCC_ARCH_FLAGS="$HIPCC_ARCH_FLAGS --offload-arch=$arch"
            done],
           [AC_MSG_WARN([ROCm not found])])],
    [AC_MSG_WARN([ROCm was explicitly disabled])])

AC_DEFINE_UNQUOTED([UCT_ROCM_ARCHS], ["$(echo $rocm_arch)"], [GPU targets of the ROCm kernels])
AC_SUBST([ROCM_ROOT])
AC_SUBST([ROCM_CPPFLAGS])
AC_SUBST([ROCM_LDFLAGS])
AC_SUBST([ROCM_LIBS])
AC_SUBST([HIP_CPPFLAGS])
AC_SUBST([HIP_LDFLAGS])
AC_SUBST([HIP_LIBS])
AC_SUBST([HIPCC_ARCH_FLAGS])
AM_CONDITIONAL([HAVE_ROCM], [test "x$rocm_happy" = xyes])
])
