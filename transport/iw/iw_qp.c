/* iw_qp.c: queue pairs: create/connect, posting work, cutting messages into DDP segments,
 * completions in send-queue order, going to error (Terminate, flush). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iw_int.h"

int iw_qp_create(struct iw_pd *pd, const struct iw_qp_attr *attr, struct iw_qp **out)
{
	struct iw_rnic *r = pd->r;
	struct iw_qp *qp;
	if (!attr || !attr->send_cq || !attr->recv_cq)
		return iw_err(-EINVAL, "iw_qp_create: send and receive CQs are required");
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return iw_err(-ENOMEM, "iw_qp_create: out of memory");
	qp->sq_size = attr->max_send_wr ? attr->max_send_wr : 256;
	qp->rq_size = attr->max_recv_wr ? attr->max_recv_wr : 256;
	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	qp->rq = calloc(qp->rq_size, sizeof(*qp->rq));
	if (!qp->sq || !qp->rq) {
		free(qp->sq);
		free(qp->rq);
		free(qp);
		return iw_err(-ENOMEM, "iw_qp_create: out of memory");
	}
	qp->r = r;
	qp->pd = pd;
	qp->scq = attr->send_cq;
	qp->rcq = attr->recv_cq;
	qp->peer = -1;
	for (int i = 0; i < 4; i++)
		qp->tx_msn[i] = qp->rx_msn[i] = 1;
	pthread_mutex_lock(&r->lock);
	/* Numbers are handed out round-robin so a late segment for a destroyed QP rarely finds
	 * a new QP on the same number; or the caller names one. */
	uint32_t want = attr->qpn, tries = want ? 1 : IW_MAX_QP - 1;
	for (uint32_t i = 0; i < tries && want < IW_MAX_QP; i++) {
		uint32_t n = want ? want : 1 + (r->next_qpn + i) % (IW_MAX_QP - 1);
		if (r->qp[n])
			continue;
		if (!want)
			r->next_qpn = n;
		qp->qpn = n;
		r->qp[n] = qp;
		if (n >= r->qp_end)
			r->qp_end = n + 1;
		pd->users++;
		qp->scq->users++;
		qp->rcq->users++;
		pthread_mutex_unlock(&r->lock);
		*out = qp;
		return 0;
	}
	pthread_mutex_unlock(&r->lock);
	free(qp->sq);
	free(qp->rq);
	free(qp);
	if (want)
		return iw_err(want < IW_MAX_QP ? -EBUSY : -EINVAL, "iw_qp_create: QP number %u %s",
			      want, want < IW_MAX_QP ? "is taken" : "is out of range");
	return iw_err(-ENOSPC, "iw_qp_create: all %d QPs in use", IW_MAX_QP - 1);
}

/* With the lock held: forget the QP; segments the core still holds keep their slots. */
void iw_qp_free(struct iw_qp *qp)
{
	struct iw_rnic *r = qp->r;
	for (unsigned i = 0; i < r->attr.tx_slots; i++)
		if (r->slots[i].qp == qp)
			r->slots[i].qp = NULL, r->slots[i].wqe = NULL;
	while (qp->held) {
		struct iw_held *h = qp->held;
		qp->held = h->next;
		free(h);
	}
	r->qp[qp->qpn] = NULL;
	qp->pd->users--;
	qp->scq->users--;
	qp->rcq->users--;
	free(qp->sq);
	free(qp->rq);
	free(qp);
}

