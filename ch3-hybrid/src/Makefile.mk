##
## ch3:hybrid sources: ch3:sctp's init and configuration as they are, its send path and
## progress engine through hybrid's wrappers (which include them), and the RDMA files.
##

# unconditional: the error-name list does not depend on configure's choices (scripts/
# mpich-build.sh writes it: ch3:sctp's keys, then ch3:hybrid's)
errnames_txt_files += src/mpid/ch3/channels/hybrid/src/errnames.txt

if BUILD_CH3_HYBRID

mpi_core_sources +=                                           \
    src/mpid/ch3/channels/hybrid/src/sctp/ch3_sctp_init.c     \
    src/mpid/ch3/channels/hybrid/src/sctp/ch3_sctp_config.c   \
    src/mpid/ch3/channels/hybrid/src/ch3_hybrid_send.c        \
    src/mpid/ch3/channels/hybrid/src/ch3_hybrid_progress.c    \
    src/mpid/ch3/channels/hybrid/src/ch3_hybrid_rnic.c        \
    src/mpid/ch3/channels/hybrid/src/ch3_hybrid_rma.c         \
    src/mpid/ch3/channels/hybrid/src/ch3_hybrid_win.c

noinst_HEADERS +=                                     \
    src/mpid/ch3/channels/hybrid/src/ch3_hybrid.h     \
    src/mpid/ch3/channels/hybrid/src/sctp/ch3_sctp.h

endif BUILD_CH3_HYBRID
