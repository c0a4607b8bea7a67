/*
 * Tagged messages (fi_tsend/fi_trecv and friends) on the engine of sctp_msg.c, plus what only
 * the tagged interface has: FI_PEEK (is a matching message there? its length, tag, data and
 * source), FI_PEEK | FI_CLAIM (... and keep it for this context alone: MPI_Mprobe),
 * FI_CLAIM (receive the claimed message), FI_DISCARD (drop it).
 */
#include "sctp_prov.h"

#include <stdlib.h>
#include <string.h>

static void peek_done(struct sctp_ep *ep, struct sctp_in *in, void *context)
{
	uint64_t flags = FI_RECV | FI_TAGGED;
	uint64_t data = 0;

	if (in->hdr.flags & SCTP_HF_CQ_DATA) {
		flags |= FI_REMOTE_CQ_DATA;
		data = in->hdr.data;
	}
	if (ep->rx_cq)
		sctp_cq_write(ep->rx_cq, context, flags, in->len, NULL, data, in->hdr.tag, in->src);
}

/* FI_PEEK [| FI_CLAIM | FI_DISCARD]: a completion either way, FI_ENOMSG if nothing matches. */
static ssize_t peek(struct sctp_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct sctp_rx probe = {.src = (ep->caps & FI_DIRECTED_RECV) ? msg->addr : FI_ADDR_UNSPEC,
				.tag = msg->tag, .ignore = msg->ignore};
	struct sctp_in *in;

	SCTP_LOCK(ep->dom);
	sctp_progress(ep->dom);
	TAILQ_FOREACH(in, &ep->un_tag, link)
		if (sctp_rx_match(&probe, in))
			break;
	if (!in) {
		if (ep->rx_cq)
			sctp_cq_write_err(ep->rx_cq, msg->context, FI_RECV | FI_TAGGED, 0, NULL, 0,
					  msg->tag, 0, FI_ENOMSG, -FI_ENOMSG);
		SCTP_UNLOCK(ep->dom);
		return 0;
	}
	peek_done(ep, in, msg->context);
	if (flags & (FI_CLAIM | FI_DISCARD))
		TAILQ_REMOVE(&ep->un_tag, in, link);
	if (flags & FI_DISCARD) {
		sctp_in_free(ep->dom, in);
	} else if (flags & FI_CLAIM) {
		((struct fi_context *)msg->context)->internal[0] = in;
		TAILQ_INSERT_TAIL(&ep->claimed, in, link);
	}
	SCTP_UNLOCK(ep->dom);
	return 0;
}

/* FI_CLAIM [| FI_DISCARD]: the message an earlier FI_PEEK | FI_CLAIM set aside. */
static ssize_t claim(struct sctp_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct sctp_in *in = msg->context ? ((struct fi_context *)msg->context)->internal[0] : NULL;
	struct sctp_in *it;
	struct sctp_rx *rx;

	SCTP_LOCK(ep->dom);
	TAILQ_FOREACH(it, &ep->claimed, link)
		if (it == in)
			break;
	if (!it) {
		SCTP_UNLOCK(ep->dom);
		return -FI_EINVAL; /* not a context FI_PEEK | FI_CLAIM completed */
	}
	TAILQ_REMOVE(&ep->claimed, in, link);
	if (flags & FI_DISCARD) {
		if (ep->rx_cq)
			sctp_cq_write(ep->rx_cq, msg->context, FI_RECV | FI_TAGGED, 0, NULL, 0,
				      in->hdr.tag, in->src);
		sctp_cntr_inc(ep->recv_cntr);
		sctp_in_free(ep->dom, in);
		SCTP_UNLOCK(ep->dom);
		return 0;
	}
	rx = msg->iov_count > SCTP_IOV_LIMIT ? NULL :
		sctp_rx_new(ep->dom, msg->msg_iov, msg->iov_count, FI_ADDR_UNSPEC, msg->tag,
			    msg->ignore, FI_TAGGED | FI_COMPLETION, msg->context);
	if (!rx) {
		TAILQ_INSERT_HEAD(&ep->claimed, in, link);
		SCTP_UNLOCK(ep->dom);
		return msg->iov_count > SCTP_IOV_LIMIT ? -FI_EINVAL : -FI_EAGAIN;
	}
	sctp_msg_deliver(ep, rx, in);
	SCTP_UNLOCK(ep->dom);
	return 0;
}

