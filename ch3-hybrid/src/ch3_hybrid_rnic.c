/*
 * ch3:hybrid -- the iWARP side: one software RNIC on the core's endpoint (opened with the
 * first window or MPI_Alloc_mem), one protection domain, one completion queue, and one queue
 * pair per peer numbered after the peer's process-group rank (rank + 1 on both sides, so no
 * numbers travel; the QP is made when a window first includes the peer). Work requests go to
 * a peer's send queue in the order they were issued (what the queue cannot take yet waits in
 * the peer's backlog); completions are read in the progress engine's poll, where packets held
 * behind RDMA go out once the work issued before them is done.
 */
#include "ch3_hybrid.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sctph sctph;

#define SQ_DEPTH 512		/* work requests posted per peer before the backlog takes them */
#define CQ_DEPTH 4096

/*
 * The job ends: a protection error or a failed queue pair would otherwise leave a wrong
 * result or a hang. Printed first and given a moment to reach mpiexec (Hydra drops what its
 * proxies still hold once it aborts), as ch3:sctp does for a lost peer.
 */
void sctph_fatal(const char *fmt, ...)
{
	char msg[1024];
	int n = snprintf(msg, sizeof(msg), "ch3:hybrid: rank %d: ", sctpc.rank);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t) n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", msg);
	fflush(stderr);
	usleep(200 * 1000);
	MPIR_pmi_abort(1, msg);
	_exit(1);
}

static int env_int(const char *name, int def, int lo, int hi)
{
	const char *v = getenv(name);
	char *end;
	long x;
	if (!v || !*v)
		return def;
	errno = 0;
	x = strtol(v, &end, 0);
	if (errno || *end || x < lo || x > hi)
		sctph_fatal("%s=%s: expected an integer in [%d, %d]", name, v, lo, hi);
	return (int) x;
}

static void config(void)
{
	sctph.env.rdma = env_int("MPICH_HYBRID_RDMA", 1, 0, 1);
	sctph.env.atomics = env_int("MPICH_HYBRID_ATOMICS", 1, 0, 1);
	sctph.env.max_wrs = env_int("MPICH_HYBRID_MAX_PIECES", 256, 1, 1 << 20);
	sctph.env.stats = env_int("MPICH_HYBRID_STATS", 0, 0, 1);
	sctph.env.sends = env_int("MPICH_HYBRID_SENDS", 1, 0, 1);
	sctph.env.lone_max = env_int("MPICH_HYBRID_LONE_MAX", 256 << 10, 0, 1 << 30);
	sctph.env.lone_wait_us = env_int("MPICH_HYBRID_LONE_WAIT_US", 50, 0, 1000000);
}

static void rnic_free(void)
{
	if (sctph.rnic)
		iw_close(sctph.rnic);	/* QPs, regions, CQ and PD with it */
	sctph.rnic = NULL;
	sctph.pd = NULL;
	sctph.cq = NULL;
	if (sctph.peer)
		for (int i = 0; i < sctpc.npeer_vc; i++)
			MPL_free(sctph.peer[i].rbuf);
	MPL_free(sctph.peer);
	sctph.peer = NULL;
	MPL_free(sctph.credits);
	sctph.credits = NULL;
}

