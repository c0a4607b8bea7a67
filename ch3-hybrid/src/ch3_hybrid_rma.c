/*
 * ch3:hybrid -- one-sided packets taken over as RDMA. ch3:sctp's send path gives every packet
 * to sctph_send (see ch3_hybrid.h). RMA packets of CH3's own format carry what RDMA needs: a
 * PUT or ACCUMULATE_IMMED the target's absolute address, datatype and count, and the origin's
 * window handle (the window's STags, exchanged at its creation, say where the target's memory
 * is registered); a GET, GET_ACCUM_IMMED, FOP_IMMED or CAS_IMMED the handle of the response
 * request CH3 waits on, which holds the origin buffer and window. The data moves as work
 * requests; what the packet's flags ask of the target (count the operation for a fence or
 * PSCW epoch, acknowledge a flush or unlock) goes after it as a PUT_IMMED packet without data,
 * which CH3's target side handles as any put.
 */
#include "ch3_hybrid.h"

#include <string.h>

/* Largest piece one work request carries (its length is 32-bit). */
#define PIECE_MAX (1u << 30)

#define LOCK_FLAGS (MPIDI_CH3_PKT_FLAG_RMA_LOCK_SHARED | MPIDI_CH3_PKT_FLAG_RMA_LOCK_EXCLUSIVE)

/* An operation's target, found through the origin's window. */
struct target {
	MPIDI_VC_t *vc;
	MPIR_Win *win;
	struct sctph_win *sw;
	int rank;		/* in the window's communicator */
	uint32_t stag;
};

static int find_target(int peer, MPI_Win handle, struct target *t)
{
	MPIR_Win *w = NULL;
	t->vc = sctpc.peer_vc[peer];
	if (!t->vc || handle == MPI_WIN_NULL || HANDLE_GET_MPI_KIND(handle) != MPIR_WIN)
		return -1;
	MPIR_Win_get_ptr(handle, w);
	if (!w || !w->sctph)
		return -1;
	t->win = w;
	t->sw = w->sctph;
	t->rank = t->sw->rank_of[t->vc->pg_rank];
	if (t->rank < 0)
		return -1;
	t->stag = t->sw->stags[t->rank];
	return t->stag ? 0 : -1;
}

static MPIR_Request *request_of(MPI_Request h)
{
	MPIR_Request *r = NULL;
	if (h == MPI_REQUEST_NULL || HANDLE_GET_MPI_KIND(h) != MPIR_REQUEST)
		return NULL;
	MPIR_Request_get_ptr(h, r);
	return r;
}

/*
 * The contiguous pieces of count x type at buf (an address of this process or, for the
 * target side, of the peer: only arithmetic is done with it). *iov is one, or allocated;
 * -1 when there are more than max.
 */
static int layout(const void *buf, MPI_Aint count, MPI_Datatype type, int max,
		  struct iovec *one, struct iovec **iov, int *n)
{
	MPI_Aint len, size, lb, got, bytes;
	int contig;

	*iov = one;
	*n = 1;
	MPIR_Datatype_get_size_macro(type, size);
	if (MPIR_DATATYPE_IS_PREDEFINED(type)) {
		one->iov_base = (void *) buf;
		one->iov_len = (size_t) (size * count);
		return 0;
	}
	MPIR_Datatype_is_contig(type, &contig);
	if (contig) {
		MPIR_Datatype_get_true_lb(type, &lb);
		one->iov_base = (char *) buf + lb;
		one->iov_len = (size_t) (size * count);
		return 0;
	}
	if (MPIR_Typerep_iov_len(count, type, MPIR_AINT_MAX, &len) != MPI_SUCCESS || len > max ||
	    len < 1)
		return -1;
	*iov = MPL_malloc((size_t) len * sizeof(**iov), MPL_MEM_RMA);
	if (!*iov)
		return -1;
	if (MPIR_Typerep_to_iov(buf, count, type, 0, *iov, len, MPIR_AINT_MAX, &got, &bytes) !=
	    MPI_SUCCESS || got != len || bytes != size * count) {
		MPL_free(*iov);
		*iov = one;
		return -1;
	}
	*n = (int) len;
	return 0;
}

static void layout_free(struct iovec *iov, struct iovec *one)
{
	if (iov != one)
		MPL_free(iov);
}

/* Pairs local and remote pieces (same total): the number of work requests, or -1 when the
 * totals differ; fills pc when given. */
