/*
 * Messages (fi_send/fi_recv and friends) and the engine the tagged interface shares: a send
 * is one core message (header + payload, sctp_proto.h); a received message is matched
 * against the posted receives of its kind in posting order, or waits, as the core's own
 * completion entry (no copy), in the endpoint's unexpected queue until a receive matches it.
 * Data is copied once, from the core's buffer into the receive buffer -- or not at all: a
 * message that arrives whole and matches a posted receive as it begins to arrive is read by
 * the core straight into that receive's buffer (sctp_msg_place).
 */
#include "sctp_prov.h"

#include <stdlib.h>
#include <string.h>

/* The core tag picks the SCTP stream: unrelated tags travel on different streams. */
static int32_t core_tag(uint8_t op, uint64_t tag)
{
	if (op != SCTP_OP_TAGGED)
		return 0;
	return (int32_t)((tag ^ (tag >> 31) ^ (tag >> 62)) & 0x7fffffff);
}

/* A same-host peer (the core's shared-memory path) takes a message straight from the caller's
 * buffers when nothing is queued before it: an inject then needs no copy of its own. */
static int same_host(const struct sctp_domain *d, const struct sctp_av_entry *e)
{
	return e->addr.shm && d->self.shm && e->addr.shm_host == d->self.shm_host;
}

/* The payload of an inject into tx's own memory: the caller may reuse its buffers at once. */
static int inject_copy(struct sctp_tx *tx, int n, size_t len)
{
	uint8_t *p = len <= SCTP_TX_SMALL ? tx->small : (tx->copy = malloc(len));

	if (!p)
		return -FI_EAGAIN;
	for (int i = 1; i < n; i++) {
		memcpy(p, tx->iov[i].iov_base, tx->iov[i].iov_len);
		p += tx->iov[i].iov_len;
	}
	tx->iov[1] = (struct iovec){p - len, len};
	return 2;
}

ssize_t sctp_send_common(struct sctp_ep *ep, uint8_t op, const struct iovec *iov, size_t count,
			 fi_addr_t dest, uint64_t tag, uint64_t data, uint64_t flags, void *context)
{
	struct sctp_domain *d = ep->dom;
	int32_t ctag = core_tag(op, tag);
	struct sctp_av_entry *e;
	struct sctp_hdr h;
	struct sctp_tx *tx;
	uint32_t cctx;
	size_t len = 0;
	int n = 1, rc;

	if (count > SCTP_IOV_LIMIT)
		return -FI_EINVAL;
	for (size_t i = 0; i < count; i++)
		len += iov[i].iov_len;
	if (len > SCTP_MAX_MSG || ((flags & FI_INJECT) && len > sctp_params.inject_size))
		return -FI_EMSGSIZE;
	h = (struct sctp_hdr){.op = op, .src_ep = ep->idx, .src_dom = d->self.nonce, .tag = tag,
			      .data = data};
	if (flags & FI_REMOTE_CQ_DATA)
		h.flags |= SCTP_HF_CQ_DATA;

	SCTP_LOCK(d);
	if (!ep->enabled) {
		rc = -FI_EOPBADSTATE;
		goto out;
	}
	e = sctp_av_get(ep->av, dest);
	if (!e) {
		rc = -FI_EINVAL;
		goto out;
	}
	tx = sctp_pool_get(&d->txs);
	if (!tx) {
		rc = -FI_EAGAIN;
		goto out;
	}
	tx->ep = ep;
	tx->peer = e->peer;
	tx->context = context;
	tx->flags = (flags & ~(FI_MSG | FI_TAGGED)) | FI_SEND |
		    (op == SCTP_OP_TAGGED ? FI_TAGGED : FI_MSG);
	tx->ack_id = 0;
	tx->pending = 1;
	tx->err = 0;
	tx->copy = NULL;
	if (flags & FI_DELIVERY_COMPLETE) {
		h.flags |= SCTP_HF_ACK_REQ;
		h.ack_id = tx->ack_id = d->next_ack++;
		tx->pending++;
	}
	sctp_hdr_encode(&h, tx->hdr);
	tx->iov[0] = (struct iovec){tx->hdr, SCTP_HDR_LEN};
	for (size_t i = 0; i < count; i++)
		if (iov[i].iov_len)
			tx->iov[n++] = iov[i];
	cctx = SCTP_CTX_EP + e->addr.ep;
	rc = -EAGAIN;
	if ((flags & FI_INJECT) && n > 1) {
		if (same_host(d, e))
			rc = sctpt_send(d->core, e->peer, cctx, ctag, SCTPT_SEND_NOW, tx->iov, n, tx);
		if (rc == -EAGAIN && (n = inject_copy(tx, n, len)) < 0) {
			sctp_pool_put(&d->txs, tx);
			rc = n;
			goto out;
		}
	}
	if (rc == -EAGAIN)
		rc = sctpt_send(d->core, e->peer, cctx, ctag, 0, tx->iov, n, tx);
	if (rc < 0) {
		SCTP_WARN(FI_LOG_EP_DATA, "send: %s\n", sctpt_last_error());
		rc = -sctp_errno(rc);
		free(tx->copy);
		sctp_pool_put(&d->txs, tx);
		goto out;
	}
	ep->inflight++;
	if (tx->ack_id)
		TAILQ_INSERT_TAIL(&d->acks, tx, link);
	if (rc == 1 && --tx->pending == 0)
		sctp_tx_done(tx);
	rc = 0;
out:
	SCTP_UNLOCK(d);
	return rc;
}