/* 0: RDMA available; -1: not (disabled, or the layer would not open: packets carry all). */
int sctph_open(void)
{
	int rc;
	if (sctph.opened)
		return sctph.opened > 0 ? 0 : -1;
	config();
	sctph.opened = -1;
	if (!sctph.env.rdma || !sctpc.ep || sctpc.rank + 1 > (int) IW_QPN_MAX)
		return -1;
	sctph.peer = MPL_calloc((size_t) sctpc.npeer_vc + 1, sizeof(*sctph.peer), MPL_MEM_RMA);
	sctph.credits = MPL_calloc((size_t) sctpc.npeer_vc + 1, sizeof(*sctph.credits),
				   MPL_MEM_RMA);
	rc = sctph.peer && sctph.credits ? 0 : -ENOMEM;
	if (!rc) {
		struct iw_rnic_attr attr;

		/* work posted outside progress (an epoch's puts, the Send closing it) leaves at
		 * the next progress call, in as few core messages as it fits */
		iw_rnic_attr_init(&attr);
		attr.defer_tx = 1;
		rc = iw_open(sctpc.ep, &attr, &sctph.rnic);
	}
	if (!rc)
		rc = iw_pd_alloc(sctph.rnic, &sctph.pd);
	if (!rc)
		rc = iw_cq_create(sctph.rnic, CQ_DEPTH, &sctph.cq);
	/* local buffers need no registration: a local-only STag over the address space (it
	 * never leaves the process) */
	if (!rc)
		rc = iw_reg_mr(sctph.pd, (void *) (uintptr_t) 1, UINTPTR_MAX - 1,
			       IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE, &sctph.local_stag);
	/* the word peers' ordering Reads read */
	if (!rc)
		rc = iw_reg_mr(sctph.pd, &sctph.fence_word, sizeof(sctph.fence_word),
			       IW_ACCESS_LOCAL_READ | IW_ACCESS_REMOTE_READ, &sctph.fence_stag);
	/* where peers write how many of our Sends they took (one word per rank) */
	if (!rc)
		rc = iw_reg_mr(sctph.pd, sctph.credits,
			       ((size_t) sctpc.npeer_vc + 1) * sizeof(*sctph.credits),
			       IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE |
			       IW_ACCESS_REMOTE_WRITE, &sctph.credit_stag);
	if (rc) {
		fprintf(stderr, "ch3:hybrid: rank %d: no RDMA (iWARP layer: %s): one-sided "
			"operations go as CH3 packets\n", sctpc.rank,
			rc == -ENOMEM ? "out of memory" : iw_last_error());
		rnic_free();
		return -1;
	}
	sctph.opened = 1;
	sctph_rma_init();
	return 0;
}

static void post_recv(struct sctph_peer *p, int peer, int i)
{
	struct iw_sge sge = {.addr = &p->rbuf[i], .length = sizeof(p->rbuf[i]),
		.stag = sctph.local_stag };
	struct iw_recv_wr wr = {.wr_id = ((uint64_t) peer << 16) | (uint64_t) i, .sg_list = &sge,
		.num_sge = 1 };
	if (iw_post_recv(p->qp, &wr) != 0)
		sctph_fatal("posting a receive for rank %d's packets failed: %s",
			    sctpc.peer_vc[peer] ? sctpc.peer_vc[peer]->pg_rank : -1, iw_last_error());
}

/* The queue pair to vc's process (made once, connected at once, its receives posted: the
 * peer makes its own QP before the window exchange that lets us use it). 0, or -1: no RDMA
 * to it. */
int sctph_qp(MPIDI_VC_t * vc)
{
	struct sctph_peer *p;
	struct iw_qp_attr qa = {.send_cq = sctph.cq, .recv_cq = sctph.cq, .max_send_wr = SQ_DEPTH,
		.max_recv_wr = SCTPH_RECVS };
	int rc;

	if (sctph.opened <= 0 || vc->ch.peer < 0 || vc->ch.peer >= sctpc.npeer_vc ||
	    vc->pg_rank + 1 > (int) IW_QPN_MAX)
		return -1;
	p = &sctph.peer[vc->ch.peer];
	if (p->qp)
		return 0;
	qa.qpn = (uint32_t) vc->pg_rank + 1;
	p->rbuf = MPL_malloc(SCTPH_RECVS * sizeof(*p->rbuf), MPL_MEM_RMA);
	rc = p->rbuf ? iw_qp_create(sctph.pd, &qa, &p->qp) : -ENOMEM;
	if (!rc)
		rc = iw_qp_connect(p->qp, vc->ch.peer, (uint32_t) sctpc.rank + 1);
	for (int i = 0; !rc && i < SCTPH_RECVS; i++)
		post_recv(p, vc->ch.peer, i);
	if (rc) {
		fprintf(stderr, "ch3:hybrid: rank %d: no RDMA queue pair to rank %d: %s\n",
			sctpc.rank, vc->pg_rank, iw_last_error());
		if (p->qp)
			iw_qp_destroy(p->qp);
		p->qp = NULL;
		MPL_free(p->rbuf);
		p->rbuf = NULL;
		return -1;
	}
	return 0;
}

