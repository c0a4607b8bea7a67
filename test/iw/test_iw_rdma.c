/*
 * test_iw_rdma: two processes on loopback, real endpoints. Rank 0 RDMA-Writes 1 B .. 64 MiB
 * into rank 1's registered buffer (odd offsets), then tells it with a Send, which must arrive
 * only after every byte was placed (the ordering fence); rank 1 checks every byte and the
 * canaries around, refills the buffer and answers with a Send; rank 0 RDMA-Reads it back and
 * checks every byte. Also: a multi-segment Send into a scattered receive, fetch-add and
 * compare-swap with their returned values, and ordinary sctpt messages flowing both ways on
 * another context during the transfers; 200 small Writes in a row then a Send (they go in
 * bundles: several segments per core message), the receiver checking every one. Run with the
 * caller driving progress and with the RNIC's own progress thread, each with segments handed
 * to the core at posting and deferred to progress (attr.defer_tx); with deferred posting,
 * rank 1's region is IW_ACCESS_READ_IN_PLACE (its Read Responses leave from the buffer).
 * These run over the core's same-host rings; once more over SCTP, where the core must read
 * the bulk of the Writes' and Read Responses' segments straight into their regions.
 * Then a deregistration while Read Responses sent in place are still held by the core: rank 1
 * serves a 24 MiB Read from such a region while rank 0 does not progress; its iw_dereg_mr must
 * not return 0 until the core let go (-EBUSY after its wait), and once it has, the memory is
 * overwritten and freed while the Read completes at rank 0 with every byte right (ASan: no
 * use after free); over SCTP and over the same-host rings, the second time with rank 1's QP
 * destroyed first.
 */
#include "iw_test.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#define BIG (64u << 20)
#define OFF 3 /* odd placement offset */
#define CANARY 0xa5
#define NBULK 64
#define NNOTES 8

static int over_sctp; /* the run goes over SCTP, not the same-host rings */

static const size_t sizes[] = {1, 7, 4096, 65537, 1u << 20, 16u << 20, BIG};

struct region {
	uint32_t stag;
	uint64_t addr, len;
};

struct note {
	uint64_t size;
	uint32_t seed, step;
};

static void bulk_send(struct rank_ctx *rc, int i)
{
	static unsigned char bulk[NBULK][NBULK * 1531 + 1]; /* each stays valid until sent */
	unsigned char *buf = bulk[i];
	size_t len = 1 + (size_t)i * 1531;
	fill_pattern(buf, len, (uint32_t)i);
	struct iovec iov = {buf, len};
	CHECK(sctpt_send(rc->ep, rc->peer[1 - rc->rank], CTX_BULK, i, 0, &iov, 1, NULL) >= 0,
	      "bulk send");
}

static void post_recv(struct iw_qp *qp, void *buf, uint32_t len, uint32_t stag, uint64_t id)
{
	struct iw_sge sge = {buf, len, stag};
	struct iw_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1};
	CHECK(iw_post_recv(qp, &wr) == 0, "post recv: %s", iw_last_error());
}

static void send_note(struct rank_ctx *rc, struct iw_qp *qp, struct iw_cq *cq, struct note *n,
		      uint32_t stag)
{
	struct iw_sge sge = {n, sizeof(*n), stag};
	struct iw_send_wr wr = {.wr_id = 77, .opcode = IW_WR_SEND, .sg_list = &sge, .num_sge = 1};
	struct iw_wc wc;
	CHECK(iw_post_send(qp, &wr) == 0, "post send: %s", iw_last_error());
	wait_wc(rc, cq, &wc);
	CHECK(wc.status == IW_WC_SUCCESS && wc.opcode == IW_WC_SEND && wc.wr_id == 77,
	      "send wc status %d op %d", wc.status, wc.opcode);
}

/* Waits for a Send into one of the note buffers (wr_id = its index) and posts it again: the
 * peer may send the next note before this rank gets to repost. */