int iw_qp_destroy(struct iw_qp *qp)
{
	struct iw_rnic *r = qp->r;
	pthread_mutex_lock(&r->lock);
	iw_qp_free(qp);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

uint32_t iw_qp_num(const struct iw_qp *qp)
{
	return qp->qpn;
}

int iw_qp_connect(struct iw_qp *qp, sctpt_peer_t peer, uint32_t remote_qpn)
{
	if (peer < 0 || remote_qpn == 0 || remote_qpn > IW_QPN_MAX)
		return iw_err(-EINVAL, "iw_qp_connect: bad peer %d or remote QP %u", peer, remote_qpn);
	pthread_mutex_lock(&qp->r->lock);
	int rc = 0;
	if (qp->state != IW_QPS_IDLE) {
		rc = iw_err(-EISCONN, "iw_qp_connect: QP %u is already connected", qp->qpn);
	} else {
		qp->peer = peer;
		qp->rqpn = remote_qpn;
		qp->state = IW_QPS_RTS;
	}
	pthread_mutex_unlock(&qp->r->lock);
	return rc;
}

enum iw_qp_state iw_qp_state(struct iw_qp *qp, struct iw_term *sent, struct iw_term *recvd)
{
	pthread_mutex_lock(&qp->r->lock);
	enum iw_qp_state s = qp->state;
	if (sent)
		*sent = qp->term_sent;
	if (recvd)
		*recvd = qp->term_recv;
	pthread_mutex_unlock(&qp->r->lock);
	return s;
}

int iw_qp_reads_served(struct iw_qp *qp)
{
	pthread_mutex_lock(&qp->r->lock);
	int served = !qp->rsp_count && !qp->rsp_in_place;
	pthread_mutex_unlock(&qp->r->lock);
	return served;
}

/* A local SGE list: every entry inside a valid region of the QP's PD with the right. */
static int check_sges(struct iw_qp *qp, const struct iw_sge *sg, int n, unsigned right,
		      uint64_t *total)
{
	*total = 0;
	if (n < 0 || n > IW_MAX_SGE || (n && !sg))
		return iw_err(-EINVAL, "QP %u: %d SGEs (at most %d)", qp->qpn, n, IW_MAX_SGE);
	for (int i = 0; i < n; i++) {
		struct iw_mr *m = iw_mr_find(qp->r, sg[i].stag);
		uint64_t a = (uint64_t)(uintptr_t)sg[i].addr;
		if (!m || !m->valid || m->pd != qp->pd)
			return iw_err(-EACCES, "QP %u: SGE %d: STag %#x is not a valid region of the "
				      "QP's PD", qp->qpn, i, sg[i].stag);
		if (a < m->base || a + sg[i].length > m->base + m->len || a + sg[i].length < a)
			return iw_err(-EACCES, "QP %u: SGE %d outside STag %#x", qp->qpn, i,
				      sg[i].stag);
		if (right && !(m->access & right))
			return iw_err(-EACCES, "QP %u: SGE %d: STag %#x lacks local write", qp->qpn,
				      i, sg[i].stag);
		*total += sg[i].length;
	}
	return 0;
}

int iw_post_send(struct iw_qp *qp, const struct iw_send_wr *wr)
{
	struct iw_rnic *r = qp->r;
	uint64_t total;
	int rc, now = 0;
	pthread_mutex_lock(&r->lock);
	if (qp->state != IW_QPS_RTS) {
		rc = iw_err(qp->state == IW_QPS_ERROR ? -EPIPE : -ENOTCONN, "QP %u: not connected "
			    "or in error", qp->qpn);
		goto out;
	}
	if (qp->sq_count == qp->sq_size) {
		rc = iw_err(-ENOSPC, "QP %u: send queue full (%u)", qp->qpn, qp->sq_size);
		goto out;
	}
	int sink = wr->opcode == IW_WR_READ || wr->opcode == IW_WR_FETCH_ADD ||
		   wr->opcode == IW_WR_COMP_SWAP;
	if ((unsigned)wr->opcode > IW_WR_COMP_SWAP) {
		rc = iw_err(-EINVAL, "QP %u: unknown opcode %d", qp->qpn, wr->opcode);
		goto out;
	}
	rc = check_sges(qp, wr->sg_list, wr->num_sge, sink ? IW_ACCESS_LOCAL_WRITE : 0, &total);
	if (rc)
		goto out;
	if (sink && (wr->num_sge != 1 || (wr->opcode != IW_WR_READ && total != 8))) {
		rc = iw_err(-EINVAL, "QP %u: Read needs one sink SGE, atomics one 8-byte SGE",
			    qp->qpn);
		goto out;
	}
	if ((wr->opcode == IW_WR_SEND || wr->opcode == IW_WR_SEND_INV || wr->opcode == IW_WR_READ) &&
	    total > UINT32_MAX) {
		rc = iw_err(-EMSGSIZE, "QP %u: %llu bytes is over 4 GiB", qp->qpn,
			    (unsigned long long)total);
		goto out;
	}
	struct iw_swqe *w = &qp->sq[(qp->sq_head + qp->sq_count) % qp->sq_size];
	memset(w, 0, sizeof(*w));
	w->wr = *wr;
	if (wr->num_sge)
		memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(*w->sge));
	w->wr.sg_list = w->sge;
	w->len = total;
	qp->sq_count++;
	iw_engine(r);
	/* deferred posting is for what bundles: a larger request leaves at once, with the
	 * small ones queued before it */
	now = !r->attr.defer_tx || total > IW_BUNDLE_BYTES / 2;
out:
	pthread_mutex_unlock(&r->lock);
	if (rc == 0 && now)
		iw_flush(r);
	return rc;
}

