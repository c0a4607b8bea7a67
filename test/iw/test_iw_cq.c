/*
 * test_iw_cq: completions that must not get lost. Two processes on loopback, real endpoints.
 *  - Full CQs: rank 0 posts 16 Sends into rank 1's 16 receives, both sides with CQs of 4
 *    entries that nobody polls until every segment has arrived; then each side must get all
 *    16 completions, in posting order.
 *  - A flush into a full CQ: rank 1 has 8 receives posted on a CQ of 4 when rank 0's Write to
 *    an unknown STag puts its QP in error: all 8 must come back flushed.
 *  - A peer that closes its endpoint: rank 0's posted receives come back flushed and its QP is
 *    in error (nothing was outstanding on the wire: only the core's event can tell).
 *  - A peer that dies (SIGKILL): rank 0's Read, sent to the dead peer, completes with
 *    IW_WC_PEER_LOST and its receives come back flushed.
 *  - A reader that dies while Read Responses sent in place from the target's region
 *    (IW_ACCESS_READ_IN_PLACE) are queued in the target's core: the target's iw_dereg_mr
 *    returns 0 once the core has dropped them (the peer declared lost), and the memory is
 *    overwritten and freed (ASan: nothing reads it afterwards). Over SCTP and the rings.
 * Each part runs with the caller driving progress and with the RNIC's progress thread.
 */
#include "iw_test.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#define NSEND 16
#define NFLUSH 8
#define CQ_DEPTH 4
#define MSG 64

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The next completion within seconds, or a failure saying how many of what came. */
static void next_wc(struct rank_ctx *rc, struct iw_cq *cq, struct iw_wc *wc, double seconds,
		    int got, int want, const char *what)
{
	double end = now() + seconds;
	while (iw_poll_cq(cq, 1, wc) == 0) {
		CHECK(now() < end, "rank %d: %d of %d %s completions within %.0f s", rc->rank, got,
		      want, what, seconds);
		pump(rc);
	}
}

static void post_recvs(struct iw_qp *qp, unsigned char *buf, uint32_t stag, int n)
{
	for (int i = 0; i < n; i++) {
		struct iw_sge sge = {buf + (size_t)i * MSG, MSG, stag};
		struct iw_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1};
		CHECK(iw_post_recv(qp, &wr) == 0, "post recv %d: %s", i, iw_last_error());
	}
}

/* Every receive comes back flushed, in posting order. */
static void expect_flushed(struct rank_ctx *rc, struct iw_cq *cq, int n, double seconds)
{
	struct iw_wc wc;
	for (int i = 0; i < n; i++) {
		next_wc(rc, cq, &wc, seconds, i, n, "flushed receive");
		CHECK(wc.status == IW_WC_WR_FLUSH_ERR && wc.opcode == IW_WC_RECV &&
		      wc.wr_id == (uint64_t)i, "receive %d: status %d opcode %d id %llu", i,
		      wc.status, wc.opcode, (unsigned long long)wc.wr_id);
	}
}

