/*
 * RMA (fi_read, fi_write and friends) on the project's iWARP layer (transport/iw): RDMA Write
 * and Read over the same SCTP associations, one queue pair per pair of domains.
 *
 * Queue pairs are set up on first use, and again after an error put them in the error state:
 * each side creates its QP and sends SCTP_OP_QP_HELLO (its QP number, and the STag and
 * address of its fence byte); on a HELLO a side connects its QP to the one named and sends
 * SCTP_OP_QP_READY; it sends RDMA once the READY of the other side says the other QP takes
 * its segments. A HELLO naming another QP than the one ours is connected to means the other
 * side started over: ours does too.
 *
 * Completion: a Write is complete at the iWARP layer once SCTP has it, before the target has
 * checked it; so every write is followed by a 1-byte Read of the target's fence byte, which
 * the target serves only after placing every earlier segment of the QP (iWARP's ordering),
 * and completes with it: writes complete placed (FI_DELIVERY_COMPLETE, what Open MPI's btl
 * ofi asks for), and a write the target refused completes with its error. Errors the target finds (bad
 * STag, bounds, rights) come back as error completions of the operation that caused them;
 * the target's memory is untouched.
 */
#include "sctp_prov.h"

#include <stdlib.h>
#include <string.h>

static int wc_error(enum iw_wc_status s)
{
	switch (s) {
	case IW_WC_SUCCESS:
		return 0;
	case IW_WC_LOC_PROT_ERR:
	case IW_WC_REM_ACCESS_ERR:
		return FI_EACCES;
	case IW_WC_LOC_LEN_ERR:
		return FI_EMSGSIZE;
	case IW_WC_WR_FLUSH_ERR:
		return FI_ECANCELED;
	case IW_WC_PEER_LOST:
		return FI_EIO;
	default:
		return FI_EREMOTEIO;
	}
}

/* ---- domain state ---- */

int sctp_rma_init(struct sctp_domain *d)
{
	int rc = iw_open(d->core, NULL, &d->rnic);

	if (rc == 0)
		rc = iw_pd_alloc(d->rnic, &d->pd);
	if (rc == 0)
		rc = iw_cq_create(d->rnic, 4096, &d->iwcq);
	/* local buffers: one local-only STag over the address space (it never leaves us) */
	if (rc == 0)
		rc = iw_reg_mr(d->pd, (void *)(uintptr_t)1, UINTPTR_MAX - 1,
			       IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE, &d->local_stag);
	if (rc == 0)
		rc = iw_reg_mr(d->pd, &d->fence_byte, 1,
			       IW_ACCESS_LOCAL_READ | IW_ACCESS_REMOTE_READ, &d->fence_stag);
	if (rc != 0) {
		SCTP_WARN(FI_LOG_DOMAIN, "no RMA: iWARP layer: %s\n", iw_last_error());
		sctp_rma_fini(d);
		return -sctp_errno(rc);
	}
	return 0;
}

static void op_free(struct sctp_rma_op *op)
{
	free(op->copy);
	free(op);
}

void sctp_rma_fini(struct sctp_domain *d)
{
	for (int i = 0; i < d->nrqps; i++) {
		struct sctp_rqp *r = d->rqps[i];
		struct sctp_rma_op *op;
		while ((op = TAILQ_FIRST(&r->pending))) {
			TAILQ_REMOVE(&r->pending, op, link);
			op_free(op);
		}
		free(r);
	}
	free(d->rqps);
	d->rqps = NULL;
	d->nrqps = d->cap_rqps = 0;
	if (d->rnic)
		iw_close(d->rnic); /* destroys QPs, regions, CQ and PD */
	d->rnic = NULL;
	d->pd = NULL;
	d->iwcq = NULL;
}

static struct sctp_rqp *rqp_find(struct sctp_domain *d, uint64_t nonce)
{
	for (int i = 0; i < d->nrqps; i++)
		if (d->rqps[i]->nonce == nonce)
			return d->rqps[i];
	return NULL;
}

static struct sctp_rqp *rqp_get(struct sctp_domain *d, uint64_t nonce, sctpt_peer_t peer)
{
	struct sctp_rqp *r = rqp_find(d, nonce);

