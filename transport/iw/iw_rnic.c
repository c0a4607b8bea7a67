/* iw_rnic.c: the software RNIC: open/close, its handler on the endpoint (segments in, send
 * completions, lost peers), transmit slots, handing segments to the core, progress
 * (caller-driven or its own thread). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iw_int.h"

static __thread char last_error[256];

int iw_err(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return code;
}

const char *iw_last_error(void)
{
	return last_error;
}

void iw_rnic_attr_init(struct iw_rnic_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->seg_size = 60 * 1024;
	attr->tx_slots = 512;
	attr->max_held_bytes = 64u << 20;
	attr->progress_interval_ms = 1;
	attr->context_base = IW_CONTEXT_BASE;
	attr->dereg_wait_ms = 10000;
}

static void rnic_complete(void *arg, const struct sctpt_cqe *c);
static int rnic_place(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		      const void *head, size_t head_len, struct iovec iov[2], void **cookie);

static void *progress_main(void *arg)
{
	struct iw_rnic *r = arg;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		sctpt_wait(r->ep, r->attr.progress_interval_ms);
		iw_progress(r);
	}
	return NULL;
}

int iw_open(struct sctpt_ep *ep, const struct iw_rnic_attr *attr, struct iw_rnic **out)
{
	struct iw_rnic_attr def;
	struct iw_rnic *r;
	if (!ep || !out)
		return iw_err(-EINVAL, "iw_open: no endpoint");
	if (!attr) {
		iw_rnic_attr_init(&def);
		attr = &def;
	}
	if (attr->seg_size < 1 || attr->seg_size > (1u << 30) || attr->tx_slots < 1 ||
	    attr->context_base > UINT32_MAX - IW_QPN_MAX)
		return iw_err(-EINVAL, "iw_open: seg_size %zu / tx_slots %u / context_base %#x out "
			      "of range", attr->seg_size, attr->tx_slots, attr->context_base);
	r = calloc(1, sizeof(*r));
	if (!r)
		return iw_err(-ENOMEM, "iw_open: out of memory");
	r->ep = ep;
	r->attr = *attr;
	if (r->attr.progress_interval_ms <= 0)
		r->attr.progress_interval_ms = 1;
	r->slots = calloc(attr->tx_slots, sizeof(*r->slots));
	if (!r->slots) {
		free(r);
		return iw_err(-ENOMEM, "iw_open: out of memory");
	}
	for (unsigned i = 0; i < attr->tx_slots; i++) {
		r->slots[i].next = r->free_slots;
		r->free_slots = &r->slots[i];
	}
	pthread_mutex_init(&r->lock, NULL);
	struct sctpt_handler h = {.lo = attr->context_base, .hi = attr->context_base + IW_QPN_MAX,
				  .complete = rnic_complete, .place = rnic_place,
				  .place_anytime = 1, .events = 1, .arg = r};
	int rc = r->handler = sctpt_handler_add(ep, &h);
	if (rc < 0) {
		iw_err(rc, "iw_open: contexts %#x..%#x: %s", h.lo, h.hi, sctpt_last_error());
		goto fail;
	}
	if (attr->progress_thread) {
		if (pthread_create(&r->thread, NULL, progress_main, r) != 0) {
			sctpt_handler_remove(ep, r->handler);
			rc = iw_err(-EAGAIN, "iw_open: cannot start the progress thread");
			goto fail;
		}
		r->thread_on = 1;
	}
	*out = r;
	return 0;
fail:
	pthread_mutex_destroy(&r->lock);
	free(r->slots);
	free(r);
	return rc;
}

double iw_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void iw_close(struct iw_rnic *r)
{
	if (!r)
		return;
	if (r->thread_on) {
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
		pthread_join(r->thread, NULL);
	}
	/* segments that read a region's memory in place get as long as iw_dereg_mr gives them:
	 * the caller frees the memory once we return */
	double t0 = iw_now();
	double wait = r->attr.dereg_wait_ms > 2000 ? r->attr.dereg_wait_ms / 1e3 : 2.0;
	for (;;) {
		iw_progress(r);
		pthread_mutex_lock(&r->lock);
		unsigned busy = r->slots_busy, in_place = r->in_place;
		pthread_mutex_unlock(&r->lock);
		if (!busy || iw_now() - t0 > (in_place ? wait : 2.0))
			break;
		sctpt_wait(r->ep, 5);
	}
	sctpt_handler_remove(r->ep, r->handler);
	pthread_mutex_lock(&r->lock);
	for (unsigned i = 0; i < IW_MAX_QP; i++)
		if (r->qp[i])
			iw_qp_free(r->qp[i]);
	while (r->pds) {
		struct iw_pd *pd = r->pds;
		r->pds = pd->next;
		free(pd);
	}
	while (r->cqs) {
		struct iw_cq *cq = r->cqs;
		r->cqs = cq->next;
		free(cq->ring);
		free(cq);
	}
	int stuck = r->slots_busy != 0;
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_destroy(&r->lock);
	if (!stuck) {
		for (unsigned i = 0; i < r->attr.tx_slots; i++)
			free(r->slots[i].buf);
		free(r->slots);
	}
	while (r->rsp_pooled)
		free(r->rsp_pool[--r->rsp_pooled]); /* else the core may still read segments out of them (their completions now go nowhere) */
	free(r);
}

