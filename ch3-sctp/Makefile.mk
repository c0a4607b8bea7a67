##
## ch3:sctp, the sctp-mpi project's channel (see README.md in the project's ch3-sctp/)
##

include $(top_srcdir)/src/mpid/ch3/channels/sctp/src/Makefile.mk

if BUILD_CH3_SCTP

AM_CPPFLAGS +=                                           \
    -I$(top_srcdir)/src/mpid/ch3/channels/sctp/include   \
    -I$(top_builddir)/src/mpid/ch3/channels/sctp/include

noinst_HEADERS +=                                       \
    src/mpid/ch3/channels/sctp/include/mpidi_ch3_pre.h  \
    src/mpid/ch3/channels/sctp/include/mpidi_ch3_impl.h \
    src/mpid/ch3/channels/sctp/include/mpidi_ch3_post.h

endif BUILD_CH3_SCTP