/* ---- receiving ---- */

struct sctp_rx *sctp_rx_new(struct sctp_domain *d, const struct iovec *iov, size_t count,
			    fi_addr_t src, uint64_t tag, uint64_t ignore, uint64_t flags,
			    void *context)
{
	struct sctp_rx *rx = sctp_pool_get(&d->rxs);

	if (!rx)
		return NULL;
	rx->context = context;
	rx->flags = flags;
	rx->src = src;
	rx->tag = tag;
	rx->ignore = ignore;
	rx->seq = d->rx_seq++;
	rx->count = count;
	rx->total = 0;
	rx->used = 0;
	rx->ep = NULL;
	for (size_t i = 0; i < count; i++) {
		rx->iov[i] = iov[i];
		rx->total += iov[i].iov_len;
	}
	return rx;
}

void sctp_in_free(struct sctp_domain *d, struct sctp_in *in)
{
	sctpt_cq_release(d->core, &in->cqe, 1);
	sctp_pool_put(&d->ins, in);
}

int sctp_rx_match(const struct sctp_rx *rx, const struct sctp_in *in)
{
	if (rx->src != FI_ADDR_UNSPEC && rx->src != in->src)
		return 0;
	if (in->hdr.op == SCTP_OP_TAGGED)
		return ((in->hdr.tag ^ rx->tag) & ~rx->ignore) == 0;
	return 1;
}

/* Copies len bytes into the receive buffers from offset off on. */
static void copy_in(struct sctp_rx *rx, size_t off, const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < rx->count && len; i++) {
		if (off >= rx->iov[i].iov_len) {
			off -= rx->iov[i].iov_len;
			continue;
		}
		size_t n = rx->iov[i].iov_len - off;
		if (n > len)
			n = len;
		memcpy((char *)rx->iov[i].iov_base + off, data, n);
		data += n;
		len -= n;
		off = 0;
	}
}

/* The completion (entry, counter) of rx for a message of len payload bytes (header h, from
 * src) of which it got n. Returns 1 when rx is finished (the caller frees it), 0 when a
 * multi-receive buffer has room for more. */