	if (r)
		return r;
	if (d->nrqps == d->cap_rqps) {
		int cap = d->cap_rqps ? d->cap_rqps * 2 : 16;
		struct sctp_rqp **n = realloc(d->rqps, (size_t)cap * sizeof(*n));
		if (!n)
			return NULL;
		d->rqps = n;
		d->cap_rqps = cap;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->nonce = nonce;
	r->peer = peer;
	TAILQ_INIT(&r->pending);
	d->rqps[d->nrqps++] = r;
	return r;
}

/* A new QP of ours, announced (lock held). */
static int rqp_start(struct sctp_domain *d, struct sctp_rqp *r)
{
	struct iw_qp_attr qa = {.send_cq = d->iwcq, .recv_cq = d->iwcq, .max_send_wr = 1024,
				.max_recv_wr = 1};
	struct sctp_hdr h;
	uint8_t *buf;
	struct iovec iov;
	int rc;

	if (r->qp)
		iw_qp_destroy(r->qp);
	r->qp = NULL;
	r->connected = r->ready = 0;
	rc = iw_qp_create(d->pd, &qa, &r->qp);
	if (rc != 0) {
		SCTP_WARN(FI_LOG_EP_DATA, "no RDMA queue pair: %s\n", iw_last_error());
		return -sctp_errno(rc);
	}
	h = (struct sctp_hdr){.op = SCTP_OP_QP_HELLO, .src_dom = d->self.nonce,
			      .data = iw_qp_num(r->qp), .tag = d->fence_stag,
			      .ack_id = (uint64_t)(uintptr_t)&d->fence_byte};
	buf = malloc(SCTP_HDR_LEN);
	if (!buf)
		return -FI_ENOMEM;
	sctp_hdr_encode(&h, buf);
	iov = (struct iovec){buf, SCTP_HDR_LEN};
	rc = sctpt_send(d->core, r->peer, SCTP_CTX_CTRL, SCTP_OP_QP_HELLO, 0, &iov, 1,
			(void *)((uintptr_t)buf | 1));
	if (rc != 0)
		free(buf);
	return rc < 0 ? -sctp_errno(rc) : 0;
}

static void op_done(struct sctp_rma_op *op)
{
	struct sctp_ep *ep = op->ep;
	uint64_t kind = op->flags & (FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE);
	struct sctp_cntr *cntr = (op->flags & FI_READ) ? ep->read_cntr : ep->write_cntr;

	if (op->err) {
		if (ep->tx_cq)
			sctp_cq_write_err(ep->tx_cq, op->context, kind, 0, NULL, 0, 0, 0, op->err,
					  -op->err);
		sctp_cntr_inc_err(cntr);
	} else {
		if (ep->tx_cq && !(op->flags & SCTP_TXF_NOCOMP) &&
		    (!ep->tx_selective || (op->flags & FI_COMPLETION)))
			sctp_cq_write(ep->tx_cq, op->context, kind, 0, NULL, 0, 0, FI_ADDR_NOTAVAIL);
		sctp_cntr_inc(cntr);
	}
	ep->inflight--;
	if (ep->closed && ep->inflight == 0)
		free(ep);
	op_free(op);
}

/* Posts op's work requests on its QP (lock held); -FI_EAGAIN: the send queue is full. */
static int op_post(struct sctp_domain *d, struct sctp_rma_op *op)
{
	struct sctp_rqp *r = op->rqp;
	struct iw_sge sge[SCTP_IOV_LIMIT], sink = {&op->scratch, 8, d->local_stag};
	struct iw_send_wr wr[SCTP_IOV_LIMIT + 1];
	int n = 0, ns = 0, rc = 0;
	uint64_t cmp, swp;

	for (size_t i = 0; i < op->count; i++)
		if (op->iov[i].iov_len)
			sge[ns++] = (struct iw_sge){op->iov[i].iov_base, (uint32_t)op->iov[i].iov_len,
						    d->local_stag};
	switch (op->kind) {
	case SCTP_RMA_WRITE:
		if (ns)
			wr[n++] = (struct iw_send_wr){.opcode = IW_WR_WRITE, .sg_list = sge,
						      .num_sge = ns, .remote_stag = op->stag,
						      .remote_to = op->addr};
		if (op->fence || !ns) {
			sink.length = 1;
			wr[n++] = (struct iw_send_wr){.opcode = IW_WR_READ, .sg_list = &sink,
						      .num_sge = 1, .remote_stag = r->fence_stag,
						      .remote_to = r->fence_addr};
		}
		break;
	case SCTP_RMA_READ: {
		/* one Read per local buffer, from consecutive remote addresses */
		uint64_t at = op->addr;
		for (int i = 0; i < ns; i++) {
			wr[n++] = (struct iw_send_wr){.opcode = IW_WR_READ, .sg_list = &sge[i],
						      .num_sge = 1, .remote_stag = op->stag,
						      .remote_to = at};
			at += sge[i].length;
		}
		if (!ns) {
			sink.length = 1;
			wr[n++] = (struct iw_send_wr){.opcode = IW_WR_READ, .sg_list = &sink,
						      .num_sge = 1, .remote_stag = r->fence_stag,
						      .remote_to = r->fence_addr};
		}
		break;
	}
	case SCTP_RMA_FADD:
		wr[n++] = (struct iw_send_wr){.opcode = IW_WR_FETCH_ADD, .sg_list = &sink,
					      .num_sge = 1, .remote_stag = op->stag,
					      .remote_to = op->addr & ~7ULL, .compare_add = op->operand};
		break;
	case SCTP_RMA_CSWAP:
		wr[n++] = (struct iw_send_wr){.opcode = IW_WR_COMP_SWAP, .sg_list = &sink,
					      .num_sge = 1, .remote_stag = op->stag,
					      .remote_to = op->addr & ~7ULL, .compare_add = op->compare,
					      .swap = op->operand};
		break;
	case SCTP_RMA_LOOP:
		sctp_atomic_next(op, &cmp, &swp);
		wr[n++] = (struct iw_send_wr){.opcode = IW_WR_COMP_SWAP, .sg_list = &sink,
					      .num_sge = 1, .remote_stag = op->stag,
					      .remote_to = op->addr & ~7ULL, .compare_add = cmp,
					      .swap = swp};
		break;
	}
	for (int i = 0; i < n; i++) {
		wr[i].wr_id = (uint64_t)(uintptr_t)op;
		rc = iw_post_send(r->qp, &wr[i]);
		if (rc == -ENOSPC && i == 0)
			return -FI_EAGAIN;
		if (rc != 0) {
			/* what was posted completes on its own; the rest is an error now */
			if (!op->err)
				op->err = rc == -EPIPE ? FI_EIO : sctp_errno(rc);
			if (op->out == 0)
				op_done(op);
			return 0;
		}
		op->out++;
	}
	return 0;
}

/* Posts what waits on r, in order, while its QP takes it (lock held). */
static void rqp_drain(struct sctp_domain *d, struct sctp_rqp *r)
{
	struct sctp_rma_op *op;

	while (r->ready && (op = TAILQ_FIRST(&r->pending))) {
		if (op_post(d, op) == -FI_EAGAIN)
			return;
		TAILQ_REMOVE(&r->pending, op, link);
	}
}

/* Fails everything waiting on r (lock held). */
static void rqp_fail(struct sctp_rqp *r, int err)
{
	struct sctp_rma_op *op;

	while ((op = TAILQ_FIRST(&r->pending))) {
		TAILQ_REMOVE(&r->pending, op, link);
		op->err = err;
		op_done(op);
	}
}

int sctp_rma_submit(struct sctp_ep *ep, fi_addr_t dest, struct sctp_rma_op *op)
{
	struct sctp_domain *d = ep->dom;
	struct sctp_av_entry *e;
	struct sctp_rqp *r;
	int rc = 0;

	SCTP_LOCK(d);
	if (!ep->enabled || !d->rnic) {
		rc = ep->enabled ? -FI_EOPNOTSUPP : -FI_EOPBADSTATE;
		goto fail;
	}
	e = sctp_av_get(ep->av, dest);
	if (!e) {
		rc = -FI_EINVAL;
		goto fail;
	}
	r = e->rqp ? e->rqp : (e->rqp = rqp_get(d, e->addr.nonce, e->peer));
	if (!r) {
		rc = -FI_EAGAIN;
		goto fail;
	}
	/* a QP an error ended starts over; a new one is announced */
	if (r->qp && iw_qp_state(r->qp, NULL, NULL) == IW_QPS_ERROR && TAILQ_EMPTY(&r->pending))
		rc = rqp_start(d, r);
	else if (!r->qp)
		rc = rqp_start(d, r);
	if (rc != 0)
		goto fail;
	op->ep = ep;
	op->rqp = r;
	ep->inflight++;
	TAILQ_INSERT_TAIL(&r->pending, op, link);
	rqp_drain(d, r);
	SCTP_UNLOCK(d);
	return 0;
fail:
	SCTP_UNLOCK(d);
	op_free(op);
	return rc;
}

void sctp_rma_ctrl(struct sctp_domain *d, const struct sctpt_cqe *c, const struct sctp_hdr *h)
{
	struct sctp_rqp *r;

	if (!d->rnic)
		return;
	if (h->op == SCTP_OP_QP_HELLO) {
		if (h->data == 0 || h->data > IW_QPN_MAX || h->tag > UINT32_MAX)
			return;
		r = rqp_get(d, h->src_dom, c->peer);
		if (!r)
			return;
		/* the other side started over (or we never started): a fresh QP of ours */
		if (!r->qp || (r->connected && r->rqpn != h->data))
			if (rqp_start(d, r) != 0)
				return;
		if (!r->connected) {
			if (iw_qp_connect(r->qp, c->peer, (uint32_t)h->data) != 0) {
				SCTP_WARN(FI_LOG_EP_DATA, "RDMA queue pair: %s\n", iw_last_error());
				return;
			}
			r->connected = 1;
			r->rqpn = (uint32_t)h->data;
			r->fence_stag = (uint32_t)h->tag;
			r->fence_addr = h->ack_id;
			/* READY names the QP of theirs ours is now connected to */
			sctp_send_ctrl(d, c->peer, SCTP_OP_QP_READY, r->rqpn, 0);
		}
	} else if (h->op == SCTP_OP_QP_READY) {
		r = rqp_find(d, h->src_dom);
		/* READY for the QP we have now (not an older one), once ours is connected too */
		if (r && r->qp && h->data == iw_qp_num(r->qp) && r->connected) {
			r->ready = 1;
			rqp_drain(d, r);
		}
	}
}

int sctp_rma_progress(struct sctp_domain *d)
{
	struct iw_wc wc[32];
	int n, total = 0;

	iw_progress(d->rnic);
	while ((n = iw_poll_cq(d->iwcq, 32, wc)) > 0) {
		total += n;
		for (int i = 0; i < n; i++) {
			struct sctp_rma_op *op = (struct sctp_rma_op *)(uintptr_t)wc[i].wr_id;
			int err = wc_error(wc[i].status);
			if (!op)
				continue; /* a Terminate with nothing of ours outstanding */
			if (err && !op->err)
				op->err = err;
			if (--op->out > 0)
				continue;
			if (!op->err && op->kind == SCTP_RMA_LOOP && !sctp_atomic_seen(op, op->scratch)) {
				if (op_post(d, op) == -FI_EAGAIN)
					TAILQ_INSERT_HEAD(&op->rqp->pending, op, link);
				continue;
			}
			if (!op->err && (op->kind == SCTP_RMA_FADD || op->kind == SCTP_RMA_CSWAP))
				sctp_atomic_store(op, op->scratch);
			op_done(op);
		}
	}
	for (int i = 0; i < d->nrqps; i++) {
		struct sctp_rqp *r = d->rqps[i];
		if (TAILQ_EMPTY(&r->pending))
			continue;
		if (r->qp && iw_qp_state(r->qp, NULL, NULL) == IW_QPS_ERROR &&
		    sctpt_peer_state(d->core, r->peer) >= SCTPT_PEER_FAILED)
			rqp_fail(r, FI_EIO);
		else if (r->qp && iw_qp_state(r->qp, NULL, NULL) == IW_QPS_ERROR)
			rqp_start(d, r); /* the ops wait for the new QP */
		else
			rqp_drain(d, r);
	}
	return total;
}

/* ---- fi_ops_rma ---- */

static ssize_t rma_common(struct sctp_ep *ep, int kind, const struct iovec *iov, size_t count,
			  fi_addr_t dest, uint64_t addr, uint64_t key, uint64_t flags,
			  void *context)
{
	struct sctp_rma_op *op;
	size_t len = 0;

	if (count > SCTP_IOV_LIMIT || key > UINT32_MAX)
		return -FI_EINVAL;
	for (size_t i = 0; i < count; i++) {
		len += iov[i].iov_len;
		if (iov[i].iov_len > UINT32_MAX)
			return -FI_EMSGSIZE;
	}
	if (len > SCTP_MAX_MSG || ((flags & FI_INJECT) && len > sctp_params.inject_size))
		return -FI_EMSGSIZE;
	op = calloc(1, sizeof(*op));
	if (!op)
		return -FI_EAGAIN;
	op->kind = kind;
	op->context = context;
	op->flags = flags | FI_RMA | (kind == SCTP_RMA_READ ? FI_READ : FI_WRITE);
	op->fence = kind == SCTP_RMA_WRITE;
	op->addr = addr;
	op->stag = (uint32_t)key;
	if ((flags & FI_INJECT) && len) {
		char *p = op->copy = malloc(len);
		if (!p) {
			free(op);
			return -FI_EAGAIN;
		}
		for (size_t i = 0; i < count; p += iov[i].iov_len, i++)
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
		op->iov[0] = (struct iovec){op->copy, len};
		op->count = 1;
	} else {
		memcpy(op->iov, iov, count * sizeof(*iov));
		op->count = count;
	}
	return sctp_rma_submit(ep, dest, op);
}

#define RMA_FLAGS (FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
		   FI_DELIVERY_COMPLETE | FI_FENCE | FI_MORE | FI_RMA | FI_READ | FI_WRITE)