struct sctph_op *sctph_op_new(enum sctph_kind kind, int peer, int npieces)
{
	struct sctph_op *op = MPL_calloc(1, sizeof(*op) + (size_t) npieces * sizeof(op->pc[0]),
					 MPL_MEM_RMA);
	if (!op)
		sctph_fatal("out of memory for an RDMA operation of %d pieces", npieces);
	op->kind = kind;
	op->peer = peer;
	op->nwr = npieces;
	return op;
}

static const char *wc_status(enum iw_wc_status s);

static void mark_busy(struct sctph_peer *p)
{
	if (p->busy)
		return;
	p->busy = 1;
	p->next_busy = sctph.busy;
	sctph.busy = p;
}

static const char *kind_name(enum sctph_kind k)
{
	switch (k) {
	case SCTPH_PUT:
		return "Write (MPI_Put)";
	case SCTPH_GET:
		return "Read (MPI_Get)";
	case SCTPH_ATOMIC:
		return "atomic (MPI_Fetch_and_op / MPI_Get_accumulate / MPI_Compare_and_swap)";
	case SCTPH_ACC:
		return "Fetch-and-Add (MPI_Accumulate)";
	case SCTPH_SEND:
		return "Send (a CH3 packet)";
	case SCTPH_CREDIT:
		return "Write (receive credits)";
	default:
		return "ordering Read";
	}
}

static int peer_rank(int peer)
{
	MPIDI_VC_t *vc = peer < sctpc.npeer_vc ? sctpc.peer_vc[peer] : NULL;
	return vc ? vc->pg_rank : -1;
}

/* Posts what the peer's send queue takes, in issue order. */
static int post_backlog(struct sctph_peer *p)
{
	struct sctph_op *op;
	int n = 0;

	while ((op = p->backlog)) {
		while (op->posted < op->nwr) {
			const struct sctph_piece *pc = &op->pc[op->posted];
			struct iw_sge sge = {.addr = pc->local, .length = pc->len,
				.stag = sctph.local_stag };
			struct iw_send_wr wr = {.wr_id = (uint64_t) (uintptr_t) op,
				.opcode = op->opcode, .sg_list = &sge, .num_sge = 1,
				.remote_stag = op->stag, .remote_to = pc->remote,
				.compare_add = op->compare_add, .swap = op->swap };
			int rc = iw_post_send(p->qp, &wr);
			if (rc == -ENOSPC)
				return n;
			if (rc)
				sctph_fatal("posting an RDMA %s of %u bytes to rank %d failed: %s",
					    kind_name(op->kind), pc->len, peer_rank(op->peer),
					    iw_last_error());
			op->posted++;
			n++;
		}
		p->backlog = op->next;
		if (!p->backlog)
			p->backlog_tail = NULL;
	}
	return n;
}

void sctph_issue(struct sctph_peer *p, struct sctph_op *op)
{
	op->pending = op->nwr;
	/* credit Writes order nothing: packets never wait for them */
	if (op->kind != SCTPH_CREDIT)
		p->issued += (uint64_t) op->nwr;
	sctph.st.wrs += (uint64_t) op->nwr;
	op->next = NULL;
	if (p->backlog_tail)
		p->backlog_tail->next = op;
	else
		p->backlog = op;
	p->backlog_tail = op;
	post_backlog(p);
	if (p->backlog)
		mark_busy(p);
}

/* How many of our Sends the peer took: its credit Writes say, and so does CH3's
 * acknowledgement of a flush or unlock that went as a Send (sctph_sends_taken), which may
 * come before the credit Write. */
static uint64_t sends_taken(const struct sctph_peer *p, int r)
{
	return sctph.credits[r] > p->acked ? sctph.credits[r] : p->acked;
}

void sctph_sends_taken(struct sctph_peer *p, uint64_t n)
{
	if (n > p->acked)
		p->acked = n;
}

