/*
 * test_iw_protect: every protection error, each on a fresh QP pair. Rank 1 offers a region
 * full of canary bytes; rank 0 attacks it. For each case: the region's memory is untouched,
 * rank 1's QP is in error having sent a Terminate with the RFC's layer/etype/ecode, rank 0's
 * QP is in error having received it, and rank 0 gets a completion with an error status that
 * carries the codes. Cases: unknown STag, STag invalidated by a Send with Invalidate, STag of
 * another PD, write and read out of bounds, write to a read-only region, read from a
 * write-only region, atomic without the right, Send with no posted receive, Send larger than
 * the posted receive. Run with caller progress and with the progress thread.
 */
#include "iw_test.h"

#include <errno.h>

#define REG 4096
#define CANARY 0x5a

enum kase { UNKNOWN, INVALIDATED, OTHER_PD, BOUNDS_W, BOUNDS_R, WRITE_RO, READ_WO, ATOMIC_NORIGHT,
	    NO_RECV, SMALL_RECV, NCASES };

static const struct {
	const char *name;
	unsigned access;
	struct iw_term want;
	enum iw_wc_status status;
} cases[NCASES] = {
	[UNKNOWN] = {"unknown STag", IW_ACCESS_REMOTE_WRITE, {1, 1, 0x00, 0}, IW_WC_REM_ACCESS_ERR},
	[INVALIDATED] = {"invalidated STag", IW_ACCESS_REMOTE_WRITE, {1, 1, 0x00, 0},
			 IW_WC_REM_ACCESS_ERR},
	[OTHER_PD] = {"STag of another PD", IW_ACCESS_REMOTE_WRITE, {1, 1, 0x02, 0},
		      IW_WC_REM_ACCESS_ERR},
	[BOUNDS_W] = {"write out of bounds", IW_ACCESS_REMOTE_WRITE, {1, 1, 0x01, 0},
		      IW_WC_REM_ACCESS_ERR},
	[BOUNDS_R] = {"read out of bounds", IW_ACCESS_REMOTE_READ, {0, 1, 0x01, 0},
		      IW_WC_REM_ACCESS_ERR},
	[WRITE_RO] = {"write to read-only", IW_ACCESS_REMOTE_READ, {0, 1, 0x02, 0},
		      IW_WC_REM_ACCESS_ERR},
	[READ_WO] = {"read from write-only", IW_ACCESS_REMOTE_WRITE, {0, 1, 0x02, 0},
		     IW_WC_REM_ACCESS_ERR},
	[ATOMIC_NORIGHT] = {"atomic without right", IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE,
			    {0, 1, 0x02, 0}, IW_WC_REM_ACCESS_ERR},
	[NO_RECV] = {"no posted receive", IW_ACCESS_LOCAL_WRITE, {1, 2, 0x02, 0},
		     IW_WC_REM_INV_REQ_ERR},
	[SMALL_RECV] = {"receive too small", IW_ACCESS_LOCAL_WRITE, {1, 2, 0x05, 0},
			IW_WC_REM_INV_REQ_ERR},
};

struct region {
	uint32_t stag;
	uint64_t addr;
};

static int same(const struct iw_term *a, const struct iw_term *b)
{
	return a->layer == b->layer && a->etype == b->etype && a->ecode == b->ecode;
}

static void target(struct rank_ctx *rc, enum kase k, struct iw_pd *pd, struct iw_pd *pd2,
		   struct iw_cq *cq)
{
	static unsigned char buf[REG] __attribute__((aligned(8)));
	struct iw_qp *qp = make_qp(rc, pd, cq, cq);
	struct region g;
	struct iw_wc wc;
	struct iw_term sent;
	memset(buf, CANARY, sizeof(buf));
	CHECK(iw_reg_mr(k == OTHER_PD ? pd2 : pd, buf, REG, cases[k].access, &g.stag) == 0, "reg");
	g.addr = (uint64_t)(uintptr_t)buf;
	if (k == SMALL_RECV || k == INVALIDATED) {
		static uint64_t small[2];
		uint32_t ss;
		CHECK(iw_reg_mr(pd, small, sizeof(small), IW_ACCESS_LOCAL_WRITE, &ss) == 0, "reg");
		struct iw_sge sge = {k == SMALL_RECV ? (void *)buf : (void *)small, 16,
				     k == SMALL_RECV ? g.stag : ss};
		struct iw_recv_wr wr = {.wr_id = 5, .sg_list = &sge, .num_sge = 1};
		CHECK(iw_post_recv(qp, &wr) == 0, "post recv: %s", iw_last_error());
	}
	struct region tell = g;
	if (k == UNKNOWN)
		tell.stag = 0xdead00 | 7;
	ctl_send(rc, &tell, sizeof(tell));
	if (k == INVALIDATED) {
		wait_wc(rc, cq, &wc);
		CHECK(wc.status == IW_WC_SUCCESS && wc.opcode == IW_WC_RECV &&
		      (wc.flags & IW_WC_WITH_INV) && wc.invalidated_stag == g.stag,
		      "Send with Invalidate: wc %d flags %u stag %#x", wc.status, wc.flags,
		      wc.invalidated_stag);
		CHECK(iw_stag_valid(rn, g.stag) == 0, "STag still valid after Send with Invalidate");
	}
	while (iw_qp_state(qp, &sent, NULL) != IW_QPS_ERROR)
		pump(rc);
	CHECK(same(&sent, &cases[k].want), "%s: Terminate sent %u/%u/%#x, want %u/%u/%#x",
	      cases[k].name, sent.layer, sent.etype, sent.ecode, cases[k].want.layer,
	      cases[k].want.etype, cases[k].want.ecode);
	for (int i = 0; i < REG; i++)
		CHECK(buf[i] == CANARY, "%s: byte %d of the region was written", cases[k].name, i);
	uint32_t done;
	ctl_recv(rc, &done, 4);
	while (iw_poll_cq(cq, 1, &wc))
		CHECK(wc.status == IW_WC_WR_FLUSH_ERR, "unexpected completion %d", wc.status);
	CHECK(iw_qp_destroy(qp) == 0 && iw_dereg_mr(rn, g.stag) == 0, "cleanup");
}

