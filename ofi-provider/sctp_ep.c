/*
 * Endpoints (fi_endpoint, FI_EP_RDM): bindings to an AV, CQs and counters, fi_enable,
 * fi_getname, options, fi_cancel, and the completion of sends. An endpoint is an index into
 * its domain's table; messages for it arrive on core context SCTP_CTX_EP + index.
 */
#include "sctp_prov.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SCTP_MIN_MULTI_RECV 16384

void sctp_tx_done(struct sctp_tx *tx)
{
	struct sctp_ep *ep = tx->ep;
	struct sctp_domain *d = ep->dom;
	uint64_t kind = tx->flags & (FI_SEND | FI_MSG | FI_TAGGED);

	if (!ep->closed) {
		if (tx->err) {
			if (ep->tx_cq)
				sctp_cq_write_err(ep->tx_cq, tx->context, kind, 0, NULL, 0, 0, 0,
						  tx->err, -tx->err);
			sctp_cntr_inc_err(ep->send_cntr);
		} else {
			if (ep->tx_cq && !(tx->flags & SCTP_TXF_NOCOMP) &&
			    (!ep->tx_selective || (tx->flags & FI_COMPLETION)))
				sctp_cq_write(ep->tx_cq, tx->context, kind, 0, NULL, 0, 0,
					      FI_ADDR_NOTAVAIL);
			sctp_cntr_inc(ep->send_cntr);
		}
	}
	ep->inflight--;
	if (ep->closed && ep->inflight == 0)
		free(ep); /* the last send of an endpoint closed while they flew */
	free(tx->copy);
	sctp_pool_put(&d->txs, tx);
}

/* ---- bindings ---- */

static int hold(atomic_int *refs, void *old, void *new)
{
	if (old)
		return -FI_EINVAL; /* one of each kind per endpoint */
	if (new)
		atomic_fetch_add(refs, 1);
	return 0;
}

static int bind_cntr(struct sctp_ep *ep, struct sctp_cntr *c, uint64_t flags)
{
	struct {
		uint64_t flag;
		struct sctp_cntr **slot;
	} map[] = {
		{FI_SEND, &ep->send_cntr}, {FI_RECV, &ep->recv_cntr},
		{FI_READ, &ep->read_cntr}, {FI_WRITE, &ep->write_cntr},
		{FI_REMOTE_READ, &ep->rem_read_cntr}, {FI_REMOTE_WRITE, &ep->rem_write_cntr},
	};

	if (!flags || (flags & ~(FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
				 FI_REMOTE_WRITE)))
		return -FI_EBADFLAGS;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if ((flags & map[i].flag) && *map[i].slot)
			return -FI_EINVAL;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (flags & map[i].flag) {
			*map[i].slot = c;
			atomic_fetch_add(&c->refs, 1);
		}
	}
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct sctp_ep *ep = container_of(fid, struct sctp_ep, ep.fid);
	int rc = 0;

	if (ep->enabled)
		return -FI_EOPBADSTATE;
	switch (bfid->fclass) {
	case FI_CLASS_AV: {
		struct sctp_av *av = container_of(bfid, struct sctp_av, av.fid);
		if (av->dom != ep->dom)
			return -FI_EINVAL;
		rc = hold(&av->refs, ep->av, av);
		if (!rc)
			ep->av = av;
		return rc;
	}
	case FI_CLASS_CQ: {
		struct sctp_cq *cq = container_of(bfid, struct sctp_cq, cq.fid);
		if (cq->dom != ep->dom)
			return -FI_EINVAL;
		if (!(flags & (FI_TRANSMIT | FI_RECV)) ||
		    (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)))
			return -FI_EBADFLAGS;
		if (((flags & FI_TRANSMIT) && ep->tx_cq) || ((flags & FI_RECV) && ep->rx_cq))
			return -FI_EINVAL;
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_selective = (flags & FI_SELECTIVE_COMPLETION) != 0;
			atomic_fetch_add(&cq->refs, 1);
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			ep->rx_selective = (flags & FI_SELECTIVE_COMPLETION) != 0;
			atomic_fetch_add(&cq->refs, 1);
		}
		return 0;
	}
	case FI_CLASS_CNTR: {
		struct sctp_cntr *c = container_of(bfid, struct sctp_cntr, cntr.fid);
		if (c->dom != ep->dom)
			return -FI_EINVAL;
		return bind_cntr(ep, c, flags);
	}
	case FI_CLASS_EQ:
		if (ep->eq)
			return -FI_EINVAL;
		ep->eq = container_of(bfid, struct fid_eq, fid);
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct sctp_ep *ep = container_of(fid, struct sctp_ep, ep.fid);
	uint64_t *flags = arg;

	switch (command) {
	case FI_ENABLE:
		if (!ep->av)
			return -FI_ENOAV;
		SCTP_LOCK(ep->dom);
		ep->enabled = 1;
		SCTP_UNLOCK(ep->dom);
		return 0;
	case FI_GETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & FI_TRANSMIT) && (*flags & FI_RECV))
			return -FI_EINVAL;
		*flags = (*flags & FI_TRANSMIT) ? ep->tx_op_flags : ep->rx_op_flags;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if (*flags & FI_TRANSMIT)
			ep->tx_op_flags = *flags & ~FI_TRANSMIT;
		else if (*flags & FI_RECV)
			ep->rx_op_flags = *flags & ~FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* ---- cancel, options ---- */

