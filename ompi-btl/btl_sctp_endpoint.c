/* btl sctp endpoint: peer registration with the core and the send path. */
#include "btl_sctp_endpoint.h"

#include <errno.h>
#include <string.h>

#include "opal/util/output.h"

static void endpoint_construct(mca_btl_sctp_endpoint_t *ep)
{
	ep->btl = NULL;
	ep->proc = NULL;
	ep->peer = -1;
	ep->inflight = 0;
	ep->reported = 0;
	ep->closed = 0;
	ep->in_use = 0;
	ep->qp = NULL; /* destroyed with the RNIC (iw_close) */
	ep->rdma_ops = 0;
	OBJ_CONSTRUCT(&ep->flush_lock, opal_mutex_t);
	ep->unfenced = NULL;
	ep->unfenced_tail = &ep->unfenced;
	ep->fences = 0;
	ep->flush_stag = 0;
	ep->flush_addr = 0;
}

static void endpoint_destruct(mca_btl_sctp_endpoint_t *ep)
{
	OBJ_DESTRUCT(&ep->flush_lock);
	if (NULL != ep->proc)
		OBJ_RELEASE(ep->proc);
}

OBJ_CLASS_INSTANCE(mca_btl_sctp_endpoint_t, opal_list_item_t, endpoint_construct,
		   endpoint_destruct);

int mca_btl_sctp_endpoint_create(mca_btl_sctp_module_t *btl, mca_btl_sctp_proc_t *proc,
				 sctpt_peer_t peer, mca_btl_sctp_endpoint_t **out)
{
	mca_btl_sctp_endpoint_t *ep = OBJ_NEW(mca_btl_sctp_endpoint_t);

	*out = NULL;
	if (NULL == ep)
		return OPAL_ERR_OUT_OF_RESOURCE;
	ep->btl = btl;
	ep->proc = proc;
	OBJ_RETAIN(proc);
	ep->peer = peer;
	*out = ep;
	return OPAL_SUCCESS;
}

int mca_btl_sctp_endpoint_send(mca_btl_sctp_endpoint_t *endpoint, mca_btl_sctp_frag_t *frag,
			       mca_btl_base_tag_t tag)
{
	size_t i, n = frag->base.des_segment_count;
	int32_t key;
	int rc;

	if (n > 2)
		return OPAL_ERR_BAD_PARAM;
	for (i = 0; i < n; i++) {
		frag->iov[i].iov_base = frag->segments[i].seg_addr.pval;
		frag->iov[i].iov_len = (size_t)frag->segments[i].seg_len;
	}
	key = mca_btl_sctp_frag_stream_key(tag, frag->iov[0].iov_base, frag->iov[0].iov_len);
	frag->endpoint = endpoint;
	/* Counted before the call: once sctpt_send returned 0, another thread's progress may
	 * complete the send before we look at the return value. Only 0 leaves it counted: 1 and
	 * errors have no completion. */
	OPAL_THREAD_ADD_FETCH32(&endpoint->inflight, 1);
	rc = sctpt_send(mca_btl_sctp_component.ep, endpoint->peer, tag, key, SCTPT_SEND_UNORDERED,
			frag->iov, (int)n, frag);
	if (0 == rc)
		return OPAL_SUCCESS;
	OPAL_THREAD_ADD_FETCH32(&endpoint->inflight, -1);
	if (rc > 0)
		return 1;
	mca_btl_sctp_report_fatal(endpoint, rc, endpoint->closed ?
				  "it closed its endpoint (MPI_Finalize) before our message" :
				  sctpt_last_error());
	return -EINVAL == rc ? OPAL_ERR_BAD_PARAM : OPAL_ERR_UNREACH;
}