static ssize_t rma_read(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
			uint64_t addr, uint64_t key, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {buf, len};

	(void)desc;
	return rma_common(ep, SCTP_RMA_READ, &iov, 1, src, addr, key, ep->tx_op_flags, context);
}

static ssize_t rma_readv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)desc;
	return rma_common(ep, SCTP_RMA_READ, iov, count, src, addr, key, ep->tx_op_flags,
			  context);
}

static ssize_t rma_readmsg(struct fid_ep *fep, const struct fi_msg_rma *msg, uint64_t flags)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	if ((flags & ~RMA_FLAGS) || msg->rma_iov_count != 1)
		return -FI_EINVAL;
	return rma_common(ep, SCTP_RMA_READ, msg->msg_iov, msg->iov_count, msg->addr,
			  msg->rma_iov[0].addr, msg->rma_iov[0].key, flags, msg->context);
}

static ssize_t rma_write(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {(void *)buf, len};

	(void)desc;
	return rma_common(ep, SCTP_RMA_WRITE, &iov, 1, dest, addr, key, ep->tx_op_flags, context);
}

static ssize_t rma_writev(struct fid_ep *fep, const struct iovec *iov, void **desc,
			  size_t count, fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)desc;
	return rma_common(ep, SCTP_RMA_WRITE, iov, count, dest, addr, key, ep->tx_op_flags,
			  context);
}