/* Our Writes to the peer are placed: none since the last ordering Read, and it took the
 * Sends that followed the ones before. */
static int placed(const struct sctph_peer *p)
{
	int r = peer_rank((int) (p - sctph.peer));
	return !p->dirty && (!p->placed_at || (r >= 0 && sends_taken(p, r) >= p->placed_at));
}

/* Nothing of ours to this peer is in flight: a packet may go at once. */
int sctph_peer_quiet(const struct sctph_peer *p)
{
	return !p->held && p->done == p->issued && placed(p);
}

/* Holds a packet behind the work issued so far; Writes not yet confirmed get a fence Read. */
int sctph_hold(struct sctph_peer *p, uint32_t context, int32_t tag, unsigned flags,
	       const struct iovec *iov, int iovcnt, void *cookie)
{
	struct sctph_held *h;

	if (!placed(p)) {
		struct sctph_op *op = sctph_op_new(SCTPH_FENCE, (int) (p - sctph.peer), 1);
		op->opcode = IW_WR_READ;
		op->stag = p->fence_stag;
		op->pc[0].local = &op->scratch;
		op->pc[0].remote = p->fence_to;
		op->pc[0].len = 1;
		p->dirty = 0;
		p->placed_at = 0;
		sctph.st.fences++;
		sctph_issue(p, op);
	}
	h = MPL_malloc(sizeof(*h) + (size_t) iovcnt * sizeof(h->iov[0]), MPL_MEM_RMA);
	if (!h)
		sctph_fatal("out of memory holding a packet");
	h->need = p->issued;
	h->context = context;
	h->tag = tag;
	h->flags = flags;
	h->cookie = cookie;
	h->iovcnt = iovcnt;
	h->next = NULL;
	memcpy(h->iov, iov, (size_t) iovcnt * sizeof(h->iov[0]));
	if (p->held_tail)
		p->held_tail->next = h;
	else
		p->held = h;
	p->held_tail = h;
	sctph.st.held++;
	mark_busy(p);
	return 0;		/* queued: its completion comes when it has gone */
}

/* A packet's send is done (status < 0: failed), as the core would report it. */
void sctph_send_done(void *cookie, int status)
{
	struct sctpt_cqe c = {.kind = SCTPT_CQE_SEND, .status = status, .cookie = cookie };
	if (sctpc_send_done(&c) != MPI_SUCCESS)
		sctph_fatal("a packet held behind RDMA could not be sent: %s", strerror(-status));
}

/* Sends the held packets whose work is done, in order. */
static int release(struct sctph_peer *p)
{
	struct sctph_held *h;
	int n = 0, peer = (int) (p - sctph.peer);

	while ((h = p->held) && p->done >= h->need) {
		int rc;
		void *cookie = h->cookie;
		p->held = h->next;
		if (!p->held)
			p->held_tail = NULL;
		rc = sctpt_send(sctpc.ep, peer, h->context, h->tag, h->flags, h->iov, h->iovcnt,
				cookie);
		MPL_free(h);
		n++;
		if (rc != 0)	/* 1: with SCTP already; < 0: failed, no completion to come */
			sctph_send_done(cookie, rc == 1 ? 0 : rc);
	}
	return n;
}

static void local_ack(const struct sctph_op *op)
{
	MPIR_Win *w;
	/* CH3 counted an acknowledgement for a read operation's flush or unlock: the data is
	 * here (the atomic's result: it was applied), so the target has served it; the unlock
	 * follows without asking for one */
	if (!(op->pkt_flags & (MPIDI_CH3_PKT_FLAG_RMA_FLUSH | MPIDI_CH3_PKT_FLAG_RMA_UNLOCK)))
		return;
	MPIR_Win_get_ptr(op->win, w);
	if (MPIDI_CH3I_RMA_Handle_ack(w, op->target_rank) != MPI_SUCCESS)
		sctph_fatal("no RMA target %d in window %#x for an acknowledgement",
			    op->target_rank, (unsigned) op->win);
	MPIDI_CH3_Progress_signal_completion();
}