int iw_post_recv(struct iw_qp *qp, const struct iw_recv_wr *wr)
{
	struct iw_rnic *r = qp->r;
	uint64_t total;
	int rc;
	pthread_mutex_lock(&r->lock);
	if (qp->state == IW_QPS_ERROR) {
		rc = iw_err(-EPIPE, "QP %u: in error", qp->qpn);
		goto out;
	}
	if (qp->rq_count == qp->rq_size) {
		rc = iw_err(-ENOSPC, "QP %u: receive queue full (%u)", qp->qpn, qp->rq_size);
		goto out;
	}
	rc = check_sges(qp, wr->sg_list, wr->num_sge, IW_ACCESS_LOCAL_WRITE, &total);
	if (rc)
		goto out;
	struct iw_rwqe *w = &qp->rq[(qp->rq_head + qp->rq_count) % qp->rq_size];
	w->wr = *wr;
	if (wr->num_sge)
		memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(*w->sge));
	w->wr.sg_list = w->sge;
	w->len = total;
	qp->rq_count++;
out:
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* Copies len bytes into the SGE list at message offset off (already bounds-checked). */
int iw_sge_copy(const struct iw_sge *sge, int n, uint64_t off, const void *src, size_t len)
{
	const uint8_t *p = src;
	for (int i = 0; i < n && len; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		size_t c = sge[i].length - off < len ? (size_t)(sge[i].length - off) : len;
		memcpy((uint8_t *)sge[i].addr + off, p, c);
		p += c;
		len -= c;
		off = 0;
	}
	return len ? -EINVAL : 0;
}

/* iovecs for len bytes of the SGE list from off. */
static int sge_iov(const struct iw_sge *sge, int n, uint64_t off, size_t len, struct iovec *iov)
{
	int k = 0;
	for (int i = 0; i < n && len; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		size_t c = sge[i].length - off < len ? (size_t)(sge[i].length - off) : len;
		iov[k].iov_base = (uint8_t *)sge[i].addr + off;
		iov[k++].iov_len = c;
		len -= c;
		off = 0;
	}
	return k;
}

static enum iw_wc_opcode wc_op(enum iw_wr_opcode op)
{
	switch (op) {
	case IW_WR_WRITE: return IW_WC_WRITE;
	case IW_WR_READ: return IW_WC_READ;
	case IW_WR_FETCH_ADD: return IW_WC_FETCH_ADD;
	case IW_WR_COMP_SWAP: return IW_WC_COMP_SWAP;
	default: return IW_WC_SEND;
	}
}

/* Completes finished send WRs from the head, in posting order; one that finds the CQ full
 * stays at the head, and so do those behind it, until iw_poll_cq makes room. */