struct iw_slot *iw_slot_get(struct iw_rnic *r)
{
	struct iw_slot *s = r->free_slots;
	if (!s)
		return NULL;
	r->free_slots = s->next;
	memset(s, 0, sizeof(*s));
	r->slots_busy++;
	return s;
}

void *iw_rsp_buf(struct iw_rnic *r, struct iw_slot *s, size_t n)
{
	if (n < IW_RSP_POOL_MIN || n > r->attr.seg_size)
		return s->buf = malloc(n);
	s->pooled = 1;
	return s->buf = r->rsp_pooled ? r->rsp_pool[--r->rsp_pooled] : malloc(r->attr.seg_size);
}

void iw_slot_queue(struct iw_rnic *r, struct iw_slot *s)
{
	s->next = NULL;
	if (r->outq_tail)
		r->outq_tail->next = s;
	else
		r->outq = s;
	r->outq_tail = s;
	r->st.segs_sent++;
}

void iw_slot_done(struct iw_rnic *r, struct iw_slot *s, int status)
{
	struct iw_qp *qp = s->qp;
	if (qp && s->wqe) {
		s->wqe->outstanding--;
		if (status < 0 && s->wqe->status == IW_WC_SUCCESS)
			s->wqe->status = IW_WC_PEER_LOST;
	}
	if (qp && status < 0)
		iw_qp_lost(qp);
	if (qp)
		iw_sq_retire(qp);
	if (s->mr) {
		s->mr->inflight--;
		r->in_place--;
		if (qp)
			qp->rsp_in_place--;
		s->mr = NULL;
	}
	if (s->pooled && r->rsp_pooled < IW_RSP_POOL)
		r->rsp_pool[r->rsp_pooled++] = s->buf;
	else
		free(s->buf);
	s->buf = NULL;
	s->pooled = 0;
	s->next = r->free_slots;
	r->free_slots = s;
	r->slots_busy--;
}

static size_t slot_len(const struct iw_slot *s)
{
	size_t n = 0;
	for (int i = 0; i < s->iovcnt; i++)
		n += s->iov[i].iov_len;
	return n;
}

/* Whether s may follow head in its bundle (both ordered, same QP connection and fence). */
static int bundles_with(const struct iw_slot *head, const struct iw_slot *s)
{
	return !s->flags && s->peer == head->peer && s->context == head->context &&
	       s->tag == head->tag;
}

/* Takes the next core message off the queue (lock held): one slot, or a bundle of ordered
 * segments chained on bnext; fills iov and returns the iovec count. */
static int take_message(struct iw_rnic *r, struct iovec *iov, int max_iov)
{
	struct iw_slot *head = r->outq, *last = head, *s;
	size_t bytes = slot_len(head);
	int n = 1, k = 0;

	if (!head->flags && bytes <= IW_BUNDLE_BYTES)
		for (s = head->next; s && n < IW_BUNDLE_MAX && bundles_with(head, s); s = s->next) {
			size_t b = slot_len(s);
			if (bytes + b > IW_BUNDLE_BYTES || 1 + (n + 1) * (2 + IW_MAX_SGE) > max_iov)
				break;
			bytes += b;
			last->bnext = s;
			last = s;
			n++;
		}
	r->outq = last->next;
	if (!r->outq)
		r->outq_tail = NULL;
	last->bnext = NULL;
	if (n == 1) {
		memcpy(iov, head->iov, (size_t)head->iovcnt * sizeof(*iov));
		return head->iovcnt;
	}
	static const uint8_t mark = IW_BUNDLE_MARK;
	iov[k].iov_base = (void *)&mark;
	iov[k++].iov_len = 1;
	for (s = head; s; s = s->bnext) {
		uint32_t len = (uint32_t)slot_len(s);
		s->blen[0] = (uint8_t)(len >> 24);
		s->blen[1] = (uint8_t)(len >> 16);
		s->blen[2] = (uint8_t)(len >> 8);
		s->blen[3] = (uint8_t)len;
		iov[k].iov_base = s->blen;
		iov[k++].iov_len = 4;
		memcpy(iov + k, s->iov, (size_t)s->iovcnt * sizeof(*iov));
		k += s->iovcnt;
	}
	r->st.bundles++;
	return k;
}