static void op_done(struct sctph_op *op)
{
	switch (op->kind) {
	case SCTPH_PUT:
		sctph_send_done(op->cookie, 0);	/* the origin buffer is free again */
		break;
	case SCTPH_GET:
	case SCTPH_ATOMIC:
		local_ack(op);
		if (MPID_Request_complete(op->rreq) != MPI_SUCCESS)
			sctph_fatal("completing an RDMA %s failed", kind_name(op->kind));
		break;
	case SCTPH_ACC:
		local_ack(op);
		sctph_send_done(op->cookie, 0);
		break;
	case SCTPH_SEND:
		sctph_send_done(op->cookie, 0);
		break;
	case SCTPH_FENCE:
	case SCTPH_CREDIT:
		break;
	}
}

/*
 * A packet as an iWARP Send on the peer's QP, behind the work issued before it; 0 (its
 * completion comes when the Send has left), or -1 when the peer's receives may be used up
 * (it reports what it took with Writes into sctph.credits).
 */
int sctph_send_packet(struct sctph_peer *p, const MPIDI_CH3_Pkt_t * pkt, void *cookie)
{
	int peer = (int) (p - sctph.peer), r = peer_rank(peer);
	struct sctph_op *op;
	MPIDI_CH3_Pkt_t *copy;

	if (!sctph.env.sends || !p->qp || !p->credit_stag || r < 0 ||
	    p->sends - sends_taken(p, r) >= SCTPH_RECVS)
		return -1;
	op = MPL_realloc(sctph_op_new(SCTPH_SEND, peer, 1),
			 sizeof(*op) + sizeof(op->pc[0]) + sizeof(*copy), MPL_MEM_RMA);
	if (!op)
		sctph_fatal("out of memory for a packet");
	copy = (MPIDI_CH3_Pkt_t *) (void *) ((char *) op + sizeof(*op) + sizeof(op->pc[0]));
	memcpy(copy, pkt, sizeof(*copy));
	op->opcode = IW_WR_SEND;
	op->cookie = cookie;
	op->pc[0].local = copy;
	op->pc[0].len = sizeof(*copy);
	p->sends++;
	sctph.st.qp_sends++;
	/* when the peer reports this Send taken, the Writes before it are placed */
	if (p->dirty) {
		p->dirty = 0;
		p->placed_at = p->sends;
	}
	sctph_issue(p, op);
	return 0;
}

/* Tells the peer how many of its Sends we took: it regains credit, and learns that the
 * Writes it sent before them are placed. */
static void report_credit(struct sctph_peer *p, int peer)
{
	struct sctph_op *op;
	if (p->consumed == p->reported)
		return;
	op = sctph_op_new(SCTPH_CREDIT, peer, 1);
	op->opcode = IW_WR_WRITE;
	op->stag = p->credit_stag;
	p->consumed_word = p->consumed;
	op->pc[0].local = &p->consumed_word;
	op->pc[0].remote = p->credit_to + (uint64_t) sctpc.rank * sizeof(uint64_t);
	op->pc[0].len = sizeof(p->consumed_word);
	p->reported = p->consumed;
	sctph_issue(p, op);
}

/* CH3 handles a packet that came as an iWARP Send as ch3:sctp's progress engine would
 * (these packets have no data). */
static void handle_inbound(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt)
{
	MPIR_Request *rreq = NULL;
	intptr_t n = 0;

	if (vc->state == MPIDI_VC_STATE_INACTIVE)
		MPIDI_CHANGE_VC_STATE(vc, ACTIVE);
	if (sctpc.pkt[pkt->type] (vc, pkt, NULL, &n, &rreq) != MPI_SUCCESS || rreq || n)
		sctph_fatal("CH3 could not handle a packet (type %d) from rank %d", (int) pkt->type,
			    vc->pg_rank);
}

/* The peer's Sends that waited for its Reads to be answered, in order, once they are. */
static int deliver_inbound(struct sctph_peer *p)
{
	struct sctph_inbound *in;
	int n = 0;

	if (!p->inq || !iw_qp_reads_served(p->qp))
		return 0;
	while ((in = p->inq)) {
		p->inq = in->next;
		if (!p->inq)
			p->inq_tail = NULL;
		handle_inbound(sctpc.peer_vc[p - sctph.peer], &in->pkt);
		MPL_free(in);
		n++;
	}
	return n;
}