void iw_sq_retire(struct iw_qp *qp)
{
	while (qp->sq_count) {
		struct iw_swqe *w = &qp->sq[qp->sq_head];
		if (!w->done || w->outstanding)
			break;
		struct iw_wc wc = {.wr_id = w->wr.wr_id, .status = w->status,
				   .opcode = wc_op(w->wr.opcode), .qpn = qp->qpn, .term = w->term};
		if (w->wr.opcode == IW_WR_READ)
			wc.byte_len = (uint32_t)w->len;
		if (iw_cq_push(qp->scq, &wc) < 0)
			return;
		qp->sq_head = (qp->sq_head + 1) % qp->sq_size;
		qp->sq_count--;
		if (qp->sq_cur)
			qp->sq_cur--;
	}
	if (!qp->sq_count && qp->term_wc_pending && iw_cq_push(qp->scq, &qp->term_wc) == 0)
		qp->term_wc_pending = 0;
}

/* Completes finished receives from the head, in posting order, while the CQ has room. */
void iw_rq_retire(struct iw_qp *qp)
{
	while (qp->rq_done && iw_cq_push(qp->rcq, &qp->rq[qp->rq_head].wc) == 0) {
		qp->rq_head = (qp->rq_head + 1) % qp->rq_size;
		qp->rq_count--;
		qp->rq_done--;
	}
}

static enum iw_wc_status term_status(const struct iw_term *t)
{
	if ((t->layer == IW_LAYER_RDMAP && t->etype == 1) || (t->layer == IW_LAYER_DDP && t->etype == 1))
		return IW_WC_REM_ACCESS_ERR;
	if (t->layer == IW_LAYER_DDP && t->etype == 2)
		return IW_WC_REM_INV_REQ_ERR;
	return IW_WC_REM_OP_ERR;
}

/*
 * The QP goes to error. send_term: this side found the error and sends a Terminate with these
 * codes (hdr: the offending segment's header, echoed). recvd: the peer's Terminate arrived.
 * The oldest unfinished send WR carries the error; the rest, and posted receives, are flushed.
 */
void iw_qp_fail(struct iw_qp *qp, const struct iw_term *send_term, const uint8_t *hdr,
		size_t hdrlen, const struct iw_term *recvd)
{
	int first = 1;
	if (recvd) {
		qp->term_recv = *recvd;
		qp->r->st.terms_recv++;
	}
	if (qp->state == IW_QPS_ERROR)
		return;
	qp->state = IW_QPS_ERROR;
	if (send_term) {
		qp->term_sent = *send_term;
		qp->term_pending = 1;
		qp->term_hdr_len = hdrlen > sizeof(qp->term_hdr) ? sizeof(qp->term_hdr) : hdrlen;
		if (hdrlen)
			memcpy(qp->term_hdr, hdr, qp->term_hdr_len);
	}
	for (unsigned i = 0; i < qp->sq_count; i++) {
		struct iw_swqe *w = &qp->sq[(qp->sq_head + i) % qp->sq_size];
		if (w->done)
			continue;
		w->done = 1;
		if (first && w->status == IW_WC_SUCCESS && (recvd || send_term)) {
			w->status = recvd ? term_status(recvd) : IW_WC_LOC_QP_OP_ERR;
			w->term = recvd ? *recvd : *send_term;
			first = 0;
		} else if (w->status == IW_WC_SUCCESS) {
			w->status = IW_WC_WR_FLUSH_ERR;
		}
	}
	qp->sq_cur = qp->sq_count;
	if (first && recvd) {
		qp->term_wc = (struct iw_wc){.status = term_status(recvd), .opcode = IW_WC_TERMINATE,
					     .qpn = qp->qpn, .term = *recvd};
		qp->term_wc_pending = 1;
	}
	for (; qp->rq_done < qp->rq_count; qp->rq_done++) {
		struct iw_rwqe *w = &qp->rq[(qp->rq_head + qp->rq_done) % qp->rq_size];
		w->wc = (struct iw_wc){.wr_id = w->wr.wr_id, .status = IW_WC_WR_FLUSH_ERR,
				       .opcode = IW_WC_RECV, .qpn = qp->qpn};
	}
	iw_rq_retire(qp);
	qp->rsp_count = 0;
	while (qp->held) {
		struct iw_held *h = qp->held;
		qp->held = h->next;
		free(h);
	}
	qp->held_tail = NULL;
	qp->held_bytes = 0;
	iw_sq_retire(qp);
}

