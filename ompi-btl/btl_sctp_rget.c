/*
 * btl sctp RGET over the streams (btl_sctp_rget.h): the receiver's get is a GET_REQ message
 * to the owner of the data, whose BTL answers with the bytes as one GET_DATA message sent from
 * the user's buffer; the receiver's core reassembles it straight into the destination
 * (recv_buf), and the get completes with that message. The owner's buffer stays valid until
 * ob1's FIN, which the receiver sends only after the get completed.
 */
#include "btl_sctp_rget.h"
#include "btl_sctp_endpoint.h"
#include "btl_sctp_frag.h"
#include "btl_sctp_handle.h"
#include "btl_sctp_proc.h"
#include "btl_sctp_rget_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opal/util/output.h"

_Static_assert(MCA_BTL_SCTP_CTX_GET_REQ >= MCA_BTL_TAG_MAX,
	       "the RGET contexts must not be BTL tags");
_Static_assert(sizeof(struct mca_btl_sctp_get_req) == MCA_BTL_SCTP_GET_REQ_LEN,
	       "GET_REQ is 24 bytes on the wire");

/* One get this process asked for: found by its id (its index in rget_ops + 1) when its data
 * arrives. */
struct rget_op {
	mca_btl_sctp_endpoint_t *endpoint;
	void *local_address;
	size_t size;
	mca_btl_base_registration_handle_t *local_handle;
	mca_btl_base_rdma_completion_fn_t cbfunc;
	void *cbcontext, *cbdata;
};

/* What the sender's registration hands out: no memory is registered, the owner's BTL sends
 * from wherever ob1 points it. */
static mca_btl_base_registration_handle_t sctp_stream_handle = {0, SCTP_HANDLE_STREAM};

static opal_pointer_array_t rget_ops;
static bool rget_ops_open;

void mca_btl_sctp_rget_open(void)
{
	OBJ_CONSTRUCT(&rget_ops, opal_pointer_array_t);
	opal_pointer_array_init(&rget_ops, 16, INT32_MAX - 1, 16);
	rget_ops_open = true;
}

void mca_btl_sctp_rget_close(void)
{
	if (!rget_ops_open)
		return;
	for (int i = 0; i < opal_pointer_array_get_size(&rget_ops); i++)
		free(opal_pointer_array_get_item(&rget_ops, i));
	OBJ_DESTRUCT(&rget_ops);
	rget_ops_open = false;
}

/* A peer whose memory the process path reaches (btl_sctp_rdma.c): ob1's RGET is served there. */
static bool sctp_process_peer(mca_btl_sctp_endpoint_t *endpoint, int want)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

	return c->shm_get && (sctpt_peer_mem(c->ep, endpoint->peer) & want);
}

int mca_btl_sctp_rget_register(struct mca_btl_base_endpoint_t *endpoint, uint32_t flags,
			       mca_btl_base_registration_handle_t **out)
{
	const uint32_t remote = MCA_BTL_REG_FLAG_REMOTE_READ | MCA_BTL_REG_FLAG_REMOTE_WRITE |
				MCA_BTL_REG_FLAG_REMOTE_ATOMIC;

	/* osc rdma registers its windows for any endpoint; ob1 per peer */
	if (!mca_btl_sctp_component.rget || NULL == endpoint || MCA_BTL_ENDPOINT_ANY == endpoint)
		return 0;
	/* the sender: the receiver will read this buffer */
	if ((flags & remote) == MCA_BTL_REG_FLAG_REMOTE_READ) {
		if (sctp_process_peer(endpoint, SCTPT_MEM_PEER_READS))
			return 0;
		*out = &sctp_stream_handle;
		return 1;
	}
	/* the receiver of an RGET: our gets register nothing, but ob1 gives up on a get whose
	 * destination got no handle */
	if ((flags & remote) == MCA_BTL_REG_FLAG_REMOTE_WRITE) {
		if (sctp_process_peer(endpoint, SCTPT_MEM_READ))
			return 0;
		*out = &sctp_stream_handle;
		return 1;
	}
	return 0;
}