static int pair(const struct iovec *l, int nl, const struct iovec *r, int nr,
		struct sctph_piece *pc)
{
	int i = 0, j = 0, n = 0;
	size_t lo = 0, ro = 0;
	while (i < nl && j < nr) {
		size_t ll = l[i].iov_len - lo, rl = r[j].iov_len - ro;
		size_t len = ll < rl ? ll : rl;
		if (len > PIECE_MAX)
			len = PIECE_MAX;
		if (len) {
			if (pc) {
				pc[n].local = (char *) l[i].iov_base + lo;
				pc[n].remote = (uint64_t) (uintptr_t) r[j].iov_base + ro;
				pc[n].len = (uint32_t) len;
			}
			n++;
		}
		lo += len;
		ro += len;
		if (lo == l[i].iov_len)
			i++, lo = 0;
		if (ro == r[j].iov_len)
			j++, ro = 0;
	}
	for (; i < nl; i++)
		if (l[i].iov_len > lo)
			return -1;
	for (; j < nr; j++)
		if (r[j].iov_len > ro)
			return -1;
	return n;
}

/* Builds and issues an operation from local and remote layouts; NULL if it has too many
 * pieces (the packet goes as it is). */
static struct sctph_op *issue(int peer, enum sctph_kind kind, enum iw_wr_opcode opcode,
			      const struct target *t, const struct iovec *l, int nl,
			      const struct iovec *r, int nr)
{
	struct sctph_op *op;
	int n = pair(l, nl, r, nr, NULL);
	if (n < 1 || n > sctph.env.max_wrs)
		return NULL;
	op = sctph_op_new(kind, peer, n);
	op->opcode = opcode;
	op->stag = t->stag;
	pair(l, nl, r, nr, op->pc);
	for (int i = 0; i < n; i++)
		op->bytes += op->pc[i].len;
	return op;
}

/*
 * What the target must still do for an operation whose data went as RDMA: count it for its
 * epoch, acknowledge a flush, release a lock. A PUT_IMMED without data does exactly that at
 * the target (finish_op_on_target); it goes through the send path, so it never overtakes the
 * RDMA before it.
 */
static void send_pkt_now(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * f, size_t len)
{
	MPIR_Request *req = NULL;
	if (MPIDI_CH3_iStartMsg(vc, f, (intptr_t) len, &req) != MPI_SUCCESS)
		sctph_fatal("the packet completing an RDMA operation for rank %d could not be sent",
			    vc->pg_rank);
	if (req)
		MPIR_Request_free(req);
}

static void follow_up(MPIDI_VC_t * vc, MPI_Win target_win, MPI_Win source_win, void *addr,
		      int flags)
{
	MPIDI_CH3_Pkt_t f;

	if (!flags)
		return;
	memset(&f, 0, sizeof(f));
	f.put.type = MPIDI_CH3_PKT_PUT_IMMED;
	f.put.pkt_flags = flags;
	f.put.addr = addr;
	f.put.count = 0;
	f.put.datatype = MPI_BYTE;
	f.put.target_win_handle = target_win;
	f.put.source_win_handle = source_win;
	send_pkt_now(vc, &f, sizeof(f.put));
}

/*
 * The same for a read operation (GET, a fetching atomic; a non-fetching atomic too: its
 * response says it was applied). CH3's acknowledgement of its flush or unlock is made here
 * when the data arrives; the fence or PSCW count follows, and the unlock as an UNLOCK packet
 * that asks for no acknowledgement. Both wait until the operation is done.
 */
static void follow_up_read(MPIDI_VC_t * vc, MPI_Win target_win, MPI_Win source_win,
			   void *addr, int flags)
{
	MPIDI_CH3_Pkt_t f;

	follow_up(vc, target_win, source_win, addr, flags & MPIDI_CH3_PKT_FLAG_RMA_DECR_AT_COUNTER);
	if (!(flags & MPIDI_CH3_PKT_FLAG_RMA_UNLOCK))
		return;
	memset(&f, 0, sizeof(f));
	f.unlock.type = MPIDI_CH3_PKT_UNLOCK;
	f.unlock.target_win_handle = target_win;
	f.unlock.source_win_handle = source_win;
	f.unlock.pkt_flags = MPIDI_CH3_PKT_FLAG_RMA_UNLOCK_NO_ACK;
	send_pkt_now(vc, &f, sizeof(f.unlock));
}

#define CLOSE_FLAGS (MPIDI_CH3_PKT_FLAG_RMA_FLUSH | MPIDI_CH3_PKT_FLAG_RMA_UNLOCK | \
		     MPIDI_CH3_PKT_FLAG_RMA_DECR_AT_COUNTER)