static void recv_note(struct rank_ctx *rc, struct iw_qp *qp, struct iw_cq *cq, struct note *n,
		      uint32_t stag, struct note *out)
{
	struct iw_wc wc;
	struct iw_term ts, tr;
	wait_wc(rc, cq, &wc);
	if (iw_qp_state(qp, &ts, &tr) == IW_QPS_ERROR)
		fprintf(stderr, "rank %d: QP in error: sent %u/%u/%#x received %u/%u/%#x\n", rc->rank,
			ts.layer, ts.etype, ts.ecode, tr.layer, tr.etype, tr.ecode);
	CHECK(wc.status == IW_WC_SUCCESS && wc.opcode == IW_WC_RECV && wc.wr_id < NNOTES &&
	      wc.byte_len == sizeof(*n), "recv wc status %d op %d len %u", wc.status, wc.opcode,
	      wc.byte_len);
	*out = n[wc.wr_id];
	post_recv(qp, &n[wc.wr_id], sizeof(*n), stag, wc.wr_id);
}

static void check_canary(const unsigned char *b, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		CHECK(b[i] == CANARY, "canary byte %zu overwritten", i);
}

/* Several application threads, one QP and CQ each, write and read back at the same time. */
#define NTHREADS 3
#define TAREA (1u << 20)

struct worker {
	struct rank_ctx *rc;
	struct iw_qp *qp;
	struct iw_cq *cq;
	unsigned char *src, *dst;
	uint32_t stag;
	struct region tgt;
	int t;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < 12; i++) {
		size_t len = 1 + ((size_t)i * 97771 + (size_t)w->t * 13) % TAREA;
		uint32_t seed = (uint32_t)(w->t * 1000 + i);
		struct iw_wc wc;
		fill_pattern(w->src, len, seed);
		memset(w->dst, 0, len);
		struct iw_sge s = {w->src, (uint32_t)len, w->stag}, d = {w->dst, (uint32_t)len, w->stag};
		uint64_t to = w->tgt.addr + (uint64_t)w->t * TAREA;
		struct iw_send_wr wr = {.wr_id = 1, .opcode = IW_WR_WRITE, .sg_list = &s, .num_sge = 1,
					.remote_stag = w->tgt.stag, .remote_to = to};
		struct iw_send_wr rd = {.wr_id = 2, .opcode = IW_WR_READ, .sg_list = &d, .num_sge = 1,
					.remote_stag = w->tgt.stag, .remote_to = to};
		/* Posted back to back: the Read must see the Write's data (RFC 5040 ordering). */
		CHECK(iw_post_send(w->qp, &wr) == 0 && iw_post_send(w->qp, &rd) == 0, "thread %d post: %s",
		      w->t, iw_last_error());
		wait_wc(w->rc, w->cq, &wc);
		CHECK(wc.status == IW_WC_SUCCESS && wc.wr_id == 1, "thread %d write wc %d", w->t,
		      wc.status);
		wait_wc(w->rc, w->cq, &wc);
		CHECK(wc.status == IW_WC_SUCCESS && wc.wr_id == 2, "thread %d read wc %d", w->t,
		      wc.status);
		CHECK(check_pattern(w->dst, len, seed) == 0, "thread %d: %zu bytes read back differ",
		      w->t, len);
	}
	return NULL;
}