static int cancel_in(struct sctp_ep *ep, struct sctp_rx_q *q, void *context)
{
	struct sctp_rx *rx;

	TAILQ_FOREACH(rx, q, link) {
		if (rx->context != context)
			continue;
		TAILQ_REMOVE(q, rx, link);
		if (ep->rx_cq)
			sctp_cq_write_err(ep->rx_cq, context,
					  (rx->flags & (FI_MSG | FI_TAGGED | FI_MULTI_RECV)) | FI_RECV,
					  0, NULL, 0, rx->tag, 0, FI_ECANCELED, -FI_ECANCELED);
		sctp_cntr_inc_err(ep->recv_cntr);
		sctp_rx_free(ep->dom, rx);
		return 1;
	}
	return 0;
}

static ssize_t ep_cancel(fid_t fid, void *context)
{
	struct sctp_ep *ep = container_of(fid, struct sctp_ep, ep.fid);
	int found;

	SCTP_LOCK(ep->dom);
	found = cancel_in(ep, &ep->rx_tag, context) || cancel_in(ep, &ep->rx_msg, context);
	SCTP_UNLOCK(ep->dom);
	return found ? 0 : -FI_ENOENT; /* sends are in the core's hands: not cancellable */
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	struct sctp_ep *ep = container_of(fid, struct sctp_ep, ep.fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		if (*optlen < sizeof(size_t))
			return -FI_ETOOSMALL;
		*(size_t *)optval = ep->min_multi_recv;
		*optlen = sizeof(size_t);
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	struct sctp_ep *ep = container_of(fid, struct sctp_ep, ep.fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		if (optlen != sizeof(size_t))
			return -FI_EINVAL;
		ep->min_multi_recv = *(const size_t *)optval;
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

static int no_ctx(struct fid_ep *sep, int index, void *attr, struct fid_ep **out, void *context)
{
	(void)sep, (void)index, (void)attr, (void)out, (void)context;
	return -FI_ENOSYS;
}

static int no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **tx_ep, void *context)
{
	return no_ctx(sep, index, attr, tx_ep, context);
}

static int no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		     struct fid_ep **rx_ep, void *context)
{
	return no_ctx(sep, index, attr, rx_ep, context);
}

static ssize_t ep_size_left(struct fid_ep *ep)
{
	(void)ep;
	return SCTP_QUEUE_SIZE;
}

/* ---- names ---- */

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct sctp_ep *ep = container_of(fid, struct sctp_ep, ep.fid);
	struct sctp_addr a = ep->dom->self;
	uint8_t buf[SCTP_ADDR_LEN];
	size_t room = *addrlen;

	a.ep = (uint16_t)ep->idx;
	sctp_addr_encode(&a, buf);
	*addrlen = SCTP_ADDR_LEN;
	if (room < SCTP_ADDR_LEN)
		return -FI_ETOOSMALL;
	memcpy(addr, buf, SCTP_ADDR_LEN);
	return 0;
}

static int no_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid, (void)addr, (void)addrlen;
	return -FI_ENOSYS; /* the name is the domain's SCTP endpoint's */
}

static int no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

static int no_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	(void)ep, (void)addr, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

static int no_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

static int no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

static int no_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
	(void)pep, (void)handle, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

static int no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep, (void)flags;
	return -FI_ENOSYS;
}

static int no_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
		   void *context)
{
	(void)ep, (void)addr, (void)flags, (void)mc, (void)context;
	return -FI_ENOSYS;
}

/* ---- close ---- */