/*
 * An operation that closes its epoch at the target with nothing of ours in flight to it
 * (a lock epoch or fence with one operation): as RDMA it is the data plus a Send behind it,
 * as a packet one message that the target handles with less work. Up to lone_max bytes the
 * packet is faster; above, the Write's or Read's placement wins. Only a contiguous target
 * range inside the window goes as a packet: RDMA refuses one outside it, CH3 would not.
 * closing: the flags that end the epoch for this kind of operation (CH3 puts FLUSH on every
 * read operation, so for a Get only an unlock or a fence/PSCW count does).
 */
static int lone_op(int peer, int flags, int closing, const void *addr, MPI_Aint count,
		   MPI_Datatype type, const struct target *t)
{
	const MPIDI_Win_basic_info_t *w = &t->win->basic_info_table[t->rank];
	uintptr_t to = (uintptr_t) addr, base = (uintptr_t) w->base_addr;
	MPI_Aint size, lb = 0;
	int contig = 1;

	if (!(flags & closing) || !sctph_peer_quiet(&sctph.peer[peer]))
		return 0;
	MPIR_Datatype_get_size_macro(type, size);
	size *= count;
	if (size > sctph.env.lone_max)
		return 0;
	if (!MPIR_DATATYPE_IS_PREDEFINED(type)) {
		MPIR_Datatype_is_contig(type, &contig);
		MPIR_Datatype_get_true_lb(type, &lb);
	}
	to += (uintptr_t) lb;
	return contig && to >= base && to - base <= (uintptr_t) w->size &&
	    (uintptr_t) size <= (uintptr_t) w->size - (to - base);
}

/* A PUT: Writes from the packet's data (already gathered whole by the send path). */
static int put(int peer, const MPIDI_CH3_Pkt_put_t * pk, const struct iovec *iov, int iovcnt,
	       void *cookie)
{
	struct target t;
	struct iovec one, *r, *l;
	struct sctph_op *op = NULL;
	struct sctph_peer *p;
	size_t skip = 0;
	int nr, nl = 0;

	if ((pk->pkt_flags & LOCK_FLAGS) || find_target(peer, pk->source_win_handle, &t) ||
	    lone_op(peer, pk->pkt_flags, CLOSE_FLAGS, pk->addr, pk->count, pk->datatype, &t))
		return -1;
	/* a derived target type travels flattened between header and data */
	if (!MPIR_DATATYPE_IS_PREDEFINED(pk->datatype))
		skip = (size_t) pk->info.flattened_type_size;
	l = MPL_malloc((size_t) iovcnt * sizeof(*l), MPL_MEM_RMA);
	if (!l)
		return -1;
	for (int i = 1; i < iovcnt; i++) {
		size_t len = iov[i].iov_len, s = skip < len ? skip : len;
		skip -= s;
		if (len > s) {
			l[nl].iov_base = (char *) iov[i].iov_base + s;
			l[nl++].iov_len = len - s;
		}
	}
	if (layout(pk->addr, pk->count, pk->datatype, sctph.env.max_wrs, &one, &r, &nr) == 0) {
		op = issue(peer, SCTPH_PUT, IW_WR_WRITE, &t, l, nl, r, nr);
		layout_free(r, &one);
	}
	MPL_free(l);
	if (!op)
		return -1;
	op->cookie = cookie;
	sctph.st.puts++;
	sctph.st.put_bytes += op->bytes;
	p = &sctph.peer[peer];
	p->dirty = 1;
	p->last_to = op->pc[0].remote;
	p->last_len = (uint32_t) (op->bytes > UINT32_MAX ? UINT32_MAX : op->bytes);
	p->last_stag = op->stag;
	sctph_issue(p, op);
	follow_up(t.vc, pk->target_win_handle, pk->source_win_handle, pk->addr,
		  pk->pkt_flags & (MPIDI_CH3_PKT_FLAG_RMA_FLUSH | MPIDI_CH3_PKT_FLAG_RMA_UNLOCK |
				   MPIDI_CH3_PKT_FLAG_RMA_DECR_AT_COUNTER));
	return 0;		/* the packet's request completes with the Writes */
}

static void start_read_op(struct sctph_op *op, MPIR_Request * rreq, const struct target *t,
			  int flags)
{
	op->rreq = rreq;
	op->win = t->win->handle;
	op->target_rank = t->rank;
	op->pkt_flags = flags;
}