/* The peer is gone: the oldest unfinished send WR says so, the rest of the work is flushed. */
void iw_qp_lost(struct iw_qp *qp)
{
	if (qp->state == IW_QPS_ERROR)
		return;
	for (unsigned i = 0; i < qp->sq_count; i++) {
		struct iw_swqe *w = &qp->sq[(qp->sq_head + i) % qp->sq_size];
		if (w->done)
			continue;
		if (w->status == IW_WC_SUCCESS)
			w->status = IW_WC_PEER_LOST;
		break;
	}
	iw_qp_fail(qp, NULL, NULL, 0, NULL);
}

/* Fills a slot with one segment: header (+ extra RDMAP header) and payload iovecs. */
static void emit(struct iw_qp *qp, struct iw_slot *s, struct iw_swqe *w, const struct iw_hdr *h,
		 const uint8_t *extra, size_t extralen, const struct iovec *pl, int plcnt)
{
	int n = iw_hdr_encode(h, s->hdr, sizeof(s->hdr));
	if (extralen)
		memcpy(s->hdr + n, extra, extralen);
	s->qp = qp;
	s->wqe = w;
	s->peer = qp->peer;
	s->context = qp->r->attr.context_base + qp->rqpn;
	s->iov[0].iov_base = s->hdr;
	s->iov[0].iov_len = (size_t)n + extralen;
	for (int i = 0; i < plcnt; i++)
		s->iov[1 + i] = pl[i];
	s->iovcnt = 1 + plcnt;
	if (h->tagged && !h->last) {
		s->flags = SCTPT_SEND_UNORDERED;
		s->tag = (int32_t)(qp->tx_unord & IW_FENCE_MASK); /* spreads over the streams */
		qp->tx_unord = (qp->tx_unord + 1) & IW_FENCE_MASK;
	} else {
		s->flags = 0;
		s->tag = (int32_t)(qp->tx_unord & IW_FENCE_MASK); /* the fence */
	}
	if (w)
		w->outstanding++;
	iw_slot_queue(qp->r, s);
}

static void emit_untagged(struct iw_qp *qp, struct iw_slot *s, struct iw_swqe *w, uint8_t op,
			  uint32_t qn, uint32_t stag, const uint8_t *extra, size_t extralen)
{
	struct iw_hdr h = {.last = 1, .opcode = op, .stag = stag, .qn = qn, .msn = qp->tx_msn[qn]++};
	emit(qp, s, w, &h, extra, extralen, NULL, 0);
}

static void emit_term(struct iw_qp *qp, struct iw_slot *s)
{
	uint8_t pl[IW_TERM_LEN + IW_UNTAGGED_HLEN];
	struct iw_term t = qp->term_sent;
	t.hdrct = qp->term_hdr_len ? 0x2 : 0; /* D: the DDP header follows */
	iw_term_encode(&t, pl, sizeof(pl));
	memcpy(pl + IW_TERM_LEN, qp->term_hdr, qp->term_hdr_len);
	emit_untagged(qp, s, NULL, IW_OP_TERMINATE, IW_QN_TERMINATE, 0, pl,
		      IW_TERM_LEN + qp->term_hdr_len);
	qp->term_pending = 0;
	qp->r->st.terms_sent++;
}