static ssize_t tag_recvmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	if (flags & ~(FI_COMPLETION | FI_PEEK | FI_CLAIM | FI_DISCARD | FI_REMOTE_CQ_DATA |
		      FI_TAGGED | FI_RECV))
		return -FI_EBADFLAGS;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (flags & FI_PEEK)
		return peek(ep, msg, flags);
	if (flags & FI_CLAIM)
		return claim(ep, msg, flags);
	if (flags & FI_DISCARD)
		return -FI_EINVAL;
	return sctp_recv_common(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->tag,
				msg->ignore, (flags & ~FI_MSG) | FI_TAGGED, msg->context);
}

static ssize_t tag_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
			uint64_t tag, uint64_t ignore, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {buf, len};

	(void)desc;
	return sctp_recv_common(ep, &iov, 1, src, tag, ignore,
				(ep->rx_op_flags & ~FI_MULTI_RECV) | FI_TAGGED, context);
}

static ssize_t tag_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)desc;
	return sctp_recv_common(ep, iov, count, src, tag, ignore,
				(ep->rx_op_flags & ~FI_MULTI_RECV) | FI_TAGGED, context);
}

static ssize_t tag_send(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			fi_addr_t dest, uint64_t tag, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {(void *)buf, len};

	(void)desc;
	return sctp_send_common(ep, SCTP_OP_TAGGED, &iov, 1, dest, tag, 0, ep->tx_op_flags,
				context);
}

static ssize_t tag_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t dest, uint64_t tag, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)desc;
	return sctp_send_common(ep, SCTP_OP_TAGGED, iov, count, dest, tag, 0, ep->tx_op_flags,
				context);
}

static ssize_t tag_sendmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	if (flags & ~(FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_INJECT_COMPLETE |
		      FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE |
		      FI_TAGGED | FI_SEND | FI_FENCE | FI_MORE))
		return -FI_EBADFLAGS;
	if (flags & FI_MATCH_COMPLETE)
		flags |= FI_DELIVERY_COMPLETE;
	return sctp_send_common(ep, SCTP_OP_TAGGED, msg->msg_iov, msg->iov_count, msg->addr,
				msg->tag, msg->data, flags, msg->context);
}

static ssize_t tag_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest,
			  uint64_t tag)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {(void *)buf, len};

	return sctp_send_common(ep, SCTP_OP_TAGGED, &iov, 1, dest, tag, 0,
				FI_INJECT | SCTP_TXF_NOCOMP, NULL);
}

static ssize_t tag_senddata(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest, uint64_t tag, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {(void *)buf, len};

	(void)desc;
	return sctp_send_common(ep, SCTP_OP_TAGGED, &iov, 1, dest, tag, data,
				ep->tx_op_flags | FI_REMOTE_CQ_DATA, context);
}

static ssize_t tag_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest, uint64_t tag)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct iovec iov = {(void *)buf, len};

	return sctp_send_common(ep, SCTP_OP_TAGGED, &iov, 1, dest, tag, data,
				FI_INJECT | FI_REMOTE_CQ_DATA | SCTP_TXF_NOCOMP, NULL);
}

struct fi_ops_tagged sctp_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = tag_recv,
	.recvv = tag_recvv,
	.recvmsg = tag_recvmsg,
	.send = tag_send,
	.sendv = tag_sendv,
	.sendmsg = tag_sendmsg,
	.inject = tag_inject,
	.senddata = tag_senddata,
	.injectdata = tag_injectdata,
};