/* A packet that came as an iWARP Send: its receive is posted again, then CH3 handles it, or
 * it waits while the QP still answers a Read that came before it (the window must not change
 * under it: the packet may count the peer's operations done or release its lock). */
static void recv_done(const struct iw_wc *wc)
{
	int peer = (int) (wc->wr_id >> 16), i = (int) (wc->wr_id & 0xffff);
	struct sctph_peer *p;
	MPIDI_CH3_Pkt_t pkt;
	MPIDI_VC_t *vc;

	if (peer >= sctpc.npeer_vc || i >= SCTPH_RECVS || !(vc = sctpc.peer_vc[peer]))
		sctph_fatal("a receive completion for an unknown buffer (%#llx)",
			    (unsigned long long) wc->wr_id);
	/* the QP went to error: the peer closed its endpoint (MPI_Finalize) or was lost, which
	 * ch3:sctp reports, or a Terminate, which the send side reports */
	if (wc->status == IW_WC_WR_FLUSH_ERR)
		return;
	if (wc->status != IW_WC_SUCCESS)
		sctph_fatal("receiving a packet from rank %d as an iWARP Send failed: %s (iWARP "
			    "status %d)", vc->pg_rank, wc_status(wc->status), (int) wc->status);
	p = &sctph.peer[peer];
	memcpy(&pkt, &p->rbuf[i], sizeof(pkt));
	post_recv(p, peer, i);
	p->consumed++;
	sctph.st.qp_recvs++;
	/* in half-windows: a flush or unlock that came as a Send tells the peer through CH3's
	 * acknowledgement that we took it, so a credit Write for every Send would be a message
	 * per epoch for nothing */
	if (p->consumed - p->reported >= SCTPH_RECVS / 2)
		report_credit(p, peer);
	if (wc->byte_len != sizeof(pkt) || pkt.type < 0 || pkt.type >= MPIDI_CH3_PKT_END_CH3)
		sctph_fatal("a packet from rank %d as an iWARP Send is malformed (%u bytes, type %d)",
			    vc->pg_rank, wc->byte_len, (int) pkt.type);
	if (!p->inq && iw_qp_reads_served(p->qp)) {
		handle_inbound(vc, &pkt);
		return;
	}
	struct sctph_inbound *in = MPL_malloc(sizeof(*in), MPL_MEM_RMA);
	if (!in)
		sctph_fatal("out of memory for a packet from rank %d", vc->pg_rank);
	in->next = NULL;
	in->pkt = pkt;
	if (p->inq_tail)
		p->inq_tail->next = in;
	else
		p->inq = in;
	p->inq_tail = in;
	mark_busy(p);
}

/* What a Terminate's codes mean (RFC 5040 s7, RFC 5041 s7), for the common ones. */
static const char *term_text(const struct iw_term *t)
{
	if (t->layer == IW_LAYER_DDP && t->etype == 1) /* tagged buffer */
		switch (t->ecode) {
		case 0x00:
			return "invalid steering tag";
		case 0x01:
			return "base or bounds violation: the range is not inside the target's window";
		case 0x02:
			return "steering tag not associated with this stream";
		case 0x03:
			return "tagged offset wrap";
		}
	if (t->layer == IW_LAYER_RDMAP && t->etype == 1) /* remote protection */
		switch (t->ecode) {
		case 0x00:
			return "invalid steering tag";
		case 0x01:
			return "base or bounds violation: the range is not inside the target's window";
		case 0x02:
			return "access rights violation";
		case 0x03:
			return "steering tag not associated with this stream";
		case 0x04:
			return "tagged offset wrap";
		}
	return "protocol error";
}

