/*
 * btl sctp endpoint: one peer process as seen by the module -- its proc, its id in the core's
 * peer table, and how many of our sends to it are queued in the core. Connections are lazy:
 * the core starts the association on the first send.
 */
#ifndef MCA_BTL_SCTP_ENDPOINT_H
#define MCA_BTL_SCTP_ENDPOINT_H

#include "btl_sctp.h"
#include "btl_sctp_frag.h"
#include "btl_sctp_proc.h"

BEGIN_C_DECLS

struct mca_btl_base_endpoint_t {
	opal_list_item_t super;
	mca_btl_sctp_module_t *btl;
	mca_btl_sctp_proc_t *proc;
	sctpt_peer_t peer;
	volatile int32_t inflight; /* sends queued in the core, each owed one SEND completion */
	volatile int32_t reported; /* its loss was reported (once) */
	volatile int32_t closed;   /* it closed its endpoint in order (SCTPT_EV_PEER_CLOSED) */
	volatile int32_t in_use;   /* between add_procs and del_procs: ob1 may expect traffic */
	struct iw_qp *qp;          /* RDMA queue pair to the peer, NULL without RDMA */
	volatile int32_t rdma_ops; /* RDMA operations posted and not yet completed */
	/* puts whose Write is posted with no fence Read behind it yet, the target of the last
	 * one (where the next fence reads) and the fences in flight; all under flush_lock:
	 * threads put and flush at once */
	opal_mutex_t flush_lock;
	struct sctp_rdma_op *unfenced, **unfenced_tail;
	int fences;
	uint32_t flush_stag;
	uint64_t flush_addr;
};
typedef struct mca_btl_base_endpoint_t mca_btl_base_endpoint_t;
typedef mca_btl_base_endpoint_t mca_btl_sctp_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_endpoint_t);

/* The endpoint of proc, known to the core as peer (sctpt_peer_add: no traffic yet). */
int mca_btl_sctp_endpoint_create(mca_btl_sctp_module_t *btl, mca_btl_sctp_proc_t *proc,
				 sctpt_peer_t peer, mca_btl_sctp_endpoint_t **out);
/* Hands frag's segments to the core as one message. Returns 1 if the core took the data
 * already (frag done, no completion), OPAL_SUCCESS if queued (exactly one SEND completion
 * follows), or an OPAL error after reporting the peer (no completion: the caller still owns
 * the frag). */
int mca_btl_sctp_endpoint_send(mca_btl_sctp_endpoint_t *endpoint, mca_btl_sctp_frag_t *frag,
			       mca_btl_base_tag_t tag);

END_C_DECLS
#endif /* MCA_BTL_SCTP_ENDPOINT_H */
