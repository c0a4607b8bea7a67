/*
 * ch3:sctp -- sending: each CH3 packet, with all of its data, goes to the core as one
 * message (see ch3_sctp.h for the contexts). The core sends it at once or queues it; a
 * queued packet's request completes when the core's SEND completion comes back.
 */
#include "ch3_sctp.h"

#include <stdlib.h>
#include <string.h>

/* One packet handed to the core: the header (the caller's may be on its stack) and what
 * the completion must do. */
struct sctpc_send {
	MPIDI_CH3_Pkt_t pkt;
	MPIR_Request *sreq;	/* NULL: nothing waits for it */
	MPIDI_VC_t *vc;
	struct iovec *iov;	/* a packet gathered from several IOV loads, or NULL */
	char *stage;		/* copies of what was packed in the request's temporary buffer */
	int queued;		/* with the core, its one SEND completion to come */
	struct sctpc_send *next;
};

/* Free records; every user holds MPICH's global lock (sends and progress both do). */
static struct sctpc_send *pool;

static struct sctpc_send *rec_get(void)
{
	struct sctpc_send *s = pool;
	if (s)
		pool = s->next;
	else
		s = MPL_malloc(sizeof(*s), MPL_MEM_BUFFER);
	if (s) {
		s->queued = 0;
		s->sreq = NULL;
		s->iov = NULL;
		s->stage = NULL;
	}
	return s;
}

static void rec_put(struct sctpc_send *s)
{
	MPL_free(s->iov);
	MPL_free(s->stage);
	s->iov = NULL;
	s->stage = NULL;
	s->next = pool;
	pool = s;
}

void sctpc_send_pool_free(void)
{
	while (pool) {
		struct sctpc_send *s = pool;
		pool = s->next;
		MPL_free(s);
	}
}

/* The core context (ordering domain) and tag (stream choice) of a packet. */
static uint32_t pkt_context(const MPIDI_CH3_Pkt_t * p, int32_t * tag)
{
	switch (p->type) {
	case MPIDI_CH3_PKT_EAGER_SEND:
	case MPIDI_CH3_PKT_EAGER_SYNC_SEND:
	case MPIDI_CH3_PKT_READY_SEND:
	case MPIDI_CH3_PKT_RNDV_REQ_TO_SEND:
		*tag = p->eager_send.match.parts.tag;
		return p->eager_send.match.parts.context_id;
#if defined(USE_EAGER_SHORT)
	case MPIDI_CH3_PKT_EAGERSHORT_SEND:
		*tag = p->eagershort_send.match.parts.tag;
		return p->eagershort_send.match.parts.context_id;
#endif
	case MPIDI_CH3_PKT_CANCEL_SEND_REQ:
		/* behind the message it cancels */
		*tag = p->cancel_send_req.match.parts.tag;
		return p->cancel_send_req.match.parts.context_id;
	case MPIDI_CH3_PKT_RNDV_SEND:
		*tag = p->rndv_send.receiver_req_id;
		return SCTPC_CTX_RNDV;
	default:
		*tag = 0;
		if (p->type >= MPIDI_CH3_PKT_PUT && p->type <= MPIDI_CH3_PKT_DECR_AT_COUNTER)
			return SCTPC_CTX_RMA;
		return SCTPC_CTX_CTRL;
	}
}

/* After the packet left: the request's last handler, or its completion. */
static int send_complete(MPIDI_VC_t * vc, MPIR_Request * sreq)
{
	int mpi_errno = MPI_SUCCESS, complete = 0;
	int (*fn) (MPIDI_VC_t *, MPIR_Request *, int *) = sreq->dev.OnDataAvail;

	if (!fn) {
		MPIR_Assert(MPIDI_Request_get_type(sreq) != MPIDI_REQUEST_TYPE_GET_RESP);
		return MPID_Request_complete(sreq);
	}
	mpi_errno = fn(vc, sreq, &complete);
	MPIR_ERR_CHECK(mpi_errno);
	/* the packet was gathered whole: nothing may follow it */
	MPIR_ERR_CHKANDJUMP1(!complete, mpi_errno, MPI_ERR_INTERN, "**ch3|sctp|reload",
			     "**ch3|sctp|reload %d", (int) sreq->handle);
  fn_fail:
	return mpi_errno;
}

/* Appends one IOV entry to a gathered packet, copying it when it lies in the request's
 * temporary buffer (the next load overwrites that). */