static void threads_phase(struct rank_ctx *rc, struct iw_pd *pd, unsigned char *buf,
			  uint32_t stag, struct region tgt)
{
	struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	uint32_t done = 0;
	for (int t = 0; t < NTHREADS; t++) {
		w[t] = (struct worker){.rc = rc, .src = buf + (size_t)t * 2 * TAREA,
				       .dst = buf + (size_t)(t * 2 + 1) * TAREA, .stag = stag,
				       .tgt = tgt, .t = t};
		CHECK(iw_cq_create(rn, 0, &w[t].cq) == 0, "cq");
		w[t].qp = make_qp(rc, pd, w[t].cq, w[t].cq);
	}
	if (rc->rank == 1) {
		ctl_recv(rc, &done, 4);
	} else {
		for (int t = 0; t < NTHREADS; t++)
			CHECK(pthread_create(&th[t], NULL, worker_main, &w[t]) == 0, "pthread_create");
		for (int t = 0; t < NTHREADS; t++)
			pthread_join(th[t], NULL);
		ctl_send(rc, &done, 4);
		printf("rank 0: %d threads wrote and read back concurrently\n", NTHREADS);
	}
	for (int t = 0; t < NTHREADS; t++)
		CHECK(iw_qp_destroy(w[t].qp) == 0 && iw_cq_destroy(w[t].cq) == 0, "cleanup");
}

