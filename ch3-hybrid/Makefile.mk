##
## ch3:hybrid, the sctp-mpi project's channel (see README.md in the project's ch3-hybrid/)
##

include $(top_srcdir)/src/mpid/ch3/channels/hybrid/src/Makefile.mk

if BUILD_CH3_HYBRID

AM_CPPFLAGS +=                                             \
    -I$(top_srcdir)/src/mpid/ch3/channels/hybrid/include   \
    -I$(top_builddir)/src/mpid/ch3/channels/hybrid/include

noinst_HEADERS +=                                              \
    src/mpid/ch3/channels/hybrid/include/mpidi_ch3_pre.h       \
    src/mpid/ch3/channels/hybrid/include/mpidi_ch3_impl.h      \
    src/mpid/ch3/channels/hybrid/include/mpidi_ch3_post.h      \
    src/mpid/ch3/channels/hybrid/include/sctp/mpidi_ch3_pre.h  \
    src/mpid/ch3/channels/hybrid/include/sctp/mpidi_ch3_impl.h \
    src/mpid/ch3/channels/hybrid/include/sctp/mpidi_ch3_post.h

endif BUILD_CH3_HYBRID
