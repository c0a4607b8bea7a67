##
## ch3:sctp sources
##

# unconditional: the error-name list does not depend on configure's choices
errnames_txt_files += src/mpid/ch3/channels/sctp/src/errnames.txt

if BUILD_CH3_SCTP

mpi_core_sources +=                                    \
    src/mpid/ch3/channels/sctp/src/ch3_sctp_init.c     \
    src/mpid/ch3/channels/sctp/src/ch3_sctp_config.c   \
    src/mpid/ch3/channels/sctp/src/ch3_sctp_send.c     \
    src/mpid/ch3/channels/sctp/src/ch3_sctp_progress.c \
    src/mpid/ch3/channels/sctp/src/ch3_sctp_win.c

noinst_HEADERS += src/mpid/ch3/channels/sctp/src/ch3_sctp.h

endif BUILD_CH3_SCTP
