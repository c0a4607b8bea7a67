[#] start of __file__
dnl ch3:hybrid -- ch3:sctp's point-to-point, one-sided communication as RDMA over the iWARP
dnl layer of the sctp-mpi core. The core (libsctpt with transport/iw, usrsctp beneath) is built
dnl outside MPICH by scripts/mpich-build.sh and named with --with-sctpt=DIR (DIR/include:
dnl sctpt.h, iw_verbs.h, fnn.h; DIR/lib: libsctpt_mpich.a).

AC_DEFUN([PAC_SUBCFG_PREREQ_]PAC_SUBCFG_AUTO_SUFFIX,[
    AM_CONDITIONAL([BUILD_CH3_HYBRID],[test "X$device_name" = "Xch3" -a "X$channel_name" = "Xhybrid"])
    AM_COND_IF([BUILD_CH3_HYBRID],[
        AC_MSG_NOTICE([RUNNING PREREQ FOR ch3:hybrid])
        MPID_MAX_THREAD_LEVEL=MPI_THREAD_MULTIPLE
    ])
])dnl

AC_DEFUN([PAC_SUBCFG_BODY_]PAC_SUBCFG_AUTO_SUFFIX,[
AM_COND_IF([BUILD_CH3_HYBRID],[
AC_MSG_NOTICE([RUNNING CONFIGURE FOR ch3:hybrid])
AC_ARG_WITH([sctpt],
    [AS_HELP_STRING([--with-sctpt=DIR],
        [ch3:hybrid: the sctp-mpi transport core with its iWARP layer (DIR/include, DIR/lib/libsctpt_mpich.a)])],
    [], [with_sctpt=no])
if test "X$with_sctpt" = "Xno" -o "X$with_sctpt" = "Xyes" ; then
    AC_MSG_ERROR([ch3:hybrid needs --with-sctpt=DIR (scripts/mpich-build.sh passes it)])
fi
if test ! -f "$with_sctpt/include/iw_verbs.h" -o ! -f "$with_sctpt/lib/libsctpt_mpich.a" ; then
    AC_MSG_ERROR([ch3:hybrid: no iw_verbs.h or libsctpt_mpich.a under $with_sctpt])
fi
PAC_APPEND_FLAG([-I$with_sctpt/include], [CPPFLAGS])
dnl The core is a PIC archive linked into libmpi; usrsctp and pthreads are its dependencies.
PAC_APPEND_FLAG([$with_sctpt/lib/libsctpt_mpich.a], [LIBS])
AC_CHECK_LIB([usrsctp], [usrsctp_init_nothreads], [PAC_APPEND_FLAG([-lusrsctp], [LIBS])],
    [AC_MSG_ERROR([ch3:hybrid needs libusrsctp (Debian: libusrsctp-dev)])])
])dnl end AM_COND_IF(BUILD_CH3_HYBRID,...)
])dnl end _BODY

[#] end of __file__