static void drop_in_q(struct sctp_domain *d, struct sctp_in_q *q)
{
	struct sctp_in *in;

	while ((in = TAILQ_FIRST(q))) {
		TAILQ_REMOVE(q, in, link);
		sctp_in_free(d, in);
	}
}

static void drop_rx_q(struct sctp_domain *d, struct sctp_rx_q *q)
{
	struct sctp_rx *rx;

	while ((rx = TAILQ_FIRST(q))) {
		TAILQ_REMOVE(q, rx, link);
		sctp_rx_free(d, rx);
	}
}

static void unref(atomic_int *refs, void *obj)
{
	if (obj)
		atomic_fetch_sub(refs, 1);
}

static int ep_close(struct fid *fid)
{
	struct sctp_ep *ep = container_of(fid, struct sctp_ep, ep.fid);
	struct sctp_domain *d = ep->dom;
	struct timespec t0, t;

	/* sends in flight complete first (bounded: a dead peer fails them in the core) */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	SCTP_LOCK(d);
	while (ep->inflight) {
		sctp_progress(d);
		SCTP_UNLOCK(d);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 5) {
			SCTP_LOCK(d);
			break;
		}
		sctp_sleep(d, 1);
		SCTP_LOCK(d);
	}
	d->eps[ep->idx] = NULL;
	drop_in_q(d, &ep->un_msg);
	drop_in_q(d, &ep->un_tag);
	drop_in_q(d, &ep->claimed);
	drop_rx_q(d, &ep->rx_msg);
	drop_rx_q(d, &ep->rx_tag);
	if (ep->av)
		unref(&ep->av->refs, ep->av);
	if (ep->tx_cq)
		unref(&ep->tx_cq->refs, ep->tx_cq);
	if (ep->rx_cq)
		unref(&ep->rx_cq->refs, ep->rx_cq);
	struct sctp_cntr *cs[] = {ep->send_cntr, ep->recv_cntr, ep->read_cntr, ep->write_cntr,
				  ep->rem_read_cntr, ep->rem_write_cntr};
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		if (cs[i])
			unref(&cs[i]->refs, cs[i]);
	atomic_fetch_sub(&d->refs, 1);
	ep->closed = 1;
	if (ep->inflight == 0)
		free(ep);
	SCTP_UNLOCK(d);
	return 0;
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = sctp_no_ops_open,
	.tostr = sctp_no_tostr,
	.ops_set = sctp_no_ops_set,
};

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = no_tx_ctx,
	.rx_ctx = no_rx_ctx,
	.rx_size_left = ep_size_left,
	.tx_size_left = ep_size_left,
};

static struct fi_ops_cm ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = no_setname,
	.getname = ep_getname,
	.getpeer = no_getpeer,
	.connect = no_connect,
	.listen = no_listen,
	.accept = no_accept,
	.reject = no_reject,
	.shutdown = no_shutdown,
	.join = no_join,
};

int sctp_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **fep,
		 void *context)
{
	struct sctp_domain *d = container_of(domain, struct sctp_domain, dom);
	struct sctp_ep *ep;
	uint32_t idx;

	if (!info || !info->ep_attr || info->ep_attr->type != FI_EP_RDM ||
	    (info->caps & ~SCTP_CAPS))
		return -FI_EINVAL;
	if ((info->caps & SCTP_RMA_CAPS) && !(d->caps & SCTP_RMA_CAPS))
		return -FI_EINVAL; /* RMA needs a domain opened for it */
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	SCTP_LOCK(d);
	for (idx = 0; idx < SCTP_MAX_EPS && d->eps[idx]; idx++)
		;
	if (idx == SCTP_MAX_EPS) {
		SCTP_UNLOCK(d);
		free(ep);
		return -FI_ENOSPC;
	}
	ep->dom = d;
	ep->idx = idx;
	ep->caps = info->caps ? info->caps : d->caps;
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->min_multi_recv = SCTP_MIN_MULTI_RECV;
	TAILQ_INIT(&ep->rx_msg);
	TAILQ_INIT(&ep->rx_tag);
	TAILQ_INIT(&ep->un_msg);
	TAILQ_INIT(&ep->un_tag);
	TAILQ_INIT(&ep->claimed);
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &ep_cm_ops;
	ep->ep.msg = &sctp_msg_ops;
	ep->ep.tagged = &sctp_tagged_ops;
	ep->ep.rma = &sctp_rma_ops;
	ep->ep.atomic = &sctp_atomic_ops;
	d->eps[idx] = ep;
	atomic_fetch_add(&d->refs, 1);
	SCTP_UNLOCK(d);
	*fep = &ep->ep;
	return 0;
}