static void full_cqs(struct rank_ctx *rc, struct iw_pd *pd, unsigned char *buf, uint32_t stag)
{
	struct iw_cq *scq, *rcq;
	struct iw_wc wc;
	uint32_t word = 0;
	CHECK(iw_cq_create(rn, CQ_DEPTH, &scq) == 0 && iw_cq_create(rn, CQ_DEPTH, &rcq) == 0,
	      "cq: %s", iw_last_error());
	struct iw_qp *qp = make_qp(rc, pd, scq, rcq);
	if (rc->rank == 1) {
		struct iw_rnic_stats st;
		post_recvs(qp, buf, stag, NSEND);
		ctl_send(rc, &word, 4);
		do {
			pump(rc);
			iw_rnic_stats(rn, &st);
		} while (st.segs_recv < NSEND);
		ctl_send(rc, &word, 4);
		for (int i = 0; i < NSEND; i++) {
			next_wc(rc, rcq, &wc, 5, i, NSEND, "receive");
			CHECK(wc.status == IW_WC_SUCCESS && wc.opcode == IW_WC_RECV &&
			      wc.wr_id == (uint64_t)i && wc.byte_len == MSG,
			      "receive %d: status %d opcode %d id %llu len %u", i, wc.status, wc.opcode,
			      (unsigned long long)wc.wr_id, wc.byte_len);
			CHECK(check_pattern(buf + (size_t)i * MSG, MSG, (uint32_t)i) == 0,
			      "receive %d: data differs", i);
		}
		/* Flushed into a CQ that is full again: rank 0 writes to an unknown STag. */
		post_recvs(qp, buf, stag, NFLUSH);
		ctl_send(rc, &word, 4);
		while (iw_qp_state(qp, NULL, NULL) != IW_QPS_ERROR)
			pump(rc);
		for (int i = 0; i < 20; i++)
			pump(rc);
		expect_flushed(rc, rcq, NFLUSH, 5);
	} else {
		ctl_recv(rc, &word, 4);
		for (int i = 0; i < NSEND; i++) {
			fill_pattern(buf + (size_t)i * MSG, MSG, (uint32_t)i);
			struct iw_sge sge = {buf + (size_t)i * MSG, MSG, stag};
			struct iw_send_wr wr = {.wr_id = (uint64_t)i, .opcode = IW_WR_SEND,
						.sg_list = &sge, .num_sge = 1};
			CHECK(iw_post_send(qp, &wr) == 0, "post send %d: %s", i, iw_last_error());
		}
		ctl_recv(rc, &word, 4); /* every Send arrived: each one's completion was made */
		while (sctpt_pending(rc->ep, -1))
			pump(rc);
		for (int i = 0; i < 20; i++)
			pump(rc);
		for (int i = 0; i < NSEND; i++) {
			next_wc(rc, scq, &wc, 5, i, NSEND, "send");
			CHECK(wc.status == IW_WC_SUCCESS && wc.opcode == IW_WC_SEND &&
			      wc.wr_id == (uint64_t)i, "send %d: status %d opcode %d id %llu", i,
			      wc.status, wc.opcode, (unsigned long long)wc.wr_id);
		}
		ctl_recv(rc, &word, 4);
		struct iw_sge sge = {buf, MSG, stag};
		struct iw_send_wr wr = {.wr_id = 99, .opcode = IW_WR_WRITE, .sg_list = &sge,
					.num_sge = 1, .remote_stag = 0xdead00 | 7, .remote_to = 4096};
		CHECK(iw_post_send(qp, &wr) == 0, "post write: %s", iw_last_error());
		do
			next_wc(rc, scq, &wc, 5, 0, 1, "error");
		while (wc.status == IW_WC_SUCCESS);
		CHECK(wc.status == IW_WC_REM_ACCESS_ERR, "bad write: status %d", wc.status);
	}
	harness_barrier(rc);
	CHECK(iw_qp_destroy(qp) == 0 && iw_cq_destroy(scq) == 0 && iw_cq_destroy(rcq) == 0,
	      "cleanup: %s", iw_last_error());
	printf("rank %d (%s): %d completions through CQs of %d, %d flushed\n", rc->rank,
	       thread_mode ? "progress thread" : "caller progress", NSEND, CQ_DEPTH,
	       rc->rank ? NFLUSH : 0);
}

/* Rank 1 closes its endpoint while rank 0 waits on posted receives. */
static void peer_closes(struct rank_ctx *rc, struct iw_pd *pd, unsigned char *buf,
			uint32_t stag)
{
	struct iw_cq *cq;
	uint32_t word = 0;
	CHECK(iw_cq_create(rn, CQ_DEPTH, &cq) == 0, "cq");
	struct iw_qp *qp = make_qp(rc, pd, cq, cq);
	if (rc->rank == 1) {
		ctl_recv(rc, &word, 4);
		return; /* the body closes the RNIC, the harness the endpoint */
	}
	post_recvs(qp, buf, stag, NFLUSH);
	ctl_send(rc, &word, 4);
	expect_flushed(rc, cq, NFLUSH, 10);
	CHECK(iw_qp_state(qp, NULL, NULL) == IW_QPS_ERROR, "QP to a closed peer not in error");
	struct iw_sge sge = {buf, MSG, stag};
	struct iw_send_wr wr = {.opcode = IW_WR_SEND, .sg_list = &sge, .num_sge = 1};
	CHECK(iw_post_send(qp, &wr) == -EPIPE, "post to a closed peer accepted");
	printf("rank 0 (%s): the peer closed: %d receives flushed\n",
	       thread_mode ? "progress thread" : "caller progress", NFLUSH);
}