static int rx_complete(struct sctp_ep *ep, struct sctp_rx *rx, const struct sctp_hdr *h,
		       fi_addr_t src, size_t len, size_t n)
{
	uint64_t flags = FI_RECV | (h->op == SCTP_OP_TAGGED ? FI_TAGGED : FI_MSG);
	uint64_t data = 0;
	void *buf = rx->count ? (char *)rx->iov[0].iov_base + rx->used : NULL;
	int done = 1;

	if (h->flags & SCTP_HF_CQ_DATA) {
		flags |= FI_REMOTE_CQ_DATA;
		data = h->data;
	}
	if (rx->flags & FI_MULTI_RECV) {
		rx->used += n;
		done = n < len || rx->total - rx->used < ep->min_multi_recv;
		if (done)
			flags |= FI_MULTI_RECV;
	}
	if (n < len) {
		if (ep->rx_cq)
			sctp_cq_write_err(ep->rx_cq, rx->context, flags, n, buf, data, h->tag,
					  len - n, FI_ETRUNC, -FI_ETRUNC);
		sctp_cntr_inc_err(ep->recv_cntr);
	} else {
		if (ep->rx_cq && (!ep->rx_selective || (rx->flags & FI_COMPLETION) ||
				  (flags & FI_MULTI_RECV)))
			sctp_cq_write(ep->rx_cq, rx->context, flags, n, buf, data,
				      h->op == SCTP_OP_TAGGED ? h->tag : 0, src);
		sctp_cntr_inc(ep->recv_cntr);
	}
	return done;
}

/* Copies in's data into rx and completes it; see rx_complete for what it returns. Releases
 * the core's entry c, and gives in back to the pool when it is one of the pool's (c is then
 * its own). */
static int deliver(struct sctp_ep *ep, struct sctp_rx *rx, struct sctp_in *in,
		   struct sctpt_cqe *c)
{
	size_t avail = rx->total - rx->used, n = in->len < avail ? in->len : avail;
	int done;

	copy_in(rx, rx->used, in->data, n);
	done = rx_complete(ep, rx, &in->hdr, in->src, in->len, n);
	ep->dom->copied++;
	sctpt_cq_release(ep->dom->core, c, 1);
	if (c == &in->cqe)
		sctp_pool_put(&ep->dom->ins, in);
	return done;
}

void sctp_msg_deliver(struct sctp_ep *ep, struct sctp_rx *rx, struct sctp_in *in)
{
	if (deliver(ep, rx, in, &in->cqe))
		sctp_rx_free(ep->dom, rx);
}

void sctp_msg_arrived(struct sctp_ep *ep, struct sctpt_cqe *c, const struct sctp_hdr *h)
{
	int tagged = h->op == SCTP_OP_TAGGED;
	struct sctp_rx_q *q = tagged ? &ep->rx_tag : &ep->rx_msg;
	struct sctp_in in, *keep; /* in.cqe is not set: c is the entry, unless kept */
	struct sctp_rx *rx;

	in.hdr = *h;
	in.data = (const uint8_t *)c->data + SCTP_HDR_LEN;
	in.len = c->len - SCTP_HDR_LEN;
	in.src = sctp_av_lookup_src(ep->av, h->src_dom, h->src_ep);
	TAILQ_FOREACH(rx, q, link) {
		if (sctp_rx_match(rx, &in)) {
			if (deliver(ep, rx, &in, c)) {
				TAILQ_REMOVE(q, rx, link);
				sctp_rx_free(ep->dom, rx);
			}
			return;
		}
	}
	keep = sctp_pool_get(&ep->dom->ins);
	if (!keep) {
		SCTP_WARN(FI_LOG_EP_DATA, "out of memory: an unexpected message is dropped\n");
		sctpt_cq_release(ep->dom->core, c, 1);
		return;
	}
	keep->cqe = *c;
	keep->hdr = in.hdr;
	keep->data = in.data;
	keep->len = in.len;
	keep->src = in.src;
	TAILQ_INSERT_TAIL(tagged ? &ep->un_tag : &ep->un_msg, keep, link);
}

/* rx takes the earliest unexpected message it matches, else joins the posted receives: at
 * the end, or, posted again after its placement failed, where its posting order puts it. */
static void rx_post(struct sctp_ep *ep, struct sctp_rx *rx, int in_order)
{
	int tagged = (rx->flags & FI_TAGGED) != 0;
	struct sctp_in_q *uq = tagged ? &ep->un_tag : &ep->un_msg;
	struct sctp_rx_q *q = tagged ? &ep->rx_tag : &ep->rx_msg;
	struct sctp_in *in, *next;
	struct sctp_rx *it;

	for (in = TAILQ_FIRST(uq); in; in = next) {
		next = TAILQ_NEXT(in, link);
		if (!sctp_rx_match(rx, in))
			continue;
		TAILQ_REMOVE(uq, in, link);
		if (deliver(ep, rx, in, &in->cqe)) {
			sctp_rx_free(ep->dom, rx);
			return;
		}
	}
	if (in_order) {
		TAILQ_FOREACH(it, q, link) {
			if (it->seq > rx->seq) {
				TAILQ_INSERT_BEFORE(it, rx, link);
				return;
			}
		}
	}
	TAILQ_INSERT_TAIL(q, rx, link);
}