/* One segment of a response; returns 0, or -1 if the QP failed. */
static int emit_rsp(struct iw_qp *qp, struct iw_slot *s)
{
	struct iw_rsp *p = &qp->rsp[qp->rsp_head];
	struct iw_rnic *r = qp->r;
	if (p->atomic) {
		uint8_t pl[IW_ATOMIC_RESP_LEN];
		iw_atomic_resp_encode(&p->at, pl, sizeof(pl));
		emit_untagged(qp, s, NULL, IW_OP_ATOMIC_RESP, IW_QN_ATOMIC, 0, pl, sizeof(pl));
		goto next;
	}
	/* The source region is looked up again for every segment: it may be gone since. */
	uint64_t left = p->rd.size - p->sent, n = left < r->attr.seg_size ? left : r->attr.seg_size;
	uint64_t src = p->rd.src_to + p->sent;
	struct iw_mr *m = iw_mr_find(r, p->rd.src_stag);
	if (!m || !m->valid || !(m->access & IW_ACCESS_REMOTE_READ) || src < m->base ||
	    src + n > m->base + m->len) {
		static const struct iw_term t = {.layer = IW_LAYER_RDMAP, .etype = 1, .ecode = 0};
		s->next = r->free_slots; /* give the slot back: the Terminate takes another */
		r->free_slots = s;
		r->slots_busy--;
		iw_qp_fail(qp, &t, NULL, 0, NULL);
		return -1;
	}
	struct iovec iov = {(void *)(uintptr_t)src, n};
	if ((m->access & IW_ACCESS_READ_IN_PLACE) && n >= IW_RSP_POOL_MIN) {
		/* the core reads it from the region (iw_dereg_mr waits until it is done) */
		s->mr = m;
		m->inflight++;
		r->in_place++;
		qp->rsp_in_place++;
		r->st.rsp_in_place++;
	} else if (n) {
		if (!iw_rsp_buf(r, s, n)) {
			static const struct iw_term t = {.layer = IW_LAYER_RDMAP, .etype = 2,
							 .ecode = 7};
			s->next = r->free_slots;
			r->free_slots = s;
			r->slots_busy--;
			iw_qp_fail(qp, &t, NULL, 0, NULL);
			return -1;
		}
		memcpy(s->buf, iov.iov_base, n);
		iov.iov_base = s->buf;
	}
	p->sent += n;
	struct iw_hdr h = {.tagged = 1, .last = p->sent == p->rd.size, .opcode = IW_OP_READ_RESP,
			   .stag = p->rd.sink_stag, .to = p->rd.sink_to + p->sent - n};
	emit(qp, s, NULL, &h, NULL, 0, &iov, n ? 1 : 0);
	if (!h.last)
		return 0;
next:
	qp->rsp_head = (qp->rsp_head + 1) % IW_RSP_DEPTH;
	qp->rsp_count--;
	return 0;
}

