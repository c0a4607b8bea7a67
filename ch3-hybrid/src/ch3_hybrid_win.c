/*
 * ch3:hybrid -- windows: CH3's window creation (its gather of base addresses), then the
 * window's memory registered with the iWARP layer and the steering tags exchanged, with each
 * rank's queue pairs to the other members made before the exchange (so none is used before
 * its peer has one). MPI_Alloc_mem registers its memory at once; a window over such memory
 * uses that registration. Synchronisation is CH3's (fence, PSCW, lock/unlock/flush).
 */
#include "ch3_hybrid.h"

#include <errno.h>
#include <stdio.h>

/* Gets are answered from the window itself, not from a copy: MPI_Win_free comes after every
 * epoch, so after every Read of it completed, and iw_dereg_mr waits for any segment the core
 * still holds */
#define WIN_ACCESS (IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE | IW_ACCESS_REMOTE_READ | \
		    IW_ACCESS_REMOTE_WRITE | IW_ACCESS_REMOTE_ATOMIC | IW_ACCESS_READ_IN_PLACE)

/* MPI_Alloc_mem's registrations. */
struct sctph_reg {
	char *addr;
	size_t len;
	uint32_t stag;
	struct sctph_reg *next;
};

static struct sctph_reg *regs;

static uint32_t reg_find(const void *base, MPI_Aint size)
{
	const char *b = base;
	for (struct sctph_reg *r = regs; r; r = r->next)
		if (b >= r->addr && b + size <= r->addr + r->len)
			return r->stag;
	return 0;
}

/* Registers the window's memory (or finds MPI_Alloc_mem's registration of it). */
static void win_register(struct sctph_win *sw, void *base, MPI_Aint size)
{
	if (!base || size <= 0)
		return;
	sw->stag = reg_find(base, size);
	if (sw->stag)
		return;
	if (iw_reg_mr(sctph.pd, base, (size_t) size, WIN_ACCESS, &sw->stag) != 0) {
		fprintf(stderr, "ch3:hybrid: rank %d: window memory at %p (%ld bytes) not "
			"registered (%s): operations on it go as CH3 packets\n", sctpc.rank, base,
			(long) size, iw_last_error());
		sw->stag = 0;
		return;
	}
	sw->own_stag = 1;
}

static void win_free_state(struct sctph_win *sw)
{
	if (!sw)
		return;
	/* the memory goes once we return: it must not be read any more */
	if (sw->own_stag && sctph.rnic && iw_dereg_mr(sctph.rnic, sw->stag) == -EBUSY)
		sctph_fatal("window memory still read by the iWARP layer: %s", iw_last_error());
	MPL_free(sw->stags);
	MPL_free(sw->rank_of);
	MPL_free(sw->core_acc);
	MPL_free(sw->core_op);
	MPL_free(sw->close_sends);
	MPL_free(sw);
}

/*
 * What each rank contributes to the exchange: its window STag, its fence word (STag and
 * address: the target of ordering Reads), its credit words (where peers write how many of its
 * Sends they took), or zeros without RDMA. Every rank takes part, RDMA or not: it is
 * collective.
 */
enum { X_STAG, X_FENCE_STAG, X_FENCE_TO, X_CREDIT_STAG, X_CREDIT_TO, X_N };

static int exchange(MPIR_Win * w, struct sctph_win *sw)
{
	int mpi_errno = MPI_SUCCESS, n = w->comm_ptr->local_size, me = w->comm_ptr->rank;
	MPIR_Errflag_t errflag = MPIR_ERR_NONE;
	uint64_t *x;
	int *qp_ok;

	x = MPL_calloc((size_t) n * X_N, sizeof(*x), MPL_MEM_RMA);
	qp_ok = MPL_calloc((size_t) n, sizeof(*qp_ok), MPL_MEM_RMA);
	MPIR_ERR_CHKANDJUMP(!x || !qp_ok, mpi_errno, MPI_ERR_OTHER, "**nomem");
	for (int r = 0; r < n; r++) {
		MPIDI_VC_t *vc;
		MPIDI_Comm_get_vc(w->comm_ptr, r, &vc);
		sw->rank_of[vc->pg_rank] = r;
		if (r != me && sctph.opened > 0)
			qp_ok[r] = sctph_qp(vc) == 0;
	}
	if (sctph.opened > 0) {
		x[me * X_N + X_STAG] = sw->stag;
		x[me * X_N + X_FENCE_STAG] = sctph.fence_stag;
		x[me * X_N + X_FENCE_TO] = (uint64_t) (uintptr_t) & sctph.fence_word;
		x[me * X_N + X_CREDIT_STAG] = sctph.credit_stag;
		x[me * X_N + X_CREDIT_TO] = (uint64_t) (uintptr_t) sctph.credits;
	}
	mpi_errno = MPIR_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x, X_N, MPI_UINT64_T,
				   w->comm_ptr, &errflag);
	MPIR_ERR_CHECK(mpi_errno);
	MPIR_ERR_CHKANDJUMP(errflag, mpi_errno, MPI_ERR_OTHER, "**coll_fail");
	for (int r = 0; r < n; r++) {
		MPIDI_VC_t *vc;
		struct sctph_peer *p;
		if (!qp_ok[r] || !x[r * X_N + X_FENCE_STAG])
			continue;	/* ourselves (CH3 does those), or no RDMA on one side */
		MPIDI_Comm_get_vc(w->comm_ptr, r, &vc);
		p = &sctph.peer[vc->ch.peer];
		p->fence_stag = (uint32_t) x[r * X_N + X_FENCE_STAG];
		p->fence_to = x[r * X_N + X_FENCE_TO];
		p->credit_stag = (uint32_t) x[r * X_N + X_CREDIT_STAG];
		p->credit_to = x[r * X_N + X_CREDIT_TO];
		sw->stags[r] = (uint32_t) x[r * X_N + X_STAG];
	}
  fn_exit:
	MPL_free(x);
	MPL_free(qp_ok);
	return mpi_errno;
  fn_fail:
	goto fn_exit;
}