static const char *wc_status(enum iw_wc_status s)
{
	switch (s) {
	case IW_WC_LOC_PROT_ERR:
		return "local protection error";
	case IW_WC_LOC_LEN_ERR:
		return "local length error";
	case IW_WC_REM_ACCESS_ERR:
		return "the target refused the access";
	case IW_WC_REM_INV_REQ_ERR:
		return "the target refused the request";
	case IW_WC_REM_OP_ERR:
		return "the target reported an error";
	case IW_WC_LOC_QP_OP_ERR:
		return "a protocol error was found here";
	case IW_WC_WR_FLUSH_ERR:
		return "flushed (the queue pair failed before)";
	case IW_WC_PEER_LOST:
		return "the peer was lost";
	default:
		return "error";
	}
}

static void wc_failed(const struct sctph_op *op, const struct iw_wc *wc)
{
	const struct sctph_piece *pc = &op->pc[op->nwr - op->pending];
	const struct sctph_peer *p = &sctph.peer[op->peer];
	int term = wc->status >= IW_WC_REM_ACCESS_ERR && wc->status <= IW_WC_LOC_QP_OP_ERR;

	/* A Write completes when it has left: what the target refused of it fails the next
	 * work request, the ordering Read behind it */
	if (op->kind == SCTPH_FENCE && term)
		sctph_fatal("RDMA Write (MPI_Put) to rank %d failed: %s: %s (iWARP status %d, "
			    "Terminate layer %u type %u code %#x; the last Write before it: target "
			    "address %#llx, %u bytes, STag %#x)", peer_rank(op->peer),
			    wc_status(wc->status), term_text(&wc->term), (int) wc->status,
			    wc->term.layer, wc->term.etype, wc->term.ecode,
			    (unsigned long long) p->last_to, p->last_len, p->last_stag);
	sctph_fatal("RDMA %s to rank %d failed: %s%s%s (iWARP status %d, Terminate layer %u type "
		    "%u code %#x; target address %#llx, %u bytes, STag %#x)", kind_name(op->kind),
		    peer_rank(op->peer), wc_status(wc->status), term ? ": " : "",
		    term ? term_text(&wc->term) : "", (int) wc->status, wc->term.layer,
		    wc->term.etype, wc->term.ecode, (unsigned long long) pc->remote, pc->len,
		    op->stag);
}

/* A Terminate came while nothing of ours was outstanding on the QP (numbered after the
 * peer's rank): a Write that had already left was refused. */
static void term_alone(const struct iw_wc *wc)
{
	int rank = (int) wc->qpn - 1;
	const struct sctph_peer *p = NULL;

	for (int i = 0; i < sctpc.npeer_vc && !p; i++)
		if (peer_rank(i) == rank)
			p = &sctph.peer[i];
	if (p && p->last_len)
		sctph_fatal("RDMA Write (MPI_Put) to rank %d failed: the target refused the access: "
			    "%s (Terminate layer %u type %u code %#x; the last Write to it: target "
			    "address %#llx, %u bytes, STag %#x)", rank, term_text(&wc->term),
			    wc->term.layer, wc->term.etype, wc->term.ecode,
			    (unsigned long long) p->last_to, p->last_len, p->last_stag);
	sctph_fatal("RDMA queue pair %u (rank %d) failed: the target sent a Terminate: %s (layer "
		    "%u type %u code %#x)", wc->qpn, rank, term_text(&wc->term), wc->term.layer,
		    wc->term.etype, wc->term.ecode);
}

static void wc_done(const struct iw_wc *wc)
{
	struct sctph_op *op = (struct sctph_op *) (uintptr_t) wc->wr_id;
	struct sctph_peer *p;

	if (!op)
		term_alone(wc);
	if (wc->status != IW_WC_SUCCESS)
		wc_failed(op, wc);
	p = &sctph.peer[op->peer];
	if (op->kind != SCTPH_CREDIT)
		p->done++;
	if (p->held)
		mark_busy(p);
	if (--op->pending)
		return;
	op_done(op);
	MPL_free(op);
}