ssize_t sctp_recv_common(struct sctp_ep *ep, const struct iovec *iov, size_t count,
			 fi_addr_t src, uint64_t tag, uint64_t ignore, uint64_t flags,
			 void *context)
{
	struct sctp_rx *rx;

	if (!(ep->caps & FI_DIRECTED_RECV))
		src = FI_ADDR_UNSPEC;
	if (flags & FI_TAGGED)
		flags &= ~FI_MULTI_RECV;
	if (count > SCTP_IOV_LIMIT)
		return -FI_EINVAL;
	SCTP_LOCK(ep->dom);
	if (!ep->enabled) {
		SCTP_UNLOCK(ep->dom);
		return -FI_EOPBADSTATE;
	}
	rx = sctp_rx_new(ep->dom, iov, count, src, tag, ignore, flags, context);
	if (!rx) {
		SCTP_UNLOCK(ep->dom);
		return -FI_EAGAIN;
	}
	rx_post(ep, rx, 0);
	SCTP_UNLOCK(ep->dom);
	return 0;
}

/* ---- direct placement ---- */

int sctp_msg_place(struct sctp_domain *d, uint32_t context, size_t len, const void *head,
		   size_t head_len, struct iovec iov[2], void **cookie)
{
	uint32_t idx = context - SCTP_CTX_EP;
	struct sctp_ep *ep;
	struct sctp_rx_q *q;
	struct sctp_in in;
	struct sctp_rx *rx;
	size_t payload;

	if (context < SCTP_CTX_EP || idx >= SCTP_MAX_EPS || !(ep = d->eps[idx]) || !ep->enabled ||
	    sctp_hdr_decode(&in.hdr, head, head_len) != 0 ||
	    (in.hdr.op != SCTP_OP_MSG && in.hdr.op != SCTP_OP_TAGGED))
		return 0;
	payload = len - SCTP_HDR_LEN;
	in.src = sctp_av_lookup_src(ep->av, in.hdr.src_dom, in.hdr.src_ep);
	q = in.hdr.op == SCTP_OP_TAGGED ? &ep->rx_tag : &ep->rx_msg;
	TAILQ_FOREACH(rx, q, link)
		if (sctp_rx_match(rx, &in))
			break;
	/* the receive it matches, whole and roomy enough; the rest (truncation, iovecs,
	 * multi-receive buffers) goes the usual way */
	if (!rx || rx->count != 1 || (rx->flags & FI_MULTI_RECV) || rx->iov[0].iov_len < payload)
		return 0;
	TAILQ_REMOVE(q, rx, link);
	TAILQ_INSERT_TAIL(&d->placing, rx, link);
	rx->ep = ep;
	ep->inflight++;
	d->placed++;
	iov[0] = (struct iovec){rx->hdr, SCTP_HDR_LEN};
	iov[1] = (struct iovec){rx->iov[0].iov_base, payload};
	*cookie = rx;
	return 2;
}

/* A placed receive's endpoint lets go of it (freed when it was closed and this was the
 * last thing it waited for). */
static void placed_unref(struct sctp_ep *ep)
{
	if (--ep->inflight == 0 && ep->closed)
		free(ep);
}