/* One segment of the send WR at sq_cur. */
static void emit_wr(struct iw_qp *qp, struct iw_slot *s)
{
	struct iw_swqe *w = &qp->sq[(qp->sq_head + qp->sq_cur) % qp->sq_size];
	struct iw_rnic *r = qp->r;
	struct iovec iov[IW_MAX_SGE];
	uint64_t left = w->len - w->sent, n = left < r->attr.seg_size ? left : r->attr.seg_size;
	switch (w->wr.opcode) {
	case IW_WR_SEND:
	case IW_WR_SEND_INV: {
		int inv = w->wr.opcode == IW_WR_SEND_INV;
		uint8_t op = w->wr.flags & IW_SEND_SOLICITED ? (inv ? IW_OP_SEND_SE_INV : IW_OP_SEND_SE)
							     : (inv ? IW_OP_SEND_INV : IW_OP_SEND);
		int k = sge_iov(w->sge, w->wr.num_sge, w->sent, n, iov);
		struct iw_hdr h = {.last = w->sent + n == w->len, .opcode = op,
				   .stag = inv ? w->wr.invalidate_stag : 0, .qn = IW_QN_SEND,
				   .msn = qp->tx_msn[IW_QN_SEND], .mo = (uint32_t)w->sent};
		if (h.last)
			qp->tx_msn[IW_QN_SEND]++;
		w->sent += n;
		emit(qp, s, w, &h, NULL, 0, iov, k);
		break;
	}
	case IW_WR_WRITE: {
		int k = sge_iov(w->sge, w->wr.num_sge, w->sent, n, iov);
		struct iw_hdr h = {.tagged = 1, .last = w->sent + n == w->len, .opcode = IW_OP_WRITE,
				   .stag = w->wr.remote_stag, .to = w->wr.remote_to + w->sent};
		w->sent += n;
		emit(qp, s, w, &h, NULL, 0, iov, k);
		break;
	}
	case IW_WR_READ: {
		uint8_t pl[IW_READ_REQ_LEN];
		struct iw_read_req rq = {.sink_stag = w->sge[0].stag,
					 .sink_to = (uint64_t)(uintptr_t)w->sge[0].addr,
					 .size = (uint32_t)w->len, .src_stag = w->wr.remote_stag,
					 .src_to = w->wr.remote_to};
		iw_read_req_encode(&rq, pl, sizeof(pl));
		w->sent = w->len;
		emit_untagged(qp, s, w, IW_OP_READ_REQ, IW_QN_READ_REQ, 0, pl, sizeof(pl));
		break;
	}
	default: {
		uint8_t pl[IW_ATOMIC_REQ_LEN];
		int cs = w->wr.opcode == IW_WR_COMP_SWAP;
		struct iw_atomic_req a = {.op = cs ? IW_ATOMIC_CSWAP : IW_ATOMIC_FADD,
					  .req_id = w->atomic_id = qp->atomic_next++,
					  .stag = w->wr.remote_stag, .to = w->wr.remote_to,
					  .add_swap = cs ? w->wr.swap : w->wr.compare_add,
					  .add_swap_mask = cs ? UINT64_MAX : 0,
					  .cmp = cs ? w->wr.compare_add : 0,
					  .cmp_mask = cs ? UINT64_MAX : 0};
		iw_atomic_req_encode(&a, pl, sizeof(pl));
		w->sent = w->len;
		emit_untagged(qp, s, w, IW_OP_ATOMIC_REQ, IW_QN_ATOMIC, 0, pl, sizeof(pl));
		break;
	}
	}
	if (w->sent < w->len)
		return;
	w->all_sent = 1;
	qp->sq_cur++;
	/* Sends and Writes finish once handed to SCTP; Reads and atomics on their response. */
	if (w->wr.opcode <= IW_WR_WRITE)
		w->done = 1;
}

static int needs_response(const struct iw_swqe *w)
{
	return w->wr.opcode >= IW_WR_READ;
}

/* Reads and atomics sent and not yet answered: at most the peer's IRD (RFC 5040 s5.2). */
static unsigned awaiting_response(const struct iw_qp *qp)
{
	unsigned n = 0;
	for (unsigned i = 0; i < qp->sq_cur; i++) {
		const struct iw_swqe *w = &qp->sq[(qp->sq_head + i) % qp->sq_size];
		n += needs_response(w) && !w->done;
	}
	return n;
}

/* Work on one QP while slots are free; returns 0 when out of slots. */
static int qp_engine(struct iw_qp *qp)
{
	struct iw_rnic *r = qp->r;
	struct iw_slot *s;
	if (qp->term_pending) {
		if (!(s = iw_slot_get(r)))
			return 0;
		emit_term(qp, s);
	}
	if (qp->state != IW_QPS_RTS)
		return 1;
	while (qp->rsp_count) {
		if (!(s = iw_slot_get(r)))
			return 0;
		if (emit_rsp(qp, s) < 0)
			return qp_engine(qp);
	}
	while (qp->sq_cur < qp->sq_count) {
		if (needs_response(&qp->sq[(qp->sq_head + qp->sq_cur) % qp->sq_size]) &&
		    awaiting_response(qp) >= IW_RSP_DEPTH)
			return 1; /* the peer takes IW_RSP_DEPTH requests at a time (its IRD) */
		if (!(s = iw_slot_get(r)))
			return 0;
		emit_wr(qp, s);
	}
	return 1;
}

void iw_engine(struct iw_rnic *r)
{
	for (unsigned i = 1; i < r->qp_end; i++) /* runs on every progress call */
		if (r->qp[i] && r->qp[i]->state != IW_QPS_IDLE && !qp_engine(r->qp[i]))
			return;
}