/* A GET: Reads into the origin buffer CH3's response request describes. */
static int get(int peer, const MPIDI_CH3_Pkt_get_t * g)
{
	MPIR_Request *rreq = request_of(g->request_handle);
	struct target t;
	struct iovec lone, rone, *l, *r;
	struct sctph_op *op = NULL;
	int nl, nr;

	if ((g->pkt_flags & LOCK_FLAGS) || !rreq ||
	    find_target(peer, rreq->dev.source_win_handle, &t) ||
	    lone_op(peer, g->pkt_flags, CLOSE_FLAGS & ~MPIDI_CH3_PKT_FLAG_RMA_FLUSH, g->addr,
		    g->count, g->datatype, &t))
		return -1;
	if (layout(rreq->dev.user_buf, rreq->dev.user_count, rreq->dev.datatype,
		   sctph.env.max_wrs, &lone, &l, &nl))
		return -1;
	if (layout(g->addr, g->count, g->datatype, sctph.env.max_wrs, &rone, &r, &nr) == 0) {
		op = issue(peer, SCTPH_GET, IW_WR_READ, &t, l, nl, r, nr);
		layout_free(r, &rone);
	}
	layout_free(l, &lone);
	if (!op)
		return -1;
	start_read_op(op, rreq, &t, g->pkt_flags);
	sctph.st.gets++;
	sctph.st.get_bytes += op->bytes;
	sctph_issue(&sctph.peer[peer], op);
	follow_up_read(t.vc, g->target_win_handle, t.win->handle, g->addr, g->pkt_flags);
	return 1;		/* nothing left of the packet */
}

/* 64-bit integer types, on which RFC 7306's Fetch-and-Add is MPI_SUM and Compare-and-Swap
 * compares as MPI does. */
static int int64_type(MPI_Datatype t)
{
	MPI_Aint size;
	if (!MPIR_DATATYPE_IS_PREDEFINED(t))
		return 0;
	MPIR_Datatype_get_size_macro(t, size);
	if (size != 8)
		return 0;
	return t == MPI_LONG || t == MPI_UNSIGNED_LONG || t == MPI_LONG_LONG ||
	    t == MPI_UNSIGNED_LONG_LONG || t == MPI_INT64_T || t == MPI_UINT64_T ||
	    t == MPI_AINT || t == MPI_OFFSET || t == MPI_COUNT;
}

/*
 * Atomics go as RDMA only where nothing can break MPI's accumulate semantics: no thread may
 * apply CH3 accumulates while the iWARP layer applies atomics (a single-threaded process), and
 * no accumulate to this target in this window went as a CH3 packet, which an atomic could
 * overtake (MPI orders accumulates from one origin to one location) since the target last
 * acknowledged a flush or unlock (an acknowledgement comes after everything before it was
 * applied; see ack below). One whose packet asks for a lock stays a packet too; the lock's
 * grant, which CH3 waits for before issuing more, comes after it was applied.
 */
static int atomic_target(int peer, MPI_Win win, int flags, void *addr, struct target *t)
{
	if (!sctph.env.atomics || MPIR_IS_THREADED || (flags & LOCK_FLAGS) ||
	    find_target(peer, win, t) || t->sw->core_acc[t->rank])
		return -1;
	return ((uintptr_t) addr & 7) ? -1 : 0;
}

/* One atomic (or 8-byte Read) into sink; rreq: the fetching operation's response request,
 * or NULL with cookie: a non-fetching one, completed as its packet's send. */
static int atomic(int peer, struct target *t, MPIR_Request * rreq, void *cookie, void *sink,
		  enum iw_wr_opcode opcode, void *addr, uint32_t len, uint64_t compare_add,
		  uint64_t swap, int flags, MPI_Win target_win)
{
	struct sctph_op *op = sctph_op_new(rreq ? SCTPH_ATOMIC : SCTPH_ACC, peer, 1);
	op->opcode = opcode;
	op->stag = t->stag;
	op->compare_add = compare_add;
	op->swap = swap;
	op->pc[0].local = sink ? sink : &op->scratch;
	op->pc[0].remote = (uint64_t) (uintptr_t) addr;
	op->pc[0].len = len;
	op->bytes = len;
	op->cookie = cookie;
	start_read_op(op, rreq, t, flags);
	sctph.st.atomics++;
	sctph_issue(&sctph.peer[peer], op);
	follow_up_read(t->vc, target_win, t->win->handle, addr, flags);
	return rreq ? 1 : 0;
}

/* A fetching operation on one element: MPI_SUM on a 64-bit integer (Fetch-and-Add), or
 * MPI_NO_OP (a Read). */