static ssize_t rma_writemsg(struct fid_ep *fep, const struct fi_msg_rma *msg, uint64_t flags)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	if (flags & FI_REMOTE_CQ_DATA)
		return -FI_ENOSYS;
	if ((flags & ~RMA_FLAGS) || msg->rma_iov_count != 1)
		return -FI_EINVAL;
	return rma_common(ep, SCTP_RMA_WRITE, msg->msg_iov, msg->iov_count, msg->addr,
			  msg->rma_iov[0].addr, msg->rma_iov[0].key, flags, msg->context);
}

static ssize_t rma_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest,
			  uint64_t addr, uint64_t key)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {(void *)buf, len};

	return rma_common(ep, SCTP_RMA_WRITE, &iov, 1, dest, addr, key,
			  FI_INJECT | SCTP_TXF_NOCOMP, NULL);
}

/* Remote CQ data with RMA would need a completion at the target: not offered. */
static ssize_t no_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
			    void *context)
{
	(void)ep, (void)buf, (void)len, (void)desc, (void)data, (void)dest, (void)addr;
	(void)key, (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
			     fi_addr_t dest, uint64_t addr, uint64_t key)
{
	return no_writedata(ep, buf, len, NULL, data, dest, addr, key, NULL);
}

struct fi_ops_rma sctp_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = no_writedata,
	.injectdata = no_injectdata,
};