static int body(struct rank_ctx *rc, int threaded)
{
	static unsigned char buf[NSEND * MSG];
	struct iw_pd *pd;
	uint32_t stag;
	open_rnic(rc, threaded, 0);
	CHECK(iw_pd_alloc(rn, &pd) == 0, "pd");
	CHECK(iw_reg_mr(pd, buf, sizeof(buf), IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE, &stag) == 0,
	      "reg: %s", iw_last_error());
	full_cqs(rc, pd, buf, stag);
	peer_closes(rc, pd, buf, stag);
	iw_close(rn);
	rn = NULL;
	return 0;
}

/* Waits until the process is gone or a zombie: it runs no more code. */
static void wait_dead(pid_t pid)
{
	char path[64], st[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "r");
		if (!f)
			return;
		size_t n = fread(st, 1, sizeof(st) - 1, f);
		fclose(f);
		st[n] = 0;
		char *p = strrchr(st, ')');
		if (p && p[1] == ' ' && p[2] == 'Z')
			return;
		usleep(1000);
	}
	CHECK(0, "process %d still running after SIGKILL", (int)pid);
}

/* Rank 0 kills rank 1, then sends it a Read that nobody will answer. */
static int body_killed(struct rank_ctx *rc, int threaded)
{
	static unsigned char buf[NSEND * MSG];
	struct iw_pd *pd;
	struct iw_cq *cq;
	uint32_t stag;
	struct iw_wc wc;
	open_rnic(rc, threaded, 0);
	CHECK(iw_pd_alloc(rn, &pd) == 0 && iw_cq_create(rn, CQ_DEPTH, &cq) == 0, "pd/cq");
	CHECK(iw_reg_mr(pd, buf, sizeof(buf), IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE |
			IW_ACCESS_REMOTE_READ, &stag) == 0, "reg: %s", iw_last_error());
	struct iw_qp *qp = make_qp(rc, pd, cq, cq);
	struct {
		int32_t pid;
		uint32_t stag;
		uint64_t addr;
	} me = {(int32_t)getpid(), stag, (uint64_t)(uintptr_t)buf}, peer;
	if (rc->rank == 1) {
		ctl_send(rc, &me, sizeof(me));
		for (;;)
			pump(rc); /* until rank 0 kills us */
	}
	ctl_recv(rc, &peer, sizeof(peer));
	CHECK(kill(peer.pid, SIGKILL) == 0, "kill rank 1");
	wait_dead(peer.pid);
	post_recvs(qp, buf, stag, NFLUSH);
	struct iw_sge sge = {buf, MSG, stag};
	struct iw_send_wr rd = {.wr_id = 77, .opcode = IW_WR_READ, .sg_list = &sge, .num_sge = 1,
				.remote_stag = peer.stag, .remote_to = peer.addr};
	CHECK(iw_post_send(qp, &rd) == 0, "post read: %s", iw_last_error());
	double t0 = now();
	/* The send and the receive completions share the CQ: sort them by queue. */
	int recvs = 0, reads = 0;
	while (recvs + reads < NFLUSH + 1) {
		next_wc(rc, cq, &wc, 30, recvs + reads, NFLUSH + 1, "read and receive");
		if (wc.opcode == IW_WC_READ) {
			CHECK(wc.status == IW_WC_PEER_LOST && wc.wr_id == 77,
			      "read to a dead peer: status %d", wc.status);
			reads++;
		} else {
			CHECK(wc.status == IW_WC_WR_FLUSH_ERR && wc.opcode == IW_WC_RECV &&
			      wc.wr_id == (uint64_t)recvs, "receive %d: status %d opcode %d id %llu",
			      recvs, wc.status, wc.opcode, (unsigned long long)wc.wr_id);
			recvs++;
		}
	}
	CHECK(reads == 1 && iw_qp_state(qp, NULL, NULL) == IW_QPS_ERROR, "QP to a dead peer");
	printf("rank 0 (%s): peer killed: Read failed with IW_WC_PEER_LOST after %.1f s, %d "
	       "receives flushed\n", threaded ? "progress thread" : "caller progress", now() - t0,
	       NFLUSH);
	iw_close(rn);
	rn = NULL;
	return 0;
}

/* Rank 1 kills rank 0 while the core holds most of the 24 MiB it is reading from rank 1. */
#define DREG (24u << 20)