static int fetch_op(int peer, MPIR_Request * rreq, MPI_Op mop, MPI_Datatype type, int count,
		    void *addr, const void *operand, int flags, MPI_Win target_win)
{
	struct target t;
	uint64_t v;
	MPI_Aint size;

	if (count != 1 || !MPIR_DATATYPE_IS_PREDEFINED(type) ||
	    atomic_target(peer, rreq->dev.source_win_handle, flags, addr, &t))
		return -1;
	MPIR_Datatype_get_size_macro(type, size);
	if (mop == MPI_NO_OP && size >= 1 && size <= 8)
		return atomic(peer, &t, rreq, NULL, rreq->dev.user_buf, IW_WR_READ, addr,
			      (uint32_t) size, 0, 0, flags, target_win);
	if (mop != MPI_SUM || !int64_type(type))
		return -1;
	memcpy(&v, operand, sizeof(v));
	return atomic(peer, &t, rreq, NULL, rreq->dev.user_buf, IW_WR_FETCH_ADD, addr, 8, v, 0,
		      flags, target_win);
}

static int fop(int peer, const MPIDI_CH3_Pkt_fop_t * f)
{
	MPIR_Request *rreq = request_of(f->request_handle);
	if (!rreq)
		return -1;
	return fetch_op(peer, rreq, f->op, f->datatype, 1, f->addr, &f->info.data, f->pkt_flags,
			f->target_win_handle);
}

static int gacc(int peer, const MPIDI_CH3_Pkt_get_accum_t * g)
{
	MPIR_Request *rreq = request_of(g->request_handle);
	if (!rreq)
		return -1;
	return fetch_op(peer, rreq, g->op, g->datatype, g->count, g->addr, &g->info.data,
			g->pkt_flags, g->target_win_handle);
}

/* MPI_Accumulate of one 64-bit integer with MPI_SUM: a Fetch-and-Add whose result nobody
 * reads; the packet's request completes when it was applied. */
static int acc(int peer, const MPIDI_CH3_Pkt_accum_t * a, void *cookie)
{
	struct target t;
	uint64_t v;

	if (a->count != 1 || a->op != MPI_SUM || !int64_type(a->datatype) ||
	    atomic_target(peer, a->source_win_handle, a->pkt_flags, a->addr, &t))
		return -1;
	memcpy(&v, &a->info.data, sizeof(v));
	return atomic(peer, &t, NULL, cookie, NULL, IW_WR_FETCH_ADD, a->addr, 8, v, 0,
		      a->pkt_flags, a->target_win_handle);
}

static int cas(int peer, const MPIDI_CH3_Pkt_cas_t * c)
{
	MPIR_Request *rreq = request_of(c->request_handle);
	struct target t;
	uint64_t cmp, swp;

	if (!rreq || !int64_type(c->datatype) ||
	    atomic_target(peer, rreq->dev.source_win_handle, c->pkt_flags, c->addr, &t))
		return -1;
	memcpy(&cmp, &c->compare_data, sizeof(cmp));
	memcpy(&swp, &c->origin_data, sizeof(swp));
	return atomic(peer, &t, rreq, NULL, rreq->dev.user_buf, IW_WR_COMP_SWAP, c->addr, 8, cmp,
		      swp, c->pkt_flags, c->target_win_handle);
}

static MPI_Win pkt_win(const MPIDI_CH3_Pkt_t * pkt, int *flags);

/* An accumulate that goes as a packet: later atomics to the same target in its window must
 * not overtake it. */
static void note_core_acc(int peer, const MPIDI_CH3_Pkt_t * pkt)
{
	struct target t;
	MPI_Win h;
	int flags;

	switch (pkt->type) {
	case MPIDI_CH3_PKT_ACCUMULATE:
	case MPIDI_CH3_PKT_ACCUMULATE_IMMED:
	case MPIDI_CH3_PKT_GET_ACCUM:
	case MPIDI_CH3_PKT_GET_ACCUM_IMMED:
	case MPIDI_CH3_PKT_FOP:
	case MPIDI_CH3_PKT_FOP_IMMED:
	case MPIDI_CH3_PKT_CAS_IMMED:
		break;
	default:
		return;
	}
	h = pkt_win(pkt, &flags);
	if (flags & LOCK_FLAGS)
		return;
	if (find_target(peer, h, &t) == 0)
		t.sw->core_acc[t.rank] = 1;
}

static MPIDI_CH3_PktHandler_Fcn *ch3_ack;

