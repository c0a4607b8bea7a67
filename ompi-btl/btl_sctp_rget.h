/*
 * btl sctp RGET over the streams: ob1's RDMA-get rendezvous to peers that the core reaches
 * over SCTP. ob1 sends a message above the eager limit from contiguous memory by handing the
 * receiver a registration of its buffer (an RGET header) and the receiver gets the data with
 * btl_get. Here that get is a request to the owner's BTL, which sends the bytes from the
 * user's buffer as one core message; the receiver's core places them straight into the
 * receive buffer as they arrive (recv_buf). Against ob1's send pipeline this saves ob1's copy
 * of every fragment out of the BTL's buffer, and its per-fragment work.
 *
 * Same-host peers whose memory the kernel lets us read keep the one-copy process path
 * (btl_sctp_rdma.c); osc rdma's windows keep iWARP.
 */
#ifndef MCA_BTL_SCTP_RGET_H
#define MCA_BTL_SCTP_RGET_H

#include "btl_sctp.h"

BEGIN_C_DECLS

/* ob1's point-to-point registrations with a peer over SCTP (the sender's REMOTE_READ, the
 * receiver's REMOTE_WRITE): returns 1 and sets *out to the stream handle (nothing is
 * registered) when the registration is ours, 0 when the caller should register as before. */
int mca_btl_sctp_rget_register(struct mca_btl_base_endpoint_t *endpoint, uint32_t flags,
			       mca_btl_base_registration_handle_t **out);
/* The handle is the stream handle (remote: its bytes; local: the pointer register gave). */
bool mca_btl_sctp_rget_handle(const mca_btl_base_registration_handle_t *handle);
bool mca_btl_sctp_rget_own_handle(const mca_btl_base_registration_handle_t *handle);
/* btl_get on a stream handle: asks the owner for the bytes; cbfunc once they are in place. */
int mca_btl_sctp_rget_get(struct mca_btl_base_module_t *btl,
			  struct mca_btl_base_endpoint_t *endpoint, void *local_address,
			  uint64_t remote_address,
			  struct mca_btl_base_registration_handle_t *local_handle, size_t size,
			  mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);

/* The core's side, for the component's handler: contexts GET_REQ and GET_DATA. */
bool mca_btl_sctp_rget_context(uint32_t context);
/* Runs under the core's lock: the destination of a GET_DATA message, or NULL. */
void *mca_btl_sctp_rget_recv_buf(sctpt_peer_t peer, int32_t tag, size_t len, void **cookie);
void mca_btl_sctp_rget_complete(const struct sctpt_cqe *c);

void mca_btl_sctp_rget_open(void);
/* After the core endpoint closed: operations whose data never came are dropped. */
void mca_btl_sctp_rget_close(void);

END_C_DECLS
#endif /* MCA_BTL_SCTP_RGET_H */
