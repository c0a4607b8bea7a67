/*
 * ch3:sctp -- one-sided communication: CH3's own RMA over point-to-point packets (ch3:hybrid
 * replaces this with RDMA).
 */
#include "ch3_sctp.h"
#include "mpidrma.h"

int MPIDI_CH3_Win_fns_init(MPIDI_CH3U_Win_fns_t * win_fns ATTRIBUTE((unused)))
{
	return MPI_SUCCESS;
}

int MPIDI_CH3_Win_hooks_init(MPIDI_CH3U_Win_hooks_t * win_hooks ATTRIBUTE((unused)))
{
	return MPI_SUCCESS;
}

int MPIDI_CH3_Win_pkt_orderings_init(MPIDI_CH3U_Win_pkt_ordering_t * orderings)
{
	/* RMA packets to one target share a core context: released in the order sent, so a
	 * flush arrives after the operations before it */
	orderings->am_flush_ordered = 1;
	return MPI_SUCCESS;
}
