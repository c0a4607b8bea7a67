/*
 * iw_rx.c: the receive path: every DDP segment is validated (RFC 5041 s7, RFC 5040 s7 for the
 * codes) before a byte of it touches memory; any error sends a Terminate and fails the QP.
 * Called with the RNIC lock held, for a connected QP, in fence order (iw_rnic.c).
 */
#include <string.h>

#include "iw_int.h"

#define L_RDMAP IW_LAYER_RDMAP
#define L_DDP IW_LAYER_DDP
/* RDMAP etypes: 1 remote protection, 2 remote operation. DDP etypes: 0 local catastrophic,
 * 1 tagged buffer, 2 untagged buffer. */

static void fail(struct iw_qp *qp, uint8_t layer, uint8_t etype, uint8_t ecode, const uint8_t *d,
		 size_t len)
{
	struct iw_term t = {.layer = layer, .etype = etype, .ecode = ecode};
	size_t hl = len < 2 ? 0 : (d[0] & IW_DDP_T) ? IW_TAGGED_HLEN : IW_UNTAGGED_HLEN;
	iw_qp_fail(qp, &t, d, hl <= len ? hl : 0, NULL);
}

/* Why iw_hdr_decode refused the header. */
static void bad_header(struct iw_qp *qp, const uint8_t *d, size_t len)
{
	int tagged = len >= 1 && (d[0] & IW_DDP_T);
	unsigned op = len >= 2 ? d[1] & 0x0f : 0;
	int op_ok = op <= IW_OP_TERMINATE || op == IW_OP_ATOMIC_REQ || op == IW_OP_ATOMIC_RESP;
	int op_tagged = op == IW_OP_WRITE || op == IW_OP_READ_RESP;
	if (len < 2)
		fail(qp, L_DDP, 0, 0, d, len);
	else if ((d[0] & 0x03) != IW_DDP_VERSION || (d[0] & 0x3c))
		fail(qp, L_DDP, tagged ? 1 : 2, tagged ? 0x04 : 0x06, d, len);
	else if ((d[1] >> 6) != IW_RDMAP_VERSION || (d[1] & 0x30))
		fail(qp, L_RDMAP, 2, 0x05, d, len);
	else if (!op_ok || op_tagged != tagged)
		fail(qp, L_RDMAP, 2, 0x06, d, len);
	else if (len < (tagged ? IW_TAGGED_HLEN : IW_UNTAGGED_HLEN))
		fail(qp, L_DDP, 0, 0, d, len);
	else
		fail(qp, L_DDP, 2, 0x01, d, len); /* untagged QN out of range */
}

/*
 * A remote access to [to, to+n) of stag needing right. rdmap: the check RDMAP does for Read
 * Requests and atomics (RDMAP remote protection codes), else DDP tagged-buffer codes.
 */
static int stag_check(struct iw_qp *qp, uint32_t stag, uint64_t to, uint64_t n, unsigned right,
		      int rdmap, struct iw_term *t)
{
	struct iw_mr *m = iw_mr_find(qp->r, stag);
	t->layer = rdmap ? L_RDMAP : L_DDP;
	t->etype = 1;
	t->hdrct = 0;
	if (!m || !m->valid)
		t->ecode = 0x00; /* invalid STag */
	else if (m->pd != qp->pd)
		t->ecode = rdmap ? 0x03 : 0x02; /* STag not associated with this stream */
	else if (!(m->access & right))
		t->layer = L_RDMAP, t->ecode = 0x02; /* access rights violation */
	else if (to + n < to)
		t->ecode = rdmap ? 0x04 : 0x03; /* TO wrap */
	else if (to < m->base || to + n > m->base + m->len)
		t->ecode = 0x01; /* base or bounds violation */
	else
		return 0;
	return -1;
}

