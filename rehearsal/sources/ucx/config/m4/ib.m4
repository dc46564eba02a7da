#
# Stand-in UCX (rehearsal): InfiniBand verbs, RDMA CM and device memory.
# Asked for by name (--with-verbs, --with-rdmacm, --with-dm) and missing is an
# error; left to be guessed, a warning.
#
AC_DEFUN([UCX_CHECK_IB],[

AC_ARG_WITH([verbs],
    [AS_HELP_STRING([--with-verbs(=DIR)], [InfiniBand verbs transport (default: guess)])],
    [], [with_verbs=guess])
AC_ARG_WITH([rdmacm],
    [AS_HELP_STRING([--with-rdmacm(=DIR)], [RDMA CM connection manager (default: guess)])],
    [], [with_rdmacm=guess])
AC_ARG_WITH([dm],
    [AS_HELP_STRING([--with-dm], [Device memory of the NIC (default: guess)])],
    [], [with_dm=guess])

verbs_happy=no
rdmacm_happy=no
AS_IF([test "x$with_verbs" != xno],
    [AS_CASE(["x$with_verbs"], [x/*], [IBVERBS_CPPFLAGS="-I$with_verbs/include"
                                       IBVERBS_LDFLAGS="-L$with_verbs/lib"])
     save_CPPFLAGS=$CPPFLAGS; save_LDFLAGS=$LDFLAGS
     CPPFLAGS="$IBVERBS_CPPFLAGS $CPPFLAGS"; LDFLAGS="$IBVERBS_LDFLAGS $LDFLAGS"
     verbs_happy=yes
     AC_CHECK_HEADER([infiniband/verbs.h], [], [verbs_happy=no])
     AS_IF([test "x$verbs_happy" = xyes],
           [AC_CHECK_LIB([ibverbs], [ibv_get_device_list], [:], [verbs_happy=no])])
     AS_IF([test "x$verbs_happy" = xyes && test "x$with_dm" != xno],
           [AC_CHECK_DECLS([ibv_alloc_dm], [AC_DEFINE([HAVE_IBV_DM], 1, [NIC device memory])],
                [AS_IF([test "x$with_dm" = xyes],
                       [AC_MSG_ERROR([--with-dm: this libibverbs has no ibv_alloc_dm])])],
                [[#include <infiniband/verbs.h>]])])
     AS_IF([test "x$with_rdmacm" != xno && test "x$verbs_happy" = xyes],
           [rdmacm_happy=yes
            AC_CHECK_HEADER([rdma/rdma_cma.h], [], [rdmacm_happy=no])
            AS_IF([test "x$rdmacm_happy" = xyes],
                  [AC_CHECK_LIB([rdmacm], [rdma_create_event_channel], [:], [rdmacm_happy=no])])])
     CPPFLAGS=$save_CPPFLAGS; LDFLAGS=$save_LDFLAGS])

AS_IF([test "x$verbs_happy" = xno],
      [AS_CASE(["x$with_verbs"],
               [xguess|xno], [AC_MSG_WARN([InfiniBand verbs not found: no ib transport])],
               [AC_MSG_ERROR([--with-verbs: infiniband/verbs.h or libibverbs not found])])])
AS_IF([test "x$rdmacm_happy" = xno],
      [AS_CASE(["x$with_rdmacm"],
               [xguess|xno], [AC_MSG_WARN([RDMA CM not found: no rdmacm transport])],
               [AC_MSG_ERROR([--with-rdmacm: rdma/rdma_cma.h or librdmacm not found])])])
AC_SUBST([IBVERBS_CPPFLAGS])
AC_SUBST([IBVERBS_LDFLAGS])
AM_CONDITIONAL([HAVE_IB], [test "x$verbs_happy" = xyes])
AM_CONDITIONAL([HAVE_RDMACM], [test "x$rdmacm_happy" = xyes])
])
