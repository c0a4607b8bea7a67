/* iw_test.h: what the iWARP tests share: the endpoint's default handler (the RNIC registers its
 * own), a small control channel (ordinary sctpt messages on CTX_CTL) and wait helpers. */
#ifndef IW_TEST_H
#define IW_TEST_H

#include "harness.h"
#include "iw/iw_verbs.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define CTX_CTL 1  /* control messages between the two ranks */
#define CTX_BULK 7 /* ordinary traffic running next to RDMA */

static struct iw_rnic *rn;
static int thread_mode; /* the RNIC's own progress thread drives everything */
static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char ctl_q[64][128];
static size_t ctl_len[64];
static unsigned ctl_head, ctl_count;
static unsigned long bulk_ok, bulk_bad;

/* The contexts the RNIC does not claim: control messages and the ordinary traffic. */
static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	if (c->kind != SCTPT_CQE_RECV || c->status < 0)
		return;
	if (c->context == CTX_CTL) {
		pthread_mutex_lock(&ctl_lock);
		unsigned i = (ctl_head + ctl_count++) % 64;
		ctl_len[i] = c->len < 128 ? c->len : 128;
		memcpy(ctl_q[i], c->data, ctl_len[i]);
		pthread_mutex_unlock(&ctl_lock);
	} else if (c->context == CTX_BULK) {
		if (check_pattern(c->data, c->len, (uint32_t)c->tag) == 0)
			__atomic_add_fetch(&bulk_ok, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&bulk_bad, 1, __ATOMIC_RELAXED);
	}
}

static void pump(struct rank_ctx *rc)
{
	if (thread_mode) {
		usleep(100);
		return;
	}
	sctpt_wait(rc->ep, 1);
	iw_progress(rn);
}

static void ctl_send(struct rank_ctx *rc, const void *p, size_t len)
{
	struct iovec iov = {(void *)p, len};
	CHECK(sctpt_send(rc->ep, rc->peer[1 - rc->rank], CTX_CTL, 0, 0, &iov, 1, NULL) >= 0,
	      "ctl send");
	while (sctpt_pending(rc->ep, -1))
		pump(rc);
}

static void ctl_recv(struct rank_ctx *rc, void *p, size_t len)
{
	for (;;) {
		pthread_mutex_lock(&ctl_lock);
		if (ctl_count) {
			CHECK(ctl_len[ctl_head] == len, "ctl message of %zu bytes, want %zu",
			      ctl_len[ctl_head], len);
			memcpy(p, ctl_q[ctl_head], len);
			ctl_head = (ctl_head + 1) % 64;
			ctl_count--;
			pthread_mutex_unlock(&ctl_lock);
			return;
		}
		pthread_mutex_unlock(&ctl_lock);
		pump(rc);
	}
}

/* Until the RNIC has sent nseg Read Response segments from regions in place; *st after. */
static inline void pump_until_in_place(struct rank_ctx *rc, uint64_t nseg,
				       struct iw_rnic_stats *st)
{
	do {
		pump(rc);
		iw_rnic_stats(rn, st);
	} while (st->rsp_in_place < nseg);
}

static inline void wait_wc(struct rank_ctx *rc, struct iw_cq *cq, struct iw_wc *wc)
{
	while (iw_poll_cq(cq, 1, wc) == 0)
		pump(rc);
}

static int defer_mode; /* open_rnic: attr.defer_tx */
static int dereg_wait; /* open_rnic: attr.dereg_wait_ms, if not 0 */

static void open_rnic(struct rank_ctx *rc, int threaded, size_t seg)
{
	struct iw_rnic_attr a;
	iw_rnic_attr_init(&a);
	a.progress_thread = threaded;
	a.defer_tx = defer_mode;
	if (dereg_wait)
		a.dereg_wait_ms = dereg_wait;
	if (seg)
		a.seg_size = seg;
	thread_mode = threaded;
	CHECK(iw_open(rc->ep, &a, &rn) == 0, "iw_open: %s", iw_last_error());
}

static inline void close_rnic(struct rank_ctx *rc)
{
	harness_barrier(rc);
	struct iw_rnic *r = rn;
	iw_close(r);
	rn = NULL;
}

/* Creates a QP, exchanges numbers with the other rank over the control channel, connects. */
static struct iw_qp *make_qp(struct rank_ctx *rc, struct iw_pd *pd, struct iw_cq *scq,
			     struct iw_cq *rcq)
{
	struct iw_qp_attr qa = {.send_cq = scq, .recv_cq = rcq};
	struct iw_qp *qp;
	uint32_t mine, theirs;
	CHECK(iw_qp_create(pd, &qa, &qp) == 0, "qp create: %s", iw_last_error());
	mine = iw_qp_num(qp);
	if (rc->rank == 0) {
		ctl_recv(rc, &theirs, 4);
		CHECK(iw_qp_connect(qp, rc->peer[1], theirs) == 0, "connect: %s", iw_last_error());
		ctl_send(rc, &mine, 4);
		ctl_recv(rc, &theirs, 4); /* rank 1 is connected too */
	} else {
		/* Rank 1 connects last and says so: both are connected before any traffic. */
		ctl_send(rc, &mine, 4);
		ctl_recv(rc, &theirs, 4);
		CHECK(iw_qp_connect(qp, rc->peer[0], theirs) == 0, "connect: %s", iw_last_error());
		ctl_send(rc, &mine, 4);
	}
	return qp;
}

/* Runs body(rc, 0) (caller-driven progress), then body(rc, 1) (the RNIC's progress thread),
 * each on two ranks over loopback within seconds; the test's exit status. */
static int (*iw_test_body)(struct rank_ctx *rc, int threaded);

static int iw_test_caller(struct rank_ctx *rc)
{
	return iw_test_body(rc, 0);
}

static int iw_test_thread(struct rank_ctx *rc)
{
	return iw_test_body(rc, 1);
}

/* cfg: a configuration made with sctpt_config_init, or NULL for the default one. */
static int iw_test_run_cfg(int (*body)(struct rank_ctx *rc, int threaded), int seconds,
			   struct sctpt_config *cfg)
{
	struct sctpt_config def;
	if (!cfg) {
		sctpt_config_init(&def);
		cfg = &def;
	}
	cfg->addrs = "127.0.0.1";
	cfg->handler.complete = on_complete;
	iw_test_body = body;
	if (harness_run(2, seconds, cfg, iw_test_caller) != 0)
		return 1;
	return harness_run(2, seconds, cfg, iw_test_thread);
}

static int iw_test_run(int (*body)(struct rank_ctx *rc, int threaded), int seconds)
{
	return iw_test_run_cfg(body, seconds, NULL);
}

#endif
