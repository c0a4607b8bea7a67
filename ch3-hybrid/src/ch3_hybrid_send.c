/*
 * ch3:hybrid -- the send path: ch3:sctp's, compiled here with its one call to the core
 * (sctpt_send) going to sctph_send, which takes one-sided packets over as RDMA and holds the
 * other RMA packets behind RDMA work still in flight (ch3_hybrid_rma.c). Everything else is
 * ch3:sctp's code unchanged.
 */
#include "ch3_hybrid.h"

#define sctpt_send sctph_send
#include "sctp/ch3_sctp_send.c"