/* CH3's acknowledgement of a flush or unlock: the target applied every packet we sent it
 * before, so atomics to it in that window may go as RDMA again; and if the flush or unlock
 * went as an iWARP Send, the target took it and every Send before it (so the Writes before
 * them are placed), which its credit Write may not have said yet. CH3 waits for this
 * acknowledgement before it closes another epoch of the window at that target. */
static int ack(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
	       MPIR_Request ** rreqp)
{
	MPIR_Win *w = NULL;
	MPI_Win h = pkt->ack.source_win_handle;
	int r = pkt->ack.target_rank;

	if (h != MPI_WIN_NULL && HANDLE_GET_MPI_KIND(h) == MPIR_WIN)
		MPIR_Win_get_ptr(h, w);
	if (w && w->sctph && r >= 0 && r < w->sctph->size) {
		struct sctph_win *sw = w->sctph;
		sw->core_acc[r] = 0;
		if (sw->close_sends[r] && vc->ch.peer >= 0 && vc->ch.peer < sctpc.npeer_vc)
			sctph_sends_taken(&sctph.peer[vc->ch.peer], sw->close_sends[r]);
		sw->close_sends[r] = 0;
	}
	return ch3_ack(vc, pkt, data, buflen, rreqp);
}

void sctph_rma_init(void)
{
	if (ch3_ack)
		return;
	ch3_ack = sctpc.pkt[MPIDI_CH3_PKT_ACK];
	sctpc.pkt[MPIDI_CH3_PKT_ACK] = ack;
}

/* 1 or 0: taken as RDMA (as sctpt_send's results: 0 completes later); -1: not taken. */
static int rdma(int peer, const MPIDI_CH3_Pkt_t * pkt, const struct iovec *iov, int iovcnt,
		void *cookie)
{
	if (!sctph.peer[peer].qp)
		return -1;
	switch (pkt->type) {
	case MPIDI_CH3_PKT_PUT:
		return put(peer, &pkt->put, iov, iovcnt, cookie);
	case MPIDI_CH3_PKT_GET:
		return get(peer, &pkt->get);
	case MPIDI_CH3_PKT_FOP_IMMED:
		return fop(peer, &pkt->fop);
	case MPIDI_CH3_PKT_GET_ACCUM_IMMED:
		return gacc(peer, &pkt->get_accum);
	case MPIDI_CH3_PKT_ACCUMULATE_IMMED:
		return acc(peer, &pkt->accum, cookie);
	case MPIDI_CH3_PKT_CAS_IMMED:
		return cas(peer, &pkt->cas);
	default:
		return -1;
	}
}

/* An MPI operation's packet (not a follow-up of ours, which has no data). */
static int is_op(const MPIDI_CH3_Pkt_t * pkt)
{
	if (pkt->type == MPIDI_CH3_PKT_PUT_IMMED && pkt->put.count == 0)
		return 0;
	return pkt->type >= MPIDI_CH3_PKT_PUT && pkt->type <= MPIDI_CH3_PKT_CAS_IMMED;
}

/* The origin's window of a packet, and its flags (-1 when it has none). */
static MPI_Win pkt_win(const MPIDI_CH3_Pkt_t * pkt, int *flags)
{
	MPIR_Request *rreq = NULL;
	*flags = -1;
	switch (pkt->type) {
	case MPIDI_CH3_PKT_PUT:
	case MPIDI_CH3_PKT_PUT_IMMED:
		*flags = pkt->put.pkt_flags;
		return pkt->put.source_win_handle;
	case MPIDI_CH3_PKT_ACCUMULATE:
	case MPIDI_CH3_PKT_ACCUMULATE_IMMED:
		*flags = pkt->accum.pkt_flags;
		return pkt->accum.source_win_handle;
	case MPIDI_CH3_PKT_GET:
		*flags = pkt->get.pkt_flags;
		rreq = request_of(pkt->get.request_handle);
		break;
	case MPIDI_CH3_PKT_GET_ACCUM:
	case MPIDI_CH3_PKT_GET_ACCUM_IMMED:
		*flags = pkt->get_accum.pkt_flags;
		rreq = request_of(pkt->get_accum.request_handle);
		break;
	case MPIDI_CH3_PKT_FOP:
	case MPIDI_CH3_PKT_FOP_IMMED:
		*flags = pkt->fop.pkt_flags;
		rreq = request_of(pkt->fop.request_handle);
		break;
	case MPIDI_CH3_PKT_CAS_IMMED:
		*flags = pkt->cas.pkt_flags;
		rreq = request_of(pkt->cas.request_handle);
		break;
	case MPIDI_CH3_PKT_FLUSH:
		*flags = MPIDI_CH3_PKT_FLAG_RMA_FLUSH;
		return pkt->flush.source_win_handle;
	case MPIDI_CH3_PKT_UNLOCK:
		*flags = pkt->unlock.pkt_flags | MPIDI_CH3_PKT_FLAG_RMA_UNLOCK;
		return pkt->unlock.source_win_handle;
	case MPIDI_CH3_PKT_DECR_AT_COUNTER:
		*flags = pkt->decr_at_cnt.pkt_flags | MPIDI_CH3_PKT_FLAG_RMA_DECR_AT_COUNTER;
		return pkt->decr_at_cnt.source_win_handle;
	default:
		return MPI_WIN_NULL;
	}
	return rreq ? rreq->dev.source_win_handle : MPI_WIN_NULL;
}