static int gather_add(MPIR_Request * sreq, struct sctpc_send *s, size_t * n, size_t * cap,
		      size_t * staged, const struct iovec *e)
{
	const char *b = e->iov_base, *t = sreq->dev.tmpbuf;
	struct iovec v = *e;
	if (e->iov_len == 0)
		return 0;
	if (t && b >= t && b < t + sreq->dev.tmpbuf_sz) {
		if (!s->stage) {
			/* all staged data is message data: msgsize bounds it */
			s->stage = MPL_malloc((size_t) sreq->dev.msgsize, MPL_MEM_BUFFER);
			if (!s->stage)
				return -1;
		}
		MPIR_Assert(*staged + e->iov_len <= (size_t) sreq->dev.msgsize);
		memcpy(s->stage + *staged, b, e->iov_len);
		v.iov_base = s->stage + *staged;
		*staged += e->iov_len;
	}
	if (*n == *cap) {
		size_t c = *cap * 2;
		struct iovec *nv = MPL_realloc(s->iov, c * sizeof(*nv), MPL_MEM_BUFFER);
		if (!nv)
			return -1;
		s->iov = nv;
		*cap = c;
	}
	s->iov[(*n)++] = v;
	return 0;
}

/*
 * A packet whose data comes in several IOV loads (non-contiguous data: the request's
 * handler is SendReloadIOV) is gathered whole before it is sent: one packet, one message,
 * so that the receiver never has to join pieces that other packets could come between.
 */
static int gather(MPIDI_VC_t * vc, MPIR_Request * sreq, struct sctpc_send *s,
		  const struct iovec *first, int nfirst, int *nout)
{
	int mpi_errno = MPI_SUCCESS, complete;
	size_t n = 0, cap = (size_t) nfirst + MPL_IOV_LIMIT, staged = 0;

	s->iov = MPL_malloc(cap * sizeof(*s->iov), MPL_MEM_BUFFER);
	MPIR_ERR_CHKANDJUMP(!s->iov, mpi_errno, MPI_ERR_OTHER, "**nomem");
	for (int i = 0; i < nfirst; i++)
		MPIR_ERR_CHKANDJUMP(gather_add(sreq, s, &n, &cap, &staged, &first[i]), mpi_errno,
				    MPI_ERR_OTHER, "**nomem");
	while (sreq->dev.OnDataAvail == MPIDI_CH3_ReqHandler_SendReloadIOV) {
		mpi_errno = MPIDI_CH3_ReqHandler_SendReloadIOV(vc, sreq, &complete);
		MPIR_ERR_CHECK(mpi_errno);
		for (int i = 0; i < sreq->dev.iov_count; i++)
			MPIR_ERR_CHKANDJUMP(gather_add(sreq, s, &n, &cap, &staged,
						       &sreq->dev.iov[i]), mpi_errno,
					    MPI_ERR_OTHER, "**nomem");
	}
	*nout = (int) n;
  fn_fail:
	return mpi_errno;
}

/*
 * The four entry points end here. sreq: the caller's request (iSend/iSendv), or NULL
 * (iStartMsg/iStartMsgv: a request is made only if the core queues the packet, and returned
 * in *sreq_out).
 */