static int poll_cq(void)
{
	struct iw_wc wc[32];
	int n, total = 0;
	while ((n = iw_poll_cq(sctph.cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (wc[i].opcode == IW_WC_RECV)
				recv_done(&wc[i]);
			else
				wc_done(&wc[i]);
		}
		total += n;
	}
	return total;
}

/* Backlogs, held packets and Sends waiting for Reads to be answered; completing requests may
 * make new work, on this list again. */
static int work_busy(void)
{
	struct sctph_peer *list = sctph.busy, *p;
	int n = 0;
	sctph.busy = NULL;
	while ((p = list)) {
		list = p->next_busy;
		n += post_backlog(p);
		n += release(p);
		n += deliver_inbound(p);
		if (p->backlog || p->held || p->inq) {
			p->next_busy = sctph.busy;
			sctph.busy = p;
		} else {
			p->busy = 0;
		}
	}
	return n;
}

/* The iWARP layer's side of a progress call: deferred work out, completions in. */
static int rdma_work(int n)
{
	if (sctph.opened <= 0)
		return n;
	n += iw_progress(sctph.rnic);
	int done = poll_cq();
	if (sctph.busy)
		done += work_busy();
	/* what completions and released packets posted leaves before progress returns */
	if (done)
		iw_progress(sctph.rnic);
	return n + done;
}

/* ch3:sctp's blocking wait, before it sleeps and after: a Put waiting for what follows goes */
int sctph_rdma_progress(void)
{
	return rdma_work(sctph_lone_release(1, 0));
}

int sctph_progress(struct sctpt_ep *ep)
{
	int n = sctpt_progress(ep);
	n += sctph_lone_release(0, n == 0);
	return rdma_work(n);
}

static void print_stats(void)
{
	struct iw_rnic_stats is;
	const struct sctph_stats *s = &sctph.st;
	memset(&is, 0, sizeof(is));
	if (sctph.rnic)
		iw_rnic_stats(sctph.rnic, &is);
	fprintf(stderr, "ch3:hybrid: rank %d RDMA: %llu puts (%llu bytes), %llu gets (%llu "
		"bytes), %llu atomics, %llu work requests, %llu ordering reads, %llu packets held "
		"behind RDMA, %llu packets as iWARP Sends (%llu received), %llu operations as CH3 "
		"packets, %llu Puts waited for their epoch's end (%llu of them went with it as "
		"packets); iWARP: %llu segments sent, %llu "
		"received (%llu read straight into their region), %llu bytes placed, %llu dropped, %llu "
		"Terminates sent, %llu received\n",
		sctpc.rank, (unsigned long long) s->puts, (unsigned long long) s->put_bytes,
		(unsigned long long) s->gets, (unsigned long long) s->get_bytes,
		(unsigned long long) s->atomics, (unsigned long long) s->wrs,
		(unsigned long long) s->fences, (unsigned long long) s->held,
		(unsigned long long) s->qp_sends, (unsigned long long) s->qp_recvs,
		(unsigned long long) s->fallback, (unsigned long long) s->lone_waits,
		(unsigned long long) s->lone_packets, (unsigned long long) is.segs_sent,
		(unsigned long long) is.segs_recv, (unsigned long long) is.segs_placed,
		(unsigned long long) is.bytes_placed,
		(unsigned long long) is.dropped, (unsigned long long) is.terms_sent,
		(unsigned long long) is.terms_recv);
}

/* MPI_Finalize: the iWARP layer goes before the endpoint it lives on. */
void sctph_close(struct sctpt_ep *ep)
{
	if (sctph.opened > 0)
		sctph_lone_release(1, 0);
	if (sctph.opened > 0 && sctph.env.stats)
		print_stats();
	if (sctph.opened > 0) {
		for (int i = 0; i < sctpc.npeer_vc; i++) {
			struct sctph_peer *p = &sctph.peer[i];
			while (p->held) {	/* none after CH3's close protocol */
				struct sctph_held *h = p->held;
				p->held = h->next;
				MPL_free(h);
			}
			while (p->backlog) {
				struct sctph_op *op = p->backlog;
				p->backlog = op->next;
				MPL_free(op);
			}
			while (p->inq) {
				struct sctph_inbound *in = p->inq;
				p->inq = in->next;
				MPL_free(in);
			}
		}
	}
	sctph_win_forget_regs();
	rnic_free();
	sctph.busy = NULL;
	sctph.opened = 0;
	sctpt_close(ep);
}