bool mca_btl_sctp_rget_handle(const mca_btl_base_registration_handle_t *handle)
{
	return NULL != handle && SCTP_HANDLE_STREAM == handle->flags;
}

bool mca_btl_sctp_rget_own_handle(const mca_btl_base_registration_handle_t *handle)
{
	return &sctp_stream_handle == handle;
}

bool mca_btl_sctp_rget_context(uint32_t context)
{
	return MCA_BTL_SCTP_CTX_GET_REQ == context || MCA_BTL_SCTP_CTX_GET_DATA == context;
}

int mca_btl_sctp_rget_get(struct mca_btl_base_module_t *btl,
			  struct mca_btl_base_endpoint_t *endpoint, void *local_address,
			  uint64_t remote_address,
			  struct mca_btl_base_registration_handle_t *local_handle, size_t size,
			  mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	struct mca_btl_sctp_get_req req;
	struct rget_op *op;
	mca_btl_sctp_frag_t *frag;
	int idx, rc;

	if (OPAL_UNLIKELY(size > btl->btl_get_limit))
		return OPAL_ERR_BAD_PARAM;
	op = malloc(sizeof(*op));
	if (NULL == op)
		return OPAL_ERR_OUT_OF_RESOURCE;
	*op = (struct rget_op){endpoint, local_address, size, local_handle, cbfunc, cbcontext,
			       cbdata};
	frag = mca_btl_sctp_frag_alloc(sizeof(req));
	idx = NULL == frag ? -1 : opal_pointer_array_add(&rget_ops, op);
	if (idx < 0) {
		if (NULL != frag)
			mca_btl_sctp_frag_return(frag);
		free(op);
		return OPAL_ERR_OUT_OF_RESOURCE; /* ob1 retries */
	}
	req = (struct mca_btl_sctp_get_req){remote_address, size, idx + 1, 0};
	memcpy(frag->buf, &req, sizeof(req));
	frag->iov[0].iov_base = frag->buf;
	frag->iov[0].iov_len = sizeof(req);
	frag->endpoint = endpoint;
	/* the data may be back and the op complete (another thread's progress) before this
	 * returns: nothing touches op after the send */
	OPAL_THREAD_ADD_FETCH32(&c->rget_inflight, 1);
	rc = sctpt_send(c->ep, endpoint->peer, MCA_BTL_SCTP_CTX_GET_REQ, 0, SCTPT_SEND_UNORDERED,
			frag->iov, 1, frag);
	if (0 == rc)
		return OPAL_SUCCESS; /* its SEND entry returns the frag */
	OPAL_THREAD_ADD_FETCH32(&c->rget_inflight, -1);
	mca_btl_sctp_frag_return(frag);
	if (rc > 0)
		return OPAL_SUCCESS;
	opal_pointer_array_set_item(&rget_ops, idx, NULL);
	free(op);
	mca_btl_sctp_report_fatal(endpoint, rc, sctpt_last_error());
	return OPAL_ERR_UNREACH;
}

void *mca_btl_sctp_rget_recv_buf(sctpt_peer_t peer, int32_t tag, size_t len, void **cookie)
{
	struct rget_op *op = tag > 0 ? opal_pointer_array_get_item(&rget_ops, tag - 1) : NULL;

	if (NULL == op || op->endpoint->peer != peer || op->size != len)
		return NULL; /* the core's buffer: the completion says what is wrong */
	*cookie = op;
	return op->local_address;
}