static int body(struct rank_ctx *rc, int threaded)
{
	struct iw_pd *pd;
	struct iw_cq *scq, *rcq;
	uint32_t stag;
	static struct note note_in[NNOTES], note_out;
	unsigned char *buf = malloc(BIG + 2 * OFF);
	CHECK(buf, "malloc");
	open_rnic(rc, threaded, 0);
	CHECK(iw_pd_alloc(rn, &pd) == 0 && iw_cq_create(rn, 0, &scq) == 0 &&
	      iw_cq_create(rn, 0, &rcq) == 0, "pd/cq");
	struct iw_qp *qp = make_qp(rc, pd, scq, rcq);
	/* A QP number named by the caller (the BTL names its QPs after peer ranks). */
	struct iw_qp *named, *dup;
	CHECK(iw_qp_create(pd, &(struct iw_qp_attr){.send_cq = scq, .recv_cq = rcq, .qpn = 900},
			   &named) == 0 && iw_qp_num(named) == 900, "named qp: %s", iw_last_error());
	CHECK(iw_qp_create(pd, &(struct iw_qp_attr){.send_cq = scq, .recv_cq = rcq, .qpn = 900},
			   &dup) == -EBUSY, "qp number 900 given twice");
	CHECK(iw_qp_create(pd, &(struct iw_qp_attr){.send_cq = scq, .recv_cq = rcq, .qpn = 1024},
			   &dup) == -EINVAL, "qp number 1024 accepted");
	CHECK(iw_qp_destroy(named) == 0, "destroy named qp");
	unsigned acc = rc->rank == 1 ? IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE | IW_ACCESS_LOCAL_WRITE
				     : IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE;
	if (rc->rank == 1 && defer_mode)
		acc |= IW_ACCESS_READ_IN_PLACE;
	CHECK(iw_reg_mr(pd, buf, BIG + 2 * OFF, acc, &stag) == 0, "reg: %s", iw_last_error());
	uint32_t nin, nout;
	CHECK(iw_reg_mr(pd, note_in, sizeof(note_in), IW_ACCESS_LOCAL_WRITE, &nin) == 0, "reg in");
	CHECK(iw_reg_mr(pd, &note_out, sizeof(note_out), IW_ACCESS_LOCAL_READ, &nout) == 0, "reg out");
	for (int i = 0; i < NNOTES; i++)
		post_recv(qp, &note_in[i], sizeof(note_in[i]), nin, (uint64_t)i);
	struct region tgt = {stag, (uint64_t)(uintptr_t)buf, BIG + 2 * OFF};
	if (rc->rank == 1)
		ctl_send(rc, &tgt, sizeof(tgt));
	else
		ctl_recv(rc, &tgt, sizeof(tgt));
	harness_barrier(rc);
	/* Ordinary messages both ways, next to the RDMA traffic. */
	for (int i = 0; i < NBULK / 2; i++)
		bulk_send(rc, i);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t s = sizes[k];
		uint32_t seed = (uint32_t)(s * 7 + (unsigned)threaded);
		struct note n;
		struct iw_wc wc;
		if (getenv("IW_VERBOSE"))
			fprintf(stderr, "rank %d: size %zu\n", rc->rank, s);
		if (rc->rank == 0) {
			recv_note(rc, qp, rcq, note_in, nin, &n); /* rank 1 has set its canaries */
			CHECK(n.step == 0 && n.size == s, "note step %u", n.step);
			fill_pattern(buf, s, seed);
			struct iw_sge sge = {buf, (uint32_t)s, stag};
			struct iw_send_wr wr = {.wr_id = 100 + k, .opcode = IW_WR_WRITE, .sg_list = &sge,
						.num_sge = 1, .remote_stag = tgt.stag,
						.remote_to = tgt.addr + OFF};
			CHECK(iw_post_send(qp, &wr) == 0, "post write %zu: %s", s, iw_last_error());
			if (k == 5)
				for (int i = NBULK / 2; i < NBULK; i++)
					bulk_send(rc, i);
			wait_wc(rc, scq, &wc);
			CHECK(wc.status == IW_WC_SUCCESS && wc.opcode == IW_WC_WRITE && wc.wr_id == 100 + k,
			      "write wc %d", wc.status);
			note_out = (struct note){s, seed, 1};
			send_note(rc, qp, scq, &note_out, nout);
			recv_note(rc, qp, rcq, note_in, nin, &n);
			CHECK(n.step == 2 && n.size == s, "note step %u size %llu", n.step,
			      (unsigned long long)n.size);
			memset(buf, 0, s);
			wr = (struct iw_send_wr){.wr_id = 200 + k, .opcode = IW_WR_READ, .sg_list = &sge,
						 .num_sge = 1, .remote_stag = tgt.stag,
						 .remote_to = tgt.addr + OFF};
			CHECK(iw_post_send(qp, &wr) == 0, "post read %zu: %s", s, iw_last_error());
			wait_wc(rc, scq, &wc);
			CHECK(wc.status == IW_WC_SUCCESS && wc.opcode == IW_WC_READ && wc.byte_len == s,
			      "read wc %d len %u", wc.status, wc.byte_len);
			CHECK(check_pattern(buf, s, n.seed) == 0, "read %zu bytes: data differs", s);
			note_out = (struct note){s, 0, 3}; /* rank 1 may reuse its buffer now */
			send_note(rc, qp, scq, &note_out, nout);
		} else {
			memset(buf, CANARY, s + 2 * OFF);
			note_out = (struct note){s, 0, 0};
			send_note(rc, qp, scq, &note_out, nout);
			if (k == 5)
				for (int i = NBULK / 2; i < NBULK; i++)
					bulk_send(rc, i);
			recv_note(rc, qp, rcq, note_in, nin, &n);
			CHECK(n.step == 1 && n.size == s, "note step %u", n.step);
			CHECK(check_pattern(buf + OFF, s, n.seed) == 0, "write of %zu bytes: data differs",
			      s);
			check_canary(buf, 0, OFF);
			check_canary(buf, OFF + s, OFF + s + OFF);
			fill_pattern(buf + OFF, s, seed + 1000);
			note_out = (struct note){s, seed + 1000, 2};
			send_note(rc, qp, scq, &note_out, nout);
			recv_note(rc, qp, rcq, note_in, nin, &n);
			CHECK(n.step == 3, "note step %u", n.step);
		}
	}
	printf("rank %d (%s): write/read of 1 B .. 64 MiB checked\n", rc->rank,
	       threaded ? "progress thread" : "caller progress");
	/* A Send of 1 MiB + 5 bytes, scattered over three receive SGEs, on a second QP that
	 * shares the CQs. */
	struct iw_qp *qp2 = make_qp(rc, pd, scq, rcq);
	if (rc->rank == 1) {
		memset(buf, 0, (1u << 21));
		struct iw_sge sg[3] = {{buf, 1000, stag}, {buf + 5000, 1u << 19, stag},
				       {buf + 600000, (1u << 20), stag}};
		struct iw_recv_wr rw = {.wr_id = 9, .sg_list = sg, .num_sge = 3};
		CHECK(iw_post_recv(qp2, &rw) == 0, "post recv sg: %s", iw_last_error());
		ctl_send(rc, &rw.wr_id, 8);
		struct iw_wc wc;
		wait_wc(rc, rcq, &wc);
		CHECK(wc.status == IW_WC_SUCCESS && wc.wr_id == 9 && wc.byte_len == (1u << 20) + 5 &&
		      wc.qpn == iw_qp_num(qp2), "big recv %d %u", wc.status, wc.byte_len);
		unsigned char *want = malloc((1u << 20) + 5);
		fill_pattern(want, (1u << 20) + 5, 4242);
		CHECK(!memcmp(buf, want, 1000) && !memcmp(buf + 5000, want + 1000, 1u << 19) &&
		      !memcmp(buf + 600000, want + 1000 + (1u << 19), (1u << 20) + 5 - 1000 - (1u << 19)),
		      "scattered Send differs");
		free(want);
	} else {
		uint64_t id;
		ctl_recv(rc, &id, 8);
		fill_pattern(buf, (1u << 20) + 5, 4242);
		struct iw_sge sge = {buf, (1u << 20) + 5, stag};
		struct iw_send_wr wr = {.wr_id = 300, .opcode = IW_WR_SEND, .sg_list = &sge, .num_sge = 1};
		struct iw_wc wc;
		CHECK(iw_post_send(qp2, &wr) == 0, "post big send");
		wait_wc(rc, scq, &wc);
		CHECK(wc.status == IW_WC_SUCCESS && wc.wr_id == 300, "big send wc %d", wc.status);
	}
	/* Atomics on a word of rank 1. */
	static uint64_t word, result;
	uint32_t wstag, rstag;
	struct region w;
	if (rc->rank == 1) {
		word = 100;
		CHECK(iw_reg_mr(pd, &word, 8, IW_ACCESS_REMOTE_ATOMIC, &wstag) == 0, "reg word");
		w = (struct region){wstag, (uint64_t)(uintptr_t)&word, 8};
		ctl_send(rc, &w, sizeof(w));
		ctl_recv(rc, &w, sizeof(w));
		CHECK(word == 1000, "word is %llu after the atomics", (unsigned long long)word);
	} else {
		ctl_recv(rc, &w, sizeof(w));
		CHECK(iw_reg_mr(pd, &result, 8, IW_ACCESS_LOCAL_WRITE, &rstag) == 0, "reg result");
		struct iw_sge sge = {&result, 8, rstag};
		struct {
			enum iw_wr_opcode op;
			uint64_t a, b, want;
		} ops[] = {{IW_WR_FETCH_ADD, 5, 0, 100}, {IW_WR_FETCH_ADD, 7, 0, 105},
			   {IW_WR_COMP_SWAP, 112, 1000, 112}, {IW_WR_COMP_SWAP, 5, 9, 1000}};
		for (int i = 0; i < 4; i++) {
			struct iw_send_wr wr = {.wr_id = 400 + i, .opcode = ops[i].op, .sg_list = &sge,
						.num_sge = 1, .remote_stag = w.stag, .remote_to = w.addr,
						.compare_add = ops[i].a, .swap = ops[i].b};
			struct iw_wc wc;
			result = 0;
			CHECK(iw_post_send(qp, &wr) == 0, "post atomic: %s", iw_last_error());
			wait_wc(rc, scq, &wc);
			CHECK(wc.status == IW_WC_SUCCESS && wc.wr_id == 400u + i, "atomic wc %d",
			      wc.status);
			CHECK(result == ops[i].want, "atomic %d returned %llu, want %llu", i,
			      (unsigned long long)result, (unsigned long long)ops[i].want);
		}
		ctl_send(rc, &w, sizeof(w));
	}
	/* 200 small Writes (distinct lengths and contents) posted back to back, then a Send:
	 * the Writes travel in bundles, and the Send must still find every one placed. */
	if (rc->rank == 0) {
		struct note n;
		recv_note(rc, qp, rcq, note_in, nin, &n); /* rank 1 has cleared its buffer */
		for (uint64_t i = 0; i < 200; i++) {
			fill_pattern(buf + i * 64, 1 + i % 60, (uint32_t)(5000 + i));
			struct iw_sge sg = {buf + i * 64, (uint32_t)(1 + i % 60), stag};
			struct iw_send_wr wr = {.wr_id = 2000 + i, .opcode = IW_WR_WRITE,
						.sg_list = &sg, .num_sge = 1, .remote_stag = tgt.stag,
						.remote_to = tgt.addr + i * 64};
			CHECK(iw_post_send(qp, &wr) == 0, "post small write %llu: %s",
			      (unsigned long long)i, iw_last_error());
		}
		struct iw_wc wc;
		for (uint64_t i = 0; i < 200; i++) {
			wait_wc(rc, scq, &wc);
			CHECK(wc.status == IW_WC_SUCCESS && wc.wr_id == 2000 + i, "small write %llu: "
			      "wc %d id %llu", (unsigned long long)i, wc.status,
			      (unsigned long long)wc.wr_id);
		}
		note_out = (struct note){200, 0, 4};
		send_note(rc, qp, scq, &note_out, nout);
		recv_note(rc, qp, rcq, note_in, nin, &n);
		CHECK(n.step == 5, "note step %u", n.step);
	} else {
		struct note n;
		memset(buf, 0, 200 * 64);
		note_out = (struct note){0, 0, 0};
		send_note(rc, qp, scq, &note_out, nout);
		recv_note(rc, qp, rcq, note_in, nin, &n);
		CHECK(n.step == 4, "note step %u", n.step);
		for (uint64_t i = 0; i < 200; i++) {
			CHECK(check_pattern(buf + i * 64, 1 + i % 60, (uint32_t)(5000 + i)) == 0,
			      "small write %llu: data differs", (unsigned long long)i);
			for (uint64_t j = 1 + i % 60; j < 64; j++)
				CHECK(buf[i * 64 + j] == 0, "small write %llu: byte %llu written",
				      (unsigned long long)i, (unsigned long long)j);
		}
		note_out = (struct note){0, 0, 5};
		send_note(rc, qp, scq, &note_out, nout);
	}
	/* 200 small Reads posted back to back: more than the peer takes at once (its IRD), so
	 * the requester must hold some back; they complete in order and match one big Read. */
	if (rc->rank == 0) {
		struct iw_sge big = {buf, 1600, stag};
		struct iw_send_wr wr = {.wr_id = 999, .opcode = IW_WR_READ, .sg_list = &big,
					.num_sge = 1, .remote_stag = tgt.stag, .remote_to = tgt.addr};
		struct iw_wc wc;
		CHECK(iw_post_send(qp, &wr) == 0, "post read");
		for (uint64_t i = 0; i < 200; i++) {
			struct iw_sge sg = {buf + 4096 + i * 8, 8, stag};
			wr = (struct iw_send_wr){.wr_id = 1000 + i, .opcode = IW_WR_READ, .sg_list = &sg,
						 .num_sge = 1, .remote_stag = tgt.stag,
						 .remote_to = tgt.addr + i * 8};
			CHECK(iw_post_send(qp, &wr) == 0, "post read %llu: %s", (unsigned long long)i,
			      iw_last_error());
		}
		for (uint64_t i = 0; i < 201; i++) {
			wait_wc(rc, scq, &wc);
			CHECK(wc.status == IW_WC_SUCCESS && wc.wr_id == (i ? 999 + i : 999),
			      "read %llu: wc %d id %llu", (unsigned long long)i, wc.status,
			      (unsigned long long)wc.wr_id);
		}
		CHECK(!memcmp(buf, buf + 4096, 1600), "small reads differ from the big one");
	}
	while (__atomic_load_n(&bulk_ok, __ATOMIC_RELAXED) + bulk_bad < NBULK)
		pump(rc);
	CHECK(bulk_ok == NBULK && bulk_bad == 0, "ordinary messages: %lu ok, %lu bad", bulk_ok,
	      bulk_bad);
	struct iw_rnic_stats st;
	iw_rnic_stats(rn, &st);
	printf("rank %d: %llu segments sent, %llu received, %llu held for their fence, %llu "
	       "bundles sent, %llu Read Response segments in place%s\n", rc->rank,
	       (unsigned long long)st.segs_sent, (unsigned long long)st.segs_recv,
	       (unsigned long long)st.held, (unsigned long long)st.bundles,
	       (unsigned long long)st.rsp_in_place, defer_mode ? " (deferred posting)" : "");
	/* rank 1 answered reads of up to 64 MiB: in place exactly when its region says so */
	CHECK(rc->rank == 0 || (st.rsp_in_place > 0) == defer_mode,
	      "%llu Read Response segments sent in place", (unsigned long long)st.rsp_in_place);
	/* deferred posting: the 200 Writes (rank 0) or the answers to the 200 Reads (rank 1)
	 * went out together */
	CHECK(!defer_mode || rc->rank == 1 || st.bundles > 0, "no bundles with deferred posting");
	CHECK(iw_qp_state(qp, NULL, NULL) == IW_QPS_RTS, "QP left RTS");
	threads_phase(rc, pd, buf, stag, tgt);
	/* over SCTP, Writes (rank 1) and Read Responses (rank 0) of up to 64 MiB came in many
	 * segments: the core read the bulk of them straight into the region (and the data checked
	 * out above) */
	iw_rnic_stats(rn, &st);
	printf("rank %d: %llu segments placed by the core\n", rc->rank,
	       (unsigned long long)st.segs_placed);
	CHECK(!over_sctp || st.segs_placed > 0, "no segment was placed by the core");
	close_rnic(rc);
	free(buf);
	return 0;
}