/* Every slot of the message that starts at s is done (lock held). */
static void message_done(struct iw_rnic *r, struct iw_slot *s, int status)
{
	while (s) {
		struct iw_slot *next = s->bnext;
		iw_slot_done(r, s, status);
		s = next;
	}
}

/*
 * Hands the queued segments to the core in queue order, without the RNIC's lock (posting and
 * polling need not wait for the core). One thread at a time: the core keeps a context's
 * messages in the order of the sctpt_send calls, and a QP's MSNs and fences were given in
 * queue order, so two threads sending at once could swap two of a QP's segments. A thread
 * that finds another at it leaves its segments to that one, which loops until none is left.
 * Runs of small ordered segments of one QP go as one message (a bundle): a message costs the
 * core a packet and a system call, whatever its size.
 */
void iw_flush(struct iw_rnic *r)
{
	struct iovec iov[1 + IW_BUNDLE_MAX * (2 + IW_MAX_SGE)];

	pthread_mutex_lock(&r->lock);
	if (r->flushing) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	r->flushing = 1;
	while (r->outq) {
		struct iw_slot *s = r->outq;
		int n = take_message(r, iov, (int)(sizeof(iov) / sizeof(iov[0])));
		pthread_mutex_unlock(&r->lock);
		int rc = sctpt_send(r->ep, s->peer, s->context, s->tag, s->flags, iov, n, s);
		pthread_mutex_lock(&r->lock);
		/* 0: its one SEND completion frees the slots (rnic_complete; perhaps already, in
		 * another thread: s is not ours to touch). 1 (handed to SCTP) and < 0 (refused)
		 * have no completion: the slots are done now. */
		if (rc != 0) {
			message_done(r, s, rc > 0 ? 0 : rc);
			iw_engine(r);
		}
	}
	r->flushing = 0;
	pthread_mutex_unlock(&r->lock);
}

int iw_progress(struct iw_rnic *r)
{
	pthread_mutex_lock(&r->lock);
	int queued = r->outq != NULL;
	iw_engine(r);
	queued |= r->outq != NULL;
	pthread_mutex_unlock(&r->lock);
	iw_flush(r);
	return queued;
}