static void attacker(struct rank_ctx *rc, enum kase k, struct iw_pd *pd, struct iw_cq *cq)
{
	static unsigned char src[128] __attribute__((aligned(8)));
	static uint32_t sstag;
	struct iw_qp *qp = make_qp(rc, pd, cq, cq);
	struct region g;
	struct iw_wc wc;
	struct iw_term recvd;
	if (!sstag)
		CHECK(iw_reg_mr(pd, src, sizeof(src), IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE,
				&sstag) == 0, "reg src");
	memset(src, 0x11, sizeof(src));
	ctl_recv(rc, &g, sizeof(g));
	struct iw_sge sge = {src, 64, sstag};
	struct iw_send_wr wr = {.wr_id = 1, .opcode = IW_WR_WRITE, .sg_list = &sge, .num_sge = 1,
				.remote_stag = g.stag, .remote_to = g.addr};
	switch (k) {
	case INVALIDATED: {
		struct iw_send_wr inv = {.wr_id = 9, .opcode = IW_WR_SEND_INV, .sg_list = &sge,
					 .num_sge = 1, .invalidate_stag = g.stag};
		sge.length = 8;
		CHECK(iw_post_send(qp, &inv) == 0, "post send inv: %s", iw_last_error());
		sge.length = 64;
		break;
	}
	case BOUNDS_W:
		wr.remote_to = g.addr + REG - 32;
		break;
	case BOUNDS_R:
		wr.remote_to = g.addr + REG - 32;
		/* fall through */
	case READ_WO:
		wr.opcode = IW_WR_READ;
		break;
	case ATOMIC_NORIGHT:
		wr.opcode = IW_WR_FETCH_ADD;
		wr.compare_add = 1;
		sge.length = 8;
		break;
	case NO_RECV:
	case SMALL_RECV:
		wr.opcode = IW_WR_SEND;
		sge.length = 100;
		break;
	default:
		break;
	}
	CHECK(iw_post_send(qp, &wr) == 0, "post: %s", iw_last_error());
	/* Local completions of requests handed to SCTP may come first; then the error. */
	do
		wait_wc(rc, cq, &wc);
	while (wc.status == IW_WC_SUCCESS);
	CHECK(wc.status == cases[k].status && same(&wc.term, &cases[k].want),
	      "%s: completion status %d term %u/%u/%#x, want %d %u/%u/%#x", cases[k].name,
	      wc.status, wc.term.layer, wc.term.etype, wc.term.ecode, cases[k].status,
	      cases[k].want.layer, cases[k].want.etype, cases[k].want.ecode);
	CHECK(iw_qp_state(qp, NULL, &recvd) == IW_QPS_ERROR && same(&recvd, &cases[k].want),
	      "%s: QP not in error with the Terminate", cases[k].name);
	CHECK(iw_post_send(qp, &wr) == -EPIPE, "post on a QP in error accepted");
	while (iw_poll_cq(cq, 1, &wc))
		;
	uint32_t done = 1;
	ctl_send(rc, &done, 4);
	CHECK(iw_qp_destroy(qp) == 0, "destroy");
	printf("%-22s Terminate %u/%u/%#x, completion status %d\n", cases[k].name, recvd.layer,
	       recvd.etype, recvd.ecode, wc.status);
}

static int body(struct rank_ctx *rc, int threaded)
{
	struct iw_pd *pd, *pd2;
	struct iw_cq *cq;
	open_rnic(rc, threaded, 0);
	CHECK(iw_pd_alloc(rn, &pd) == 0 && iw_pd_alloc(rn, &pd2) == 0 &&
	      iw_cq_create(rn, 0, &cq) == 0, "pd/cq");
	for (int k = 0; k < NCASES; k++) {
		if (rc->rank == 1)
			target(rc, (enum kase)k, pd, pd2, cq);
		else
			attacker(rc, (enum kase)k, pd, cq);
	}
	close_rnic(rc);
	return 0;
}

int main(void)
{
	return iw_test_run(body, 30);
}