static int body_reader_killed(struct rank_ctx *rc, int threaded)
{
	struct iw_pd *pd;
	struct iw_cq *cq;
	struct {
		int32_t pid;
		uint32_t stag;
		uint64_t addr;
	} me, peer;
	unsigned char *buf = malloc(DREG);
	CHECK(buf, "malloc");
	open_rnic(rc, threaded, 0);
	CHECK(iw_pd_alloc(rn, &pd) == 0 && iw_cq_create(rn, 0, &cq) == 0, "pd/cq");
	struct iw_qp *qp = make_qp(rc, pd, cq, cq);
	unsigned acc = rc->rank == 1 ? IW_ACCESS_REMOTE_READ | IW_ACCESS_READ_IN_PLACE
				     : IW_ACCESS_LOCAL_WRITE;
	CHECK(iw_reg_mr(pd, buf, DREG, acc, &me.stag) == 0, "reg: %s", iw_last_error());
	me.pid = (int32_t)getpid();
	me.addr = (uint64_t)(uintptr_t)buf;
	if (rc->rank == 0) {
		ctl_send(rc, &me, sizeof(me));
		ctl_recv(rc, &peer, sizeof(peer));
		struct iw_sge sge = {buf, DREG, me.stag};
		struct iw_send_wr rd = {.wr_id = 5, .opcode = IW_WR_READ, .sg_list = &sge,
					.num_sge = 1, .remote_stag = peer.stag,
					.remote_to = peer.addr};
		CHECK(iw_post_send(qp, &rd) == 0, "post read: %s", iw_last_error());
		while (sctpt_pending(rc->ep, -1))
			pump(rc);
		for (;;)
			sleep(1); /* no progress (but its thread's) until rank 1 kills us */
	}
	fill_pattern(buf, DREG, 99);
	ctl_recv(rc, &peer, sizeof(peer));
	ctl_send(rc, &me, sizeof(me));
	uint64_t nseg = (DREG + 60 * 1024 - 1) / (60 * 1024);
	struct iw_rnic_stats st;
	pump_until_in_place(rc, nseg, &st);
	CHECK(kill(peer.pid, SIGKILL) == 0, "kill rank 0");
	wait_dead(peer.pid);
	double t0 = now();
	int rc1 = iw_dereg_mr(rn, me.stag); /* waits up to 10 s: the peer is lost before */
	CHECK(rc1 == 0, "dereg after the reader died: %d (%s)", rc1, iw_last_error());
	memset(buf, 0xee, DREG);
	free(buf);
	iw_rnic_stats(rn, &st);
	/* rank 0 never acknowledged more than its windows: the core held the rest */
	CHECK(threaded || st.dereg_waits == 1, "dereg did not wait");
	double t = now() - t0;
	for (int i = 0; i < 5000 && iw_qp_state(qp, NULL, NULL) != IW_QPS_ERROR; i++)
		pump(rc);
	CHECK(iw_qp_state(qp, NULL, NULL) == IW_QPS_ERROR, "QP to a dead reader not in error");
	printf("rank 1 (%s): reader killed with %llu segments sent in place: dereg returned "
	       "after %.1f s%s\n", threaded ? "progress thread" : "caller progress",
	       (unsigned long long)nseg, t, st.dereg_waits ? " (waited)" : "");
	iw_close(rn);
	rn = NULL;
	return 0;
}

int main(void)
{
	struct sctpt_config cfg;
	if (iw_test_run(body, 30) != 0)
		return 1;
	/* A dead peer found out quickly: short timeouts, few retransmissions. */
	sctpt_config_init(&cfg);
	cfg.rto_min_ms = 20;
	cfg.rto_initial_ms = 50;
	cfg.rto_max_ms = 100;
	cfg.hb_interval_ms = 100;
	cfg.path_max_retrans = 2;
	cfg.assoc_max_retrans = 4;
	/* SCTP's loss detection: the core's same-host shared memory sees a killed peer at once,
	 * which fails the QP before the receives to be flushed are posted */
	cfg.shm = 0;
	harness_killed_rank = 1;
	if (iw_test_run_cfg(body_killed, 60, &cfg) != 0)
		return 1;
	harness_killed_rank = 0;
	if (iw_test_run_cfg(body_reader_killed, 60, &cfg) != 0)
		return 1;
	cfg.shm = 1; /* the rings: the reader's end of the socket tells at once */
	return iw_test_run_cfg(body_reader_killed, 60, &cfg);
}