/* The owner's side: a peer asks for bytes of a buffer ob1 registered for it. */
static void rget_serve(const struct sctpt_cqe *c, mca_btl_sctp_endpoint_t *endpoint)
{
	mca_btl_sctp_component_t *comp = &mca_btl_sctp_component;
	struct mca_btl_sctp_get_req req;
	struct iovec iov;
	int rc;

	if (c->len != sizeof(req)) {
		mca_btl_sctp_report_fatal(endpoint, -EPROTO, "it sent a malformed get request");
		return;
	}
	memcpy(&req, c->data, sizeof(req));
	if (req.id <= 0 || req.length > SIZE_MAX) {
		mca_btl_sctp_report_fatal(endpoint, -EPROTO, "it sent a malformed get request");
		return;
	}
	iov.iov_base = (void *)(uintptr_t)req.address;
	iov.iov_len = (size_t)req.length;
	OPAL_THREAD_ADD_FETCH32(&comp->rget_inflight, 1);
	rc = sctpt_send(comp->ep, c->peer, MCA_BTL_SCTP_CTX_GET_DATA, req.id, SCTPT_SEND_UNORDERED,
			&iov, 1, NULL);
	if (0 == rc)
		return; /* its SEND entry comes later */
	OPAL_THREAD_ADD_FETCH32(&comp->rget_inflight, -1);
	if (rc > 0)
		OPAL_THREAD_ADD_FETCH64(&comp->rget_served, 1);
	else
		mca_btl_sctp_report_fatal(endpoint, rc, sctpt_last_error());
}

/* The receiver's side: the data of one of our gets, placed or to be copied. */
static void rget_data(const struct sctpt_cqe *c, mca_btl_sctp_endpoint_t *endpoint)
{
	mca_btl_sctp_component_t *comp = &mca_btl_sctp_component;
	struct rget_op *op = c->tag > 0 ? opal_pointer_array_get_item(&rget_ops, c->tag - 1) : NULL;
	int status = OPAL_SUCCESS;

	if (NULL == op || op->endpoint->peer != c->peer) {
		if (c->status >= 0)
			mca_btl_sctp_report_fatal(endpoint, -EPROTO,
						  "it sent data for a get we did not ask for");
		return;
	}
	if (c->status < 0) {
		status = OPAL_ERR_UNREACH; /* abandoned with the peer, or by our close */
	} else if (c->cookie != op) {
		/* it came whole (or not where recv_buf put it): copy */
		if (c->len == op->size)
			memcpy(op->local_address, c->data, c->len);
		else
			status = OPAL_ERR_BAD_PARAM;
	}
	opal_pointer_array_set_item(&rget_ops, c->tag - 1, NULL);
	if (OPAL_SUCCESS == status)
		OPAL_THREAD_ADD_FETCH64(&comp->rgets, 1);
	if (!comp->closing && NULL != op->cbfunc)
		op->cbfunc(&op->endpoint->btl->super, op->endpoint, op->local_address,
			   op->local_handle, op->cbcontext, op->cbdata, status);
	free(op);
}

void mca_btl_sctp_rget_complete(const struct sctpt_cqe *c)
{
	mca_btl_sctp_component_t *comp = &mca_btl_sctp_component;
	mca_btl_sctp_endpoint_t *endpoint =
		c->peer < 0 ? NULL : opal_pointer_array_get_item(&comp->peers, c->peer);

	if (SCTPT_CQE_SEND == c->kind) {
		OPAL_THREAD_ADD_FETCH32(&comp->rget_inflight, -1);
		if (MCA_BTL_SCTP_CTX_GET_REQ == c->context)
			mca_btl_sctp_frag_return(c->cookie);
		else if (c->status >= 0)
			OPAL_THREAD_ADD_FETCH64(&comp->rget_served, 1);
		if (c->status < 0 && !comp->closing)
			mca_btl_sctp_report_fatal(endpoint, c->status,
						  "a get request or its data was not delivered");
		return;
	}
	if (MCA_BTL_SCTP_CTX_GET_DATA == c->context)
		rget_data(c, endpoint);
	else if (c->status >= 0 && !comp->closing)
		rget_serve(c, endpoint);
}
