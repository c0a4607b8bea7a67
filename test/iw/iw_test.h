/* iw_test.h: what the iWARP tests share: an endpoint owner that routes iWARP contexts to the
 * RNIC, a small control channel (ordinary sctpt messages on CTX_CTL) and wait helpers. */
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

static void on_recv(void *arg, const struct sctpt_msg *m)
{
	(void)arg;
	if (rn && iw_input(rn, m))
		return;
	if (m->context == CTX_CTL) {
		pthread_mutex_lock(&ctl_lock);
		unsigned i = (ctl_head + ctl_count++) % 64;
		ctl_len[i] = m->len < 128 ? m->len : 128;
		memcpy(ctl_q[i], m->data, ctl_len[i]);
		pthread_mutex_unlock(&ctl_lock);
	} else if (m->context == CTX_BULK) {
		if (check_pattern(m->data, m->len, (uint32_t)m->tag) == 0)
			__atomic_add_fetch(&bulk_ok, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&bulk_bad, 1, __ATOMIC_RELAXED);
	}
}

static void on_send_done(void *arg, void *cookie, int status)
{
	(void)arg;
	if (rn && iw_send_done(rn, cookie, status))
		return;
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

static void wait_wc(struct rank_ctx *rc, struct iw_cq *cq, struct iw_wc *wc)
{
	while (iw_poll_cq(cq, 1, wc) == 0)
		pump(rc);
}

static void open_rnic(struct rank_ctx *rc, int threaded, size_t seg)
{
	struct iw_rnic_attr a;
	iw_rnic_attr_init(&a);
	a.progress_thread = threaded;
	if (seg)
		a.seg_size = seg;
	thread_mode = threaded;
	CHECK(iw_open(rc->ep, &a, &rn) == 0, "iw_open: %s", iw_last_error());
}

static void close_rnic(struct rank_ctx *rc)
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

static int iw_test_run(int (*body)(struct rank_ctx *rc, int threaded), int seconds)
{
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.ops.recv = on_recv;
	cfg.ops.send_done = on_send_done;
	iw_test_body = body;
	if (harness_run(2, seconds, &cfg, iw_test_caller) != 0)
		return 1;
	return harness_run(2, seconds, &cfg, iw_test_thread);
}

#endif
