/*
 * ch3:hybrid -- the progress engine: ch3:sctp's, compiled here with its poll of the core
 * (sctpt_progress) also moving the iWARP layer's work and reading its completions, as its
 * blocking wait does before and after it sleeps in the core (SCTPC_RDMA_PROGRESS), and its
 * closing of the endpoint closing the iWARP layer first (sctph_progress,
 * sctph_rdma_progress, sctph_close in ch3_hybrid_rnic.c). The core hands the iWARP layer its
 * segments in the same sctpt_progress / sctpt_wait calls.
 */
#include "ch3_hybrid.h"

#define sctpt_progress sctph_progress
#define SCTPC_RDMA_PROGRESS() sctph_rdma_progress()
#define sctpt_close sctph_close
#include "sctp/ch3_sctp_progress.c"