/*
 * Which packets of a window went to the target over the core since the last one that closed
 * an epoch there: a packet that closes an epoch may go as an iWARP Send (ahead of packets
 * still on their way over the core) only when there are none. After a closing packet CH3
 * waits for its effect (an acknowledgement, the fence's barrier, the next post) before it
 * sends more to the target in that window, and operations that ask for a lock wait for the
 * grant, so neither is left pending.
 */
static void note_core(int peer, const MPIDI_CH3_Pkt_t * pkt)
{
	struct target t;
	int flags;
	MPI_Win h = pkt_win(pkt, &flags);

	if (flags == -1 || find_target(peer, h, &t))
		return;
	if (flags & CLOSE_FLAGS)
		t.sw->core_op[t.rank] = 0;
	else if (is_op(pkt) && !(flags & LOCK_FLAGS))
		t.sw->core_op[t.rank] = 1;
}

/*
 * A packet that closes an epoch, alone (no data), that may go as an iWARP Send: nothing of
 * its window and target is on its way over the core, or held here. Reads may be in flight:
 * the target hands the Send to CH3 only once it has answered them (recv_done).
 */
static int send_as_rdma(struct sctph_peer *p, int peer, const MPIDI_CH3_Pkt_t * pkt,
			int iovcnt, void *cookie)
{
	struct target t;
	int flags;
	MPI_Win h;

	if (iovcnt != 1 || p->held || MPIR_IS_THREADED)
		return -1;
	h = pkt_win(pkt, &flags);
	if (flags == -1 || !(flags & CLOSE_FLAGS) || is_op(pkt) || find_target(peer, h, &t) ||
	    t.sw->core_op[t.rank])
		return -1;
	if (sctph_send_packet(p, pkt, cookie))
		return -1;
	/* its acknowledgement, if CH3 asked for one, says the peer took this Send */
	if (flags & (MPIDI_CH3_PKT_FLAG_RMA_FLUSH | MPIDI_CH3_PKT_FLAG_RMA_UNLOCK))
		t.sw->close_sends[t.rank] = p->sends;
	return 0;
}

/*
 * A Put that would go as a packet if it closed its epoch (lone_op) but does not: CH3 issued
 * it before the fence, unlock or flush that ends the epoch. It waits for what follows it to
 * its target: the packet that closes the epoch takes it along over the core (one CH3 packet
 * each, as ch3:sctp sends them; as RDMA they would be a Write and a Send that each cost the
 * target more); any other RMA packet to the target sends it as RDMA first. So does the
 * progress engine when it is about to sleep, when a poll finds nothing to do and nothing was
 * sent to the target since (MPI_Win_flush_local, a request's wait: only the Put itself can
 * end those), and after lone_wait_us at most (a fence's collective with the target is under
 * way: its closing packet comes when that is done). One Put waits at a time.
 */
#define LONE_IOV 4

static struct {
	int peer;                   /* -1: none waits */
	int talked;                 /* a message of another context went to the peer since */
	uint32_t context;
	int32_t tag;
	unsigned flags;
	void *cookie;
	int iovcnt;
	uint64_t since_us;
	struct iovec iov[LONE_IOV];
} lone = {.peer = -1};