static int send_pkt(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int iov_n,
		    MPIR_Request ** sreq_out)
{
	int mpi_errno = MPI_SUCCESS, n = 0, rc;
	struct iovec vec[MPL_IOV_LIMIT + 1], *v = vec;
	struct sctpc_send *s = NULL;
	int32_t tag;
	uint32_t ctx;

	if (sreq_out)
		*sreq_out = NULL;
	MPIR_Assert(iov_n >= 1 && iov_n <= MPL_IOV_LIMIT);
	MPIR_Assert(iov[0].iov_len <= sizeof(MPIDI_CH3_Pkt_t));
	MPIR_ERR_CHKANDJUMP1(vc->ch.peer < 0, mpi_errno, MPI_ERR_OTHER, "**ch3|sctp|nocard",
			     "**ch3|sctp|nocard %d", vc->pg_rank);
	MPIR_ERR_CHKANDJUMP1(vc->ch.failed, mpi_errno, MPI_ERR_OTHER, "**ch3|sctp|lost",
			     "**ch3|sctp|lost %d", vc->pg_rank);
	s = rec_get();
	MPIR_ERR_CHKANDJUMP(!s, mpi_errno, MPI_ERR_OTHER, "**nomem");
	/* fixed-size headers, as the receiver expects */
	memset(&s->pkt, 0, sizeof(s->pkt));
	memcpy(&s->pkt, iov[0].iov_base, iov[0].iov_len);
	s->vc = vc;
	/* rendezvous data travels alone: its core tag names the receiving request */
	if (s->pkt.type != MPIDI_CH3_PKT_RNDV_SEND) {
		vec[n].iov_base = &s->pkt;
		vec[n++].iov_len = sizeof(s->pkt);
	}
	for (int i = 1; i < iov_n; i++)
		if (iov[i].iov_len)
			vec[n++] = iov[i];
	if (sreq && sreq->dev.OnDataAvail == MPIDI_CH3_ReqHandler_SendReloadIOV) {
		mpi_errno = gather(vc, sreq, s, vec, n, &n);
		MPIR_ERR_CHECK(mpi_errno);
		v = s->iov;
	}
	ctx = pkt_context(&s->pkt, &tag);
	if (vc->state == MPIDI_VC_STATE_INACTIVE)
		MPIDI_CHANGE_VC_STATE(vc, ACTIVE);

	rc = sctpt_send(sctpc.ep, vc->ch.peer, ctx, tag, 0, v, n, s);
	if (rc < 0) {
		char name[SCTPT_CARD_MAX + 64];
		sctpc_peer_name(vc, name, sizeof(name));
		MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**ch3|sctp|send",
				     "**ch3|sctp|send %s %s", name, sctpt_last_error());
	}
	if (rc == 1) {
		/* the data is with SCTP already */
		rec_put(s);
		s = NULL;
		if (sreq)
			mpi_errno = send_complete(vc, sreq);
		goto fn_exit;
	}
	/* queued: the completion finishes the request; the channel holds a reference */
	s->queued = 1;
	if (!sreq) {
		sreq = MPIR_Request_create(MPIR_REQUEST_KIND__UNDEFINED);
		if (!sreq) {
			s = NULL;	/* the core holds the record until its completion */
			MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
		}
		/* the caller's reference, the one completion drops, the channel's */
		MPIR_Object_set_ref(sreq, 3);
		sreq->kind = MPIR_REQUEST_KIND__SEND;
		sreq->dev.OnDataAvail = NULL;
		*sreq_out = sreq;
	} else {
		MPIR_Request_add_ref(sreq);
	}
	s->sreq = sreq;

  fn_exit:
	return mpi_errno;
  fn_fail:
	if (s)
		rec_put(s);
	if (sreq) {
		sreq->status.MPI_ERROR = mpi_errno;
		MPID_Request_complete(sreq);
	}
	goto fn_exit;
}

int sctpc_send_done(const struct sctpt_cqe *c)
{
	int mpi_errno = MPI_SUCCESS;
	struct sctpc_send *s = c->cookie;
	MPIR_Request *sreq;
	MPIDI_VC_t *vc;

	/* the core promises one completion per queued send: anything else is its bug, and
	 * would free requests twice */
	MPIR_ERR_CHKANDJUMP1(!s || !s->queued, mpi_errno, MPI_ERR_INTERN, "**ch3|sctp|twice",
			     "**ch3|sctp|twice %p", c->cookie);
	s->queued = 0;
	sreq = s->sreq;
	vc = s->vc;
	rec_put(s);
	if (!sreq)
		return MPI_SUCCESS;
	if (c->status < 0) {
		char name[SCTPT_CARD_MAX + 64];
		sctpc_peer_name(vc, name, sizeof(name));
		MPIR_ERR_SET2(mpi_errno, MPI_ERR_OTHER, "**ch3|sctp|send", "**ch3|sctp|send %s %s",
			      name, strerror(-c->status));
		sreq->status.MPI_ERROR = mpi_errno;
		MPID_Request_complete(sreq);
	} else {
		mpi_errno = send_complete(vc, sreq);
	}
	MPIR_Request_free(sreq);
  fn_fail:
	return mpi_errno;
}

int MPIDI_CH3_iStartMsg(MPIDI_VC_t * vc, void *hdr, intptr_t hdr_sz, MPIR_Request ** sreq_ptr)
{
	struct iovec iov = {.iov_base = hdr, .iov_len = (size_t) hdr_sz };
	return send_pkt(vc, NULL, &iov, 1, sreq_ptr);
}

int MPIDI_CH3_iStartMsgv(MPIDI_VC_t * vc, struct iovec *iov, int iov_n, MPIR_Request ** sreq_ptr)
{
	return send_pkt(vc, NULL, iov, iov_n, sreq_ptr);
}

int MPIDI_CH3_iSend(MPIDI_VC_t * vc, MPIR_Request * sreq, void *hdr, intptr_t hdr_sz)
{
	struct iovec iov = {.iov_base = hdr, .iov_len = (size_t) hdr_sz };
	return send_pkt(vc, sreq, &iov, 1, NULL);
}

int MPIDI_CH3_iSendv(MPIDI_VC_t * vc, MPIR_Request * sreq, struct iovec *iov, int iov_n)
{
	return send_pkt(vc, sreq, iov, iov_n, NULL);
}