void sctp_msg_placed(struct sctp_domain *d, const struct sctpt_cqe *c)
{
	struct sctp_rx *rx = c->cookie;
	struct sctp_ep *ep = rx->ep;
	struct sctp_hdr h;

	TAILQ_REMOVE(&d->placing, rx, link);
	rx->ep = NULL;
	if (ep->closed) {
		sctp_rx_free(d, rx);
	} else if (c->status < 0 || sctp_hdr_decode(&h, c->data, c->len) != 0) {
		/* the message went nowhere (its sender was lost): the receive is still posted */
		d->placed--;
		rx_post(ep, rx, 1);
	} else {
		if (h.flags & SCTP_HF_ACK_REQ)
			sctp_send_ctrl(d, c->peer, SCTP_OP_ACK, 0, h.ack_id);
		rx_complete(ep, rx, &h, sctp_av_lookup_src(ep->av, h.src_dom, h.src_ep),
			    c->len - SCTP_HDR_LEN, c->len - SCTP_HDR_LEN);
		sctp_rx_free(d, rx);
	}
	placed_unref(ep);
}

void sctp_msg_place_fini(struct sctp_domain *d)
{
	struct sctp_rx *rx;

	while ((rx = TAILQ_FIRST(&d->placing))) {
		TAILQ_REMOVE(&d->placing, rx, link);
		placed_unref(rx->ep);
		sctp_rx_free(d, rx);
	}
}

/* ---- fi_ops_msg ---- */

static ssize_t msg_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
			void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {buf, len};

	(void)desc;
	return sctp_recv_common(ep, &iov, 1, src, 0, 0, ep->rx_op_flags | FI_MSG, context);
}

static ssize_t msg_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)desc;
	return sctp_recv_common(ep, iov, count, src, 0, 0, ep->rx_op_flags | FI_MSG, context);
}

static ssize_t msg_recvmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	if (flags & ~(FI_COMPLETION | FI_MULTI_RECV | FI_REMOTE_CQ_DATA | FI_MSG | FI_RECV))
		return -FI_EBADFLAGS;
	return sctp_recv_common(ep, msg->msg_iov, msg->iov_count, msg->addr, 0, 0,
				(flags & ~FI_TAGGED) | FI_MSG, msg->context);
}

static ssize_t msg_send(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			fi_addr_t dest, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {(void *)buf, len};

	(void)desc;
	return sctp_send_common(ep, SCTP_OP_MSG, &iov, 1, dest, 0, 0, ep->tx_op_flags, context);
}

static ssize_t msg_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t dest, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)desc;
	return sctp_send_common(ep, SCTP_OP_MSG, iov, count, dest, 0, 0, ep->tx_op_flags,
				context);
}

#define SCTP_SEND_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_INJECT_COMPLETE | \
			 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_MSG | FI_TAGGED | \
			 FI_SEND | FI_FENCE | FI_MORE | FI_MATCH_COMPLETE)

static ssize_t msg_sendmsg(struct fid_ep *fep, const struct fi_msg *msg, uint64_t flags)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	if (flags & ~SCTP_SEND_FLAGS)
		return -FI_EBADFLAGS;
	if (flags & FI_MATCH_COMPLETE)
		flags |= FI_DELIVERY_COMPLETE;
	return sctp_send_common(ep, SCTP_OP_MSG, msg->msg_iov, msg->iov_count, msg->addr, 0,
				msg->data, flags, msg->context);
}

static ssize_t msg_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {(void *)buf, len};

	return sctp_send_common(ep, SCTP_OP_MSG, &iov, 1, dest, 0, 0,
				FI_INJECT | SCTP_TXF_NOCOMP, NULL);
}

static ssize_t msg_senddata(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {(void *)buf, len};

	(void)desc;
	return sctp_send_common(ep, SCTP_OP_MSG, &iov, 1, dest, 0, data,
				ep->tx_op_flags | FI_REMOTE_CQ_DATA, context);
}

static ssize_t msg_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {(void *)buf, len};

	return sctp_send_common(ep, SCTP_OP_MSG, &iov, 1, dest, 0, data,
				FI_INJECT | FI_REMOTE_CQ_DATA | SCTP_TXF_NOCOMP, NULL);
}

struct fi_ops_msg sctp_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = msg_recv,
	.recvv = msg_recvv,
	.recvmsg = msg_recvmsg,
	.send = msg_send,
	.sendv = msg_sendv,
	.sendmsg = msg_sendmsg,
	.inject = msg_inject,
	.senddata = msg_senddata,
	.injectdata = msg_injectdata,
};