static int lone_wait(int peer, const MPIDI_CH3_Pkt_t * pkt, uint32_t context, int32_t tag,
		     unsigned flags, const struct iovec *iov, int iovcnt, void *cookie)
{
	const MPIDI_CH3_Pkt_put_t *pk = &pkt->put;
	struct target t;

	if (pkt->type != MPIDI_CH3_PKT_PUT || sctph.env.lone_wait_us <= 0 || MPIR_IS_THREADED ||
	    iovcnt > LONE_IOV || lone.peer >= 0 || !sctph.peer[peer].qp ||
	    (pk->pkt_flags & (LOCK_FLAGS | CLOSE_FLAGS)) ||
	    find_target(peer, pk->source_win_handle, &t) ||
	    !lone_op(peer, CLOSE_FLAGS, CLOSE_FLAGS, pk->addr, pk->count, pk->datatype, &t))
		return 0;
	lone.peer = peer;
	lone.talked = 0;
	lone.context = context;
	lone.tag = tag;
	lone.flags = flags;
	lone.cookie = cookie;
	lone.iovcnt = iovcnt;
	memcpy(lone.iov, iov, (size_t) iovcnt * sizeof(iov[0]));
	lone.since_us = sctpc_now_us();
	sctph.st.lone_waits++;
	return 1;
}

/* The waiting Put goes: as a CH3 packet ahead of the packet that closes its epoch, else as
 * RDMA (or a packet, if RDMA refuses it, as sctph_send would send it). */
static void lone_go(int as_packet)
{
	int peer = lone.peer, rc;
	const MPIDI_CH3_Pkt_t *pkt = lone.iov[0].iov_base;

	lone.peer = -1;
	if (!as_packet && put(peer, &pkt->put, lone.iov, lone.iovcnt, lone.cookie) == 0)
		return;
	if (as_packet)
		sctph.st.lone_packets++;
	else
		sctph.st.fallback++;
	/* nothing went to the peer since it waited: still quiet, the core keeps the order */
	note_core(peer, pkt);
	rc = sctpt_send(sctpc.ep, peer, lone.context, lone.tag, lone.flags, lone.iov, lone.iovcnt,
			lone.cookie);
	if (rc != 0)		/* 1: with SCTP already; < 0: failed, no completion to come */
		sctph_send_done(lone.cookie, rc == 1 ? 0 : rc);
}

int sctph_lone_release(int idle, int polled_nothing)
{
	if (lone.peer < 0)
		return 0;
	if (!idle && !(polled_nothing && !lone.talked) &&
	    sctpc_now_us() - lone.since_us < (uint64_t) sctph.env.lone_wait_us)
		return 0;
	lone_go(0);
	return 1;
}

/* A packet to the peer a Put waits for: one that closes an epoch alone takes the Put along. */
static void lone_next(int peer, const MPIDI_CH3_Pkt_t * pkt)
{
	int flags;

	if (lone.peer != peer)
		return;
	pkt_win(pkt, &flags);
	lone_go(flags != -1 && (flags & CLOSE_FLAGS) && !is_op(pkt) &&
		!(flags & LOCK_FLAGS));
}

int sctph_send(struct sctpt_ep *ep, sctpt_peer_t peer, uint32_t context, int32_t tag,
	       unsigned flags, const struct iovec *iov, int iovcnt, void *cookie)
{
	const MPIDI_CH3_Pkt_t *pkt;
	struct sctph_peer *p;
	int rc;

	if (context != SCTPC_CTX_RMA || sctph.opened <= 0 || peer < 0 || peer >= sctpc.npeer_vc ||
	    iovcnt < 1 || iov[0].iov_len < sizeof(MPIDI_CH3_Pkt_t)) {
		if (peer == lone.peer)
			lone.talked = 1;
		return sctpt_send(ep, peer, context, tag, flags, iov, iovcnt, cookie);
	}
	pkt = iov[0].iov_base;	/* ch3:sctp's copy of the whole fixed-size header */
	p = &sctph.peer[peer];
	lone_next(peer, pkt);
	if (lone_wait(peer, pkt, context, tag, flags, iov, iovcnt, cookie))
		return 0;	/* its completion comes when it has gone */
	rc = rdma(peer, pkt, iov, iovcnt, cookie);
	if (rc >= 0)
		return rc;
	if (is_op(pkt)) {
		sctph.st.fallback++;
		note_core_acc(peer, pkt);
	}
	if (sctph_peer_quiet(p)) {
		note_core(peer, pkt);
		return sctpt_send(ep, peer, context, tag, flags, iov, iovcnt, cookie);
	}
	if (send_as_rdma(p, peer, pkt, iovcnt, cookie) == 0)
		return 0;	/* its completion comes when the Send has left */
	note_core(peer, pkt);
	return sctph_hold(p, context, tag, flags, iov, iovcnt, cookie);
}