int iw_rnic_stats(struct iw_rnic *r, struct iw_rnic_stats *st)
{
	pthread_mutex_lock(&r->lock);
	*st = r->st;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

static int fence_reached(const struct iw_qp *qp, uint32_t fence)
{
	return ((qp->rx_unord - fence) & IW_FENCE_MASK) < (IW_FENCE_MASK >> 1);
}

/* Ordered segments whose fence is now met, in arrival order. */
static void drain_held(struct iw_qp *qp)
{
	struct iw_rnic *r = qp->r;
	while (r->qp[qp->qpn] == qp && qp->held && fence_reached(qp, qp->held->fence)) {
		struct iw_held *h = qp->held;
		qp->held = h->next;
		if (!qp->held)
			qp->held_tail = NULL;
		qp->held_bytes -= h->len;
		iw_rx_segment(qp, h->data, h->len);
		free(h);
	}
}

static void hold(struct iw_qp *qp, const uint8_t *d, size_t len, uint32_t fence)
{
	static const struct iw_term over = {.layer = IW_LAYER_DDP, .etype = 0, .ecode = 0};
	struct iw_held *h;
	if (qp->held_bytes + len > qp->r->attr.max_held_bytes || !(h = malloc(sizeof(*h) + len))) {
		iw_qp_fail(qp, &over, NULL, 0, NULL);
		return;
	}
	h->next = NULL;
	h->fence = fence;
	h->len = len;
	if (len)
		memcpy(h->data, d, len);
	if (qp->held_tail)
		qp->held_tail->next = h;
	else
		qp->held = h;
	qp->held_tail = h;
	qp->held_bytes += len;
	qp->r->st.held++;
}

/* An ordered segment with its fence (lock held). */
static void ordered_input(struct iw_qp *qp, const uint8_t *d, size_t len, uint32_t fence)
{
	if (qp->state == IW_QPS_ERROR)
		iw_rx_segment(qp, d, len); /* only a Terminate still matters: no fence */
	else if (qp->held || !fence_reached(qp, fence))
		hold(qp, d, len, fence);
	else
		iw_rx_segment(qp, d, len);
}

/* A bundle's segments, in order, all with its fence (lock held). */
static void bundle_input(struct iw_rnic *r, struct iw_qp *qp, const uint8_t *d, size_t len,
			 uint32_t fence)
{
	static const struct iw_term bad = {.layer = IW_LAYER_DDP, .etype = 0, .ecode = 0};
	size_t off = 1; /* the mark */

	r->st.segs_recv--; /* counted per segment below */
	while (off < len && r->qp[qp->qpn] == qp) {
		uint32_t n;
		if (len - off < 4 || (n = (uint32_t)d[off] << 24 | (uint32_t)d[off + 1] << 16 |
					  (uint32_t)d[off + 2] << 8 | d[off + 3]) > len - off - 4) {
			iw_qp_fail(qp, &bad, NULL, 0, NULL); /* a bundle cut short */
			return;
		}
		r->st.segs_recv++;
		ordered_input(qp, d + off + 4, n, fence);
		off += 4 + (size_t)n;
	}
}

/*
 * Direct placement of the bulk of a transfer: a tagged segment that is not its message's
 * last (sent unordered, placed whenever it arrives) and carries at least IW_PLACE_MIN bytes
 * goes from the packets straight into its region, once its header checks out; the RECV entry
 * then holds the header alone (struct iw_placed). The region counts it in flight until then
 * (iw_dereg_mr waits). Runs with the core's lock held: the RNIC lock only if free (else the
 * segment takes the usual way, a copy).
 */
#define IW_PLACE_MIN 4096

struct iw_placed {
	uint32_t stag;
	uint8_t hdr[IW_TAGGED_HLEN];
};

static int rnic_place(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		      const void *head, size_t head_len, struct iovec iov[2], void **cookie)
{
	struct iw_rnic *r = arg;
	const uint8_t *d = head;
	uint32_t qpn = context - r->attr.context_base;
	struct iw_placed *p = NULL;
	struct iw_hdr h;

	if (len < IW_TAGGED_HLEN + IW_PLACE_MIN || head_len < IW_TAGGED_HLEN ||
	    (d[0] & (IW_DDP_T | IW_DDP_L)) != IW_DDP_T || qpn > IW_QPN_MAX ||
	    pthread_mutex_trylock(&r->lock))
		return 0;
	struct iw_qp *qp = r->qp[qpn];
	if (qp && qp->state == IW_QPS_RTS && qp->peer == peer &&
	    iw_hdr_decode(&h, d, IW_TAGGED_HLEN) == IW_TAGGED_HLEN &&
	    (((uint32_t)tag - qp->rx_unord) & IW_FENCE_MASK) < IW_RX_WINDOW &&
	    iw_rx_place_ok(qp, &h, len - IW_TAGGED_HLEN) == 0 && (p = malloc(sizeof(*p)))) {
		p->stag = h.stag;
		memcpy(p->hdr, d, IW_TAGGED_HLEN);
		iw_mr_find(r, h.stag)->inflight++;
	}
	pthread_mutex_unlock(&r->lock);
	if (!p)
		return 0;
	iov[0] = (struct iovec){p->hdr, IW_TAGGED_HLEN};
	iov[1] = (struct iovec){(void *)(uintptr_t)h.to, len - IW_TAGGED_HLEN};
	*cookie = p;
	return 2;
}

/* The core is done with a placed segment (lock held). */
static void placed_done(struct iw_rnic *r, struct iw_placed *p)
{
	struct iw_mr *m = iw_mr_find(r, p->stag);
	if (m && m->inflight)
		m->inflight--;
	free(p);
}

/* A received segment (lock held); c->context is one of ours. placed: an unordered tagged
 * segment whose payload is already in its region, d its header. */
static void segment_in(struct iw_rnic *r, const struct sctpt_cqe *c, const uint8_t *d,
		       const struct iw_placed *placed)
{
	uint32_t qpn = c->context - r->attr.context_base;
	r->st.segs_recv++;
	struct iw_qp *qp = qpn <= IW_QPN_MAX ? r->qp[qpn] : NULL;
	if (!qp || qp->state == IW_QPS_IDLE || qp->peer != c->peer) {
		r->st.dropped++;
		return;
	}
	if (c->len >= 1 && d[0] == IW_BUNDLE_MARK) {
		bundle_input(r, qp, d, c->len, (uint32_t)c->tag & IW_FENCE_MASK);
		return;
	}
	/* Our senders send exactly the non-Last tagged segments unordered (iw_verbs.h). */
	if (qp->state == IW_QPS_ERROR) {
		if (!placed)
			iw_rx_segment(qp, d, c->len); /* only a Terminate still matters: no fence */
	} else if (c->len >= 1 && (d[0] & IW_DDP_T) && !(d[0] & IW_DDP_L)) {
		/* The fence of an ordered segment counts the unordered ones sent before it; later
		 * ones may overtake, so count by index: rx_unord is the first index not yet seen. */
		uint32_t off = ((uint32_t)c->tag - qp->rx_unord) & IW_FENCE_MASK;
		if (off >= IW_RX_WINDOW) {
			/* a duplicate or a runaway sender (a placed one's bytes here: its header) */
			static const struct iw_term far = {.layer = IW_LAYER_DDP, .etype = 0, .ecode = 0};
			iw_qp_fail(qp, &far, d, placed ? IW_TAGGED_HLEN : c->len, NULL);
			return;
		}
		uint32_t idx = ((uint32_t)c->tag & IW_FENCE_MASK) % IW_RX_WINDOW;
		qp->rx_seen[idx / 64] |= 1ull << (idx % 64);
		for (;;) {
			uint32_t w = qp->rx_unord % IW_RX_WINDOW;
			if (!(qp->rx_seen[w / 64] & (1ull << (w % 64))))
				break;
			qp->rx_seen[w / 64] &= ~(1ull << (w % 64));
			qp->rx_unord = (qp->rx_unord + 1) & IW_FENCE_MASK;
		}
		if (placed)
			iw_rx_placed(qp, d, IW_TAGGED_HLEN, c->len - IW_TAGGED_HLEN);
		else
			iw_rx_segment(qp, d, c->len);
		if (r->qp[qpn] == qp)
			drain_held(qp);
	} else {
		ordered_input(qp, d, c->len, (uint32_t)c->tag & IW_FENCE_MASK);
	}
}

static void segment_input(struct iw_rnic *r, const struct sctpt_cqe *c)
{
	struct iw_placed *placed = c->cookie;
	segment_in(r, c, placed ? placed->hdr : c->data, placed);
	if (placed)
		placed_done(r, placed);
}

/* The QPs connected to a peer that is gone: its QPs (and their state) went with it. */
static void peer_lost(struct iw_rnic *r, sctpt_peer_t peer)
{
	for (uint32_t i = 1; i < r->qp_end; i++)
		if (r->qp[i] && r->qp[i]->state == IW_QPS_RTS && r->qp[i]->peer == peer)
			iw_qp_lost(r->qp[i]);
}

/*
 * The core's completions for our contexts, outside its lock. SEND: the cookie is a slot of
 * ours (only our sends use these contexts). RECV with an error status would return a recv_buf
 * buffer: the RNIC gives none.
 */
static void rnic_complete(void *arg, const struct sctpt_cqe *c)
{
	struct iw_rnic *r = arg;
	pthread_mutex_lock(&r->lock);
	if (c->kind == SCTPT_CQE_RECV && c->status == 0) {
		segment_input(r, c);
	} else if (c->kind == SCTPT_CQE_RECV && c->cookie) {
		placed_done(r, c->cookie); /* abandoned: the sender was lost */
	} else if (c->kind == SCTPT_CQE_SEND) {
		message_done(r, c->cookie, c->status);
	} else if (c->kind == SCTPT_CQE_EVENT && (c->ev.type == SCTPT_EV_ASSOC_DOWN ||
						 c->ev.type == SCTPT_EV_ASSOC_RESTART ||
						 c->ev.type == SCTPT_EV_PEER_CLOSED)) {
		peer_lost(r, c->ev.peer);
	}
	iw_engine(r);
	pthread_mutex_unlock(&r->lock);
	iw_flush(r);
}
