/*
 * ch3:hybrid -- what the channel adds to CH3's types: ch3:sctp's (its VC fields, progress
 * state), plus a pointer in each window to the window's RDMA state (src/ch3_hybrid.h).
 * scripts/mpich-build.sh puts ch3:sctp's headers in include/sctp/.
 */
#ifndef MPIDI_CH3_HYBRID_PRE_H_INCLUDED
#define MPIDI_CH3_HYBRID_PRE_H_INCLUDED

#include "sctp/mpidi_ch3_pre.h"

struct sctph_win;
#define MPIDI_CH3_WIN_DECL struct sctph_win *sctph;

/* MPI_Alloc_mem registers the memory with the iWARP layer: a window over it needs no
 * registration of its own. */
#define MPIDI_CH3I_HAS_ALLOC_MEM
#define MPIDI_CH3I_HAS_FREE_MEM

#endif /* MPIDI_CH3_HYBRID_PRE_H_INCLUDED */