static struct iw_swqe *find_read(struct iw_qp *qp, uint32_t stag, uint64_t to, uint64_t n)
{
	for (unsigned i = 0; i < qp->sq_count; i++) {
		struct iw_swqe *w = &qp->sq[(qp->sq_head + i) % qp->sq_size];
		uint64_t a = (uint64_t)(uintptr_t)w->sge[0].addr;
		if (w->wr.opcode == IW_WR_READ && w->all_sent && !w->done && w->sge[0].stag == stag &&
		    to >= a && to + n >= to && to + n <= a + w->len)
			return w;
	}
	return NULL;
}

static struct iw_swqe *oldest(struct iw_qp *qp, int read, uint32_t atomic_id)
{
	for (unsigned i = 0; i < qp->sq_count; i++) {
		struct iw_swqe *w = &qp->sq[(qp->sq_head + i) % qp->sq_size];
		if (!w->all_sent || w->done)
			continue;
		if (read && w->wr.opcode == IW_WR_READ)
			return w;
		if (!read && w->wr.opcode >= IW_WR_FETCH_ADD && w->atomic_id == atomic_id)
			return w;
	}
	return NULL;
}

/* What a tagged segment of n payload bytes must pass before it touches memory (received, or
 * placed by the core): 0, or -1 with the Terminate's codes in t. */
static int tagged_check(struct iw_qp *qp, const struct iw_hdr *h, uint64_t n, struct iw_term *t)
{
	int resp = h->opcode == IW_OP_READ_RESP;
	unsigned right = resp ? IW_ACCESS_LOCAL_WRITE : IW_ACCESS_REMOTE_WRITE;
	if (stag_check(qp, h->stag, h->to, n, right, 0, t) < 0)
		return -1;
	if (resp && !find_read(qp, h->stag, h->to, n)) {
		/* a Read Response nobody asked for */
		*t = (struct iw_term){.layer = L_RDMAP, .etype = 2, .ecode = 0x06};
		return -1;
	}
	return 0;
}

static void rx_tagged(struct iw_qp *qp, const struct iw_hdr *h, const uint8_t *d, size_t len,
		      const uint8_t *pl, size_t n)
{
	struct iw_term t;
	int resp = h->opcode == IW_OP_READ_RESP;
	struct iw_swqe *w;
	if (tagged_check(qp, h, n, &t) < 0) {
		fail(qp, t.layer, t.etype, t.ecode, d, len);
		return;
	}
	if (n && pl)	/* else the core placed it there */
		memcpy((void *)(uintptr_t)h->to, pl, n);
	qp->r->st.bytes_placed += n;
	if (resp && h->last) {
		/* Ordered after every earlier segment (fence): the oldest Read is now complete. */
		w = oldest(qp, 1, 0);
		if (w) {
			w->done = 1;
			iw_sq_retire(qp);
		}
	}
}

static void rx_send(struct iw_qp *qp, const struct iw_hdr *h, const uint8_t *d, size_t len,
		    const uint8_t *pl, size_t n)
{
	int inv = h->opcode == IW_OP_SEND_INV || h->opcode == IW_OP_SEND_SE_INV;
	struct iw_mr *m = NULL;
	if (qp->rq_done == qp->rq_count) {
		fail(qp, L_DDP, 2, 0x02, d, len); /* no buffer available */
		return;
	}
	struct iw_rwqe *w = &qp->rq[(qp->rq_head + qp->rq_done) % qp->rq_size];
	if ((uint64_t)h->mo + n > w->len) {
		fail(qp, L_DDP, 2, 0x05, d, len); /* message too long for the buffer */
		return;
	}
	if (inv && (!(m = iw_mr_find(qp->r, h->stag)) || m->pd != qp->pd)) {
		fail(qp, L_RDMAP, 1, 0x09, d, len); /* STag cannot be invalidated */
		return;
	}
	iw_sge_copy(w->sge, w->wr.num_sge, h->mo, pl, n);
	qp->r->st.bytes_placed += n;
	if (!h->last)
		return;
	w->wc = (struct iw_wc){.wr_id = w->wr.wr_id, .opcode = IW_WC_RECV, .qpn = qp->qpn,
			       .byte_len = (uint32_t)(h->mo + n)};
	if (inv) {
		m->valid = 0;
		w->wc.flags = IW_WC_WITH_INV;
		w->wc.invalidated_stag = h->stag;
	}
	qp->rq_done++;
	qp->rx_msn[IW_QN_SEND]++;
	iw_rq_retire(qp);
}

