/*
 * ch3:hybrid -- ch3:sctp's implementation header (progress init/finalize, no shared-memory
 * windows).
 */
#ifndef MPIDI_CH3_HYBRID_IMPL_H_INCLUDED
#define MPIDI_CH3_HYBRID_IMPL_H_INCLUDED

#include "sctp/mpidi_ch3_impl.h"

#endif /* MPIDI_CH3_HYBRID_IMPL_H_INCLUDED */