static int gather_info(void *base, MPI_Aint size, int disp_unit, MPIR_Info * info,
		       MPIR_Comm * comm_ptr, MPIR_Win ** win_ptr)
{
	int mpi_errno, n;
	struct sctph_win *sw;
	MPIR_Win *w;

	mpi_errno = MPIDI_CH3U_Win_gather_info(base, size, disp_unit, info, comm_ptr, win_ptr);
	MPIR_ERR_CHECK(mpi_errno);
	w = *win_ptr;
	n = w->comm_ptr->local_size;
	sw = MPL_calloc(1, sizeof(*sw), MPL_MEM_RMA);
	MPIR_ERR_CHKANDJUMP(!sw, mpi_errno, MPI_ERR_OTHER, "**nomem");
	sw->size = n;
	sw->stags = MPL_calloc((size_t) n, sizeof(*sw->stags), MPL_MEM_RMA);
	sw->core_acc = MPL_calloc((size_t) n, 1, MPL_MEM_RMA);
	sw->core_op = MPL_calloc((size_t) n, 1, MPL_MEM_RMA);
	sw->close_sends = MPL_calloc((size_t) n, sizeof(*sw->close_sends), MPL_MEM_RMA);
	sw->rank_of = MPL_malloc((size_t) (sctpc.npeer_vc + 1) * sizeof(int), MPL_MEM_RMA);
	if (!sw->stags || !sw->core_acc || !sw->core_op || !sw->close_sends || !sw->rank_of) {
		win_free_state(sw);
		MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
	}
	for (int i = 0; i <= sctpc.npeer_vc; i++)
		sw->rank_of[i] = -1;
	if (sctph_open() == 0)
		win_register(sw, base, size);
	mpi_errno = exchange(w, sw);
	if (mpi_errno) {
		win_free_state(sw);
		goto fn_fail;
	}
	w->sctph = sw;
  fn_fail:
	return mpi_errno;
}

static int win_init(MPI_Aint size ATTRIBUTE((unused)), int disp_unit ATTRIBUTE((unused)),
		    int flavor ATTRIBUTE((unused)), int model ATTRIBUTE((unused)),
		    MPIR_Info * info ATTRIBUTE((unused)), MPIR_Comm * comm ATTRIBUTE((unused)),
		    MPIR_Win ** win_ptr)
{
	(*win_ptr)->sctph = NULL;
	return MPI_SUCCESS;
}

/* After CH3's barrier in MPI_Win_free: nobody reaches this memory any more. */
static int win_free(MPIR_Win ** win_ptr)
{
	win_free_state((*win_ptr)->sctph);
	(*win_ptr)->sctph = NULL;
	return MPI_SUCCESS;
}

int MPIDI_CH3_Win_fns_init(MPIDI_CH3U_Win_fns_t * win_fns)
{
	win_fns->gather_info = gather_info;
	return MPI_SUCCESS;
}

int MPIDI_CH3_Win_hooks_init(MPIDI_CH3U_Win_hooks_t * win_hooks)
{
	win_hooks->win_init = win_init;
	win_hooks->win_free = win_free;
	return MPI_SUCCESS;
}

int MPIDI_CH3_Win_pkt_orderings_init(MPIDI_CH3U_Win_pkt_ordering_t * orderings)
{
	/* RMA packets to one target share a core context, and a packet held behind RDMA keeps
	 * its place among them: a flush arrives after the operations before it */
	orderings->am_flush_ordered = 1;
	return MPI_SUCCESS;
}

void *MPIDI_CH3I_Alloc_mem(MPI_Aint size, MPIR_Info * info_ptr ATTRIBUTE((unused)))
{
	void *p = MPL_malloc((size_t) size, MPL_MEM_USER);
	struct sctph_reg *r;

	if (!p || size <= 0 || sctph_open() != 0)
		return p;
	r = MPL_malloc(sizeof(*r), MPL_MEM_RMA);
	if (!r)
		return p;
	if (iw_reg_mr(sctph.pd, p, (size_t) size, WIN_ACCESS, &r->stag) != 0) {
		MPL_free(r);	/* a window over it registers it then */
		return p;
	}
	r->addr = p;
	r->len = (size_t) size;
	r->next = regs;
	regs = r;
	return p;
}

int MPIDI_CH3I_Free_mem(void *ptr)
{
	for (struct sctph_reg **pr = &regs; *pr; pr = &(*pr)->next) {
		struct sctph_reg *r = *pr;
		if (r->addr != ptr)
			continue;
		if (sctph.rnic && iw_dereg_mr(sctph.rnic, r->stag) == -EBUSY) {
			/* still read by Read Responses the core holds: kept, not freed */
			fprintf(stderr, "ch3:hybrid: rank %d: MPI_Free_mem(%p): %s; the memory is "
				"left allocated\n", sctpc.rank, ptr, iw_last_error());
			return MPI_SUCCESS;
		}
		*pr = r->next;
		MPL_free(r);
		break;
	}
	MPL_free(ptr);
	return MPI_SUCCESS;
}

/* MPI_Finalize: the registrations go with the iWARP layer. */
void sctph_win_forget_regs(void)
{
	while (regs) {
		struct sctph_reg *r = regs;
		regs = r->next;
		MPL_free(r);
	}
}