static void rx_read_req(struct iw_qp *qp, const uint8_t *d, size_t len, const uint8_t *pl,
			size_t n)
{
	struct iw_read_req rq;
	struct iw_term t;
	if (iw_read_req_decode(&rq, pl, n) < 0) {
		fail(qp, L_RDMAP, 2, 0x07, d, len);
		return;
	}
	if (stag_check(qp, rq.src_stag, rq.src_to, rq.size, IW_ACCESS_REMOTE_READ, 1, &t) < 0) {
		fail(qp, t.layer, t.etype, t.ecode, d, len);
		return;
	}
	if (qp->rsp_count == IW_RSP_DEPTH) {
		fail(qp, L_RDMAP, 2, 0x07, d, len); /* more Reads outstanding than we take */
		return;
	}
	struct iw_rsp *p = &qp->rsp[(qp->rsp_head + qp->rsp_count++) % IW_RSP_DEPTH];
	memset(p, 0, sizeof(*p));
	p->rd = rq;
}

static uint64_t do_atomic(const struct iw_atomic_req *a)
{
	uint64_t *p = (uint64_t *)(uintptr_t)a->to;
	if (a->op == IW_ATOMIC_FADD)
		return __atomic_fetch_add(p, a->add_swap, __ATOMIC_SEQ_CST);
	uint64_t orig = __atomic_load_n(p, __ATOMIC_SEQ_CST);
	for (;;) {
		if ((orig ^ a->cmp) & a->cmp_mask)
			return orig;
		uint64_t nv = (orig & ~a->add_swap_mask) | (a->add_swap & a->add_swap_mask);
		if (__atomic_compare_exchange_n(p, &orig, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return orig;
	}
}

static void rx_atomic_req(struct iw_qp *qp, const uint8_t *d, size_t len, const uint8_t *pl,
			  size_t n)
{
	struct iw_atomic_req a;
	struct iw_term t;
	if (iw_atomic_req_decode(&a, pl, n) < 0) {
		fail(qp, L_RDMAP, 2, 0x06, d, len);
		return;
	}
	if (stag_check(qp, a.stag, a.to, 8, IW_ACCESS_REMOTE_ATOMIC, 1, &t) < 0) {
		fail(qp, t.layer, t.etype, t.ecode, d, len);
		return;
	}
	if (a.to % 8) {
		fail(qp, L_RDMAP, 1, 0x01, d, len); /* unaligned: outside any 64-bit word */
		return;
	}
	if (qp->rsp_count == IW_RSP_DEPTH) {
		fail(qp, L_RDMAP, 2, 0x07, d, len);
		return;
	}
	struct iw_rsp *p = &qp->rsp[(qp->rsp_head + qp->rsp_count++) % IW_RSP_DEPTH];
	memset(p, 0, sizeof(*p));
	p->atomic = 1;
	p->at.req_id = a.req_id;
	p->at.orig = do_atomic(&a);
}

static void rx_atomic_resp(struct iw_qp *qp, const uint8_t *d, size_t len, const uint8_t *pl,
			   size_t n)
{
	struct iw_atomic_resp a;
	struct iw_swqe *w;
	if (iw_atomic_resp_decode(&a, pl, n) < 0 || !(w = oldest(qp, 0, a.req_id))) {
		fail(qp, L_RDMAP, 2, 0x06, d, len);
		return;
	}
	/* The result region may have been deregistered since the post: check it again. */
	struct iw_mr *m = iw_mr_find(qp->r, w->sge[0].stag);
	uint64_t at = (uint64_t)(uintptr_t)w->sge[0].addr;
	if (!m || !m->valid || at < m->base || at + 8 > m->base + m->len)
		w->status = IW_WC_LOC_PROT_ERR;
	else
		iw_sge_copy(w->sge, 1, 0, &a.orig, 8);
	w->done = 1;
	iw_sq_retire(qp);
}

static void rx_untagged(struct iw_qp *qp, const struct iw_hdr *h, const uint8_t *d, size_t len,
			const uint8_t *pl, size_t n)
{
	static const uint8_t qn_of[16] = {[IW_OP_READ_REQ] = IW_QN_READ_REQ,
		[IW_OP_TERMINATE] = IW_QN_TERMINATE, [IW_OP_ATOMIC_REQ] = IW_QN_ATOMIC,
		[IW_OP_ATOMIC_RESP] = IW_QN_ATOMIC};
	if (h->qn != qn_of[h->opcode]) {
		fail(qp, L_DDP, 2, 0x01, d, len); /* invalid QN */
		return;
	}
	if (h->opcode == IW_OP_TERMINATE) {
		struct iw_term t;
		if (iw_term_decode(&t, pl, n) < 0)
			memset(&t, 0, sizeof(t)), t.layer = L_RDMAP, t.etype = 2, t.ecode = 0xff;
		iw_qp_fail(qp, NULL, NULL, 0, &t);
		return;
	}
	if (h->msn != qp->rx_msn[h->qn]) {
		fail(qp, L_DDP, 2, 0x03, d, len); /* MSN range not valid */
		return;
	}
	if (h->qn == IW_QN_SEND) {
		rx_send(qp, h, d, len, pl, n);
		return;
	}
	if (h->mo != 0 || !h->last) {
		fail(qp, L_DDP, 2, 0x04, d, len); /* these messages are one segment */
		return;
	}
	qp->rx_msn[h->qn]++;
	if (h->opcode == IW_OP_READ_REQ)
		rx_read_req(qp, d, len, pl, n);
	else if (h->opcode == IW_OP_ATOMIC_REQ)
		rx_atomic_req(qp, d, len, pl, n);
	else
		rx_atomic_resp(qp, d, len, pl, n);
}

int iw_rx_place_ok(struct iw_qp *qp, const struct iw_hdr *h, uint64_t n)
{
	struct iw_term t;
	if (!h->tagged || (h->opcode != IW_OP_WRITE && h->opcode != IW_OP_READ_RESP))
		return -1;
	return tagged_check(qp, h, n, &t);
}

/* The checks run again: the region or the Read may have gone meanwhile (a Terminate then, as
 * for any segment; the bytes are already there, as a hardware RNIC's DMA would be). */
void iw_rx_placed(struct iw_qp *qp, const uint8_t *hdr, size_t hlen, size_t n)
{
	struct iw_hdr h;
	if (qp->state == IW_QPS_ERROR)
		return;
	if (iw_hdr_decode(&h, hdr, hlen) != (int)hlen || !h.tagged) {
		bad_header(qp, hdr, hlen);
		return;
	}
	qp->r->st.segs_placed++;
	rx_tagged(qp, &h, hdr, hlen, NULL, n);
}

void iw_rx_segment(struct iw_qp *qp, const uint8_t *d, size_t len)
{
	struct iw_hdr h;
	int hl = iw_hdr_decode(&h, d, len);
	if (qp->state == IW_QPS_ERROR) {
		/* Only a Terminate is still of interest: it tells why the peer stopped. */
		struct iw_term t;
		if (hl > 0 && h.opcode == IW_OP_TERMINATE &&
		    iw_term_decode(&t, d + hl, len - (size_t)hl) > 0)
			iw_qp_fail(qp, NULL, NULL, 0, &t);
		return;
	}
	if (hl < 0) {
		bad_header(qp, d, len);
		return;
	}
	if (h.tagged)
		rx_tagged(qp, &h, d, len, d + hl, len - (size_t)hl);
	else
		rx_untagged(qp, &h, d, len, d + hl, len - (size_t)hl);
}