/* A deregistration while Read Responses sent in place are still queued in the core. */
/* 410 segments of 60 KiB: all cut at once (512 slots), far more than the core can hand to
 * SCTP or a ring while the reader does not progress */
#define DREG (24u << 20)
#define DREG_WAIT 100    /* ms: attr.dereg_wait_ms */

static int *go;          /* shared by the two processes: rank 0 progresses again once set */
static int destroy_qp;   /* rank 1 destroys its QP before deregistering */

static int dereg_body(struct rank_ctx *rc, int threaded)
{
	struct iw_pd *pd;
	struct iw_cq *cq;
	struct iw_wc wc;
	struct region src;
	dereg_wait = DREG_WAIT;
	open_rnic(rc, threaded, 0);
	CHECK(iw_pd_alloc(rn, &pd) == 0 && iw_cq_create(rn, 0, &cq) == 0, "pd/cq");
	struct iw_qp *qp = make_qp(rc, pd, cq, cq);
	unsigned char *buf = malloc(DREG);
	CHECK(buf, "malloc");
	if (rc->rank == 1) {
		fill_pattern(buf, DREG, 4242);
		CHECK(iw_reg_mr(pd, buf, DREG, IW_ACCESS_REMOTE_READ | IW_ACCESS_READ_IN_PLACE,
				&src.stag) == 0, "reg: %s", iw_last_error());
		src.addr = (uint64_t)(uintptr_t)buf;
		src.len = DREG;
		ctl_send(rc, &src, sizeof(src));
		uint64_t nseg = (DREG + 60 * 1024 - 1) / (60 * 1024);
		struct iw_rnic_stats st;
		pump_until_in_place(rc, nseg, &st);
		CHECK(st.rsp_in_place == nseg, "%llu segments in place, want %llu",
		      (unsigned long long)st.rsp_in_place, (unsigned long long)nseg);
		if (destroy_qp)
			CHECK(iw_qp_destroy(qp) == 0, "qp destroy");
		int rc1 = iw_dereg_mr(rn, src.stag), tries = 1;
		/* rank 0 is not progressing (unless its own thread does): the core still holds
		 * most of the Read's segments, and may read them from buf for a while */
		CHECK(threaded || rc1 == -EBUSY, "dereg with segments held: %d, want -EBUSY", rc1);
		CHECK(rc1 == 0 || iw_stag_valid(rn, src.stag) == 0,
		      "region still valid after -EBUSY");
		__atomic_store_n(go, 1, __ATOMIC_RELEASE);
		while (rc1 == -EBUSY && tries++ < 300)
			rc1 = iw_dereg_mr(rn, src.stag);
		CHECK(rc1 == 0, "dereg after %d tries: %d (%s)", tries, rc1, iw_last_error());
		iw_rnic_stats(rn, &st);
		/* with rank 0's own thread progressing, the segments may all be acknowledged
		 * before the first call: nothing to wait for then */
		CHECK(threaded || st.dereg_waits >= 1, "dereg did not wait");
		memset(buf, 0xee, DREG); /* what a read from here from now on would send */
		free(buf);
		buf = NULL;
		uint32_t done;
		ctl_recv(rc, &done, 4);
		printf("rank 1 (%s%s): deregistered after %d call(s), %llu waited\n",
		       threaded ? "progress thread" : "caller progress",
		       destroy_qp ? ", QP destroyed first" : "", tries,
		       (unsigned long long)st.dereg_waits);
	} else {
		uint32_t stag, done = 1;
		CHECK(iw_reg_mr(pd, buf, DREG, IW_ACCESS_LOCAL_WRITE, &stag) == 0, "reg");
		memset(buf, 0, DREG);
		ctl_recv(rc, &src, sizeof(src));
		struct iw_sge sge = {buf, DREG, stag};
		struct iw_send_wr rd = {.wr_id = 5, .opcode = IW_WR_READ, .sg_list = &sge,
					.num_sge = 1, .remote_stag = src.stag,
					.remote_to = src.addr};
		CHECK(iw_post_send(qp, &rd) == 0, "post read: %s", iw_last_error());
		while (sctpt_pending(rc->ep, -1)) /* the Read Request has left */
			pump(rc);
		/* no progress until rank 1 has tried to deregister (its own thread does some) */
		for (int i = 0; !threaded && i < 30000 && !__atomic_load_n(go, __ATOMIC_ACQUIRE);
		     i++)
			usleep(1000);
		CHECK(threaded || __atomic_load_n(go, __ATOMIC_ACQUIRE), "rank 1 never tried");
		wait_wc(rc, cq, &wc);
		CHECK(wc.status == IW_WC_SUCCESS && wc.wr_id == 5 && wc.byte_len == DREG,
		      "read: status %d, %u bytes", wc.status, wc.byte_len);
		CHECK(check_pattern(buf, DREG, 4242) == 0, "read: data differs");
		ctl_send(rc, &done, 4);
		CHECK(iw_qp_destroy(qp) == 0, "qp destroy");
	}
	close_rnic(rc);
	free(buf);
	return 0;
}

static int dereg_runs(void)
{
	struct sctpt_config cfg;
	go = mmap(NULL, sizeof(*go), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(go != MAP_FAILED, "mmap");
	*go = 0;
	if (iw_test_run(dereg_body, 60) != 0) /* same host: the rings */
		return 1;
	*go = 0;
	destroy_qp = 1;
	sctpt_config_init(&cfg);
	cfg.shm = 0;
	return iw_test_run_cfg(dereg_body, 60, &cfg);
}

int main(void)
{
	if (iw_test_run(body, 50) != 0)
		return 1;
	defer_mode = 1;
	if (iw_test_run(body, 50) != 0)
		return 1;
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.shm = 0;
	over_sctp = 1;
	if (iw_test_run_cfg(body, 50, &cfg) != 0)
		return 1;
	over_sctp = 0;
	defer_mode = 0;
	return dereg_runs();
}
