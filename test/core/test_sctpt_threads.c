/*
 * MPI_THREAD_MULTIPLE: in each of two ranks, four threads send to the other rank at once
 * (each thread on its own context, sizes up to 256 KiB) and all of them drive progress. Every
 * message must arrive intact, in order within its context, and none may be lost.
 */
#include "harness.h"

#include <pthread.h>
#include <string.h>

#define THREADS 4
#define PER_THREAD 150

static int last[THREADS];
static int received;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

/* Completions come one at a time whichever thread progresses, so last[] needs no lock;
 * received is also read by the workers. */
static void on_complete(void *arg, const struct sctpt_cqe *m)
{
	(void)arg;
	if (m->kind == SCTPT_CQE_SEND) {
		CHECK(m->status == 0, "send failed %d", m->status);
		free(m->cookie);
		return;
	}
	if (m->kind != SCTPT_CQE_RECV)
		return;
	CHECK(m->status == 0, "receive failed %d", m->status);
	CHECK(m->context < THREADS, "context %u", m->context);
	CHECK(m->tag == last[m->context] + 1, "context %u: message %d after %d", m->context, m->tag,
	      last[m->context]);
	last[m->context] = m->tag;
	CHECK(check_pattern(m->data, m->len, m->context * 100000u + (uint32_t)m->tag) == 0,
	      "payload of %u/%d", m->context, m->tag);
	pthread_mutex_lock(&count_lock);
	received++;
	pthread_mutex_unlock(&count_lock);
}

struct worker {
	struct rank_ctx *rc;
	int id;
};

static void *work(void *p)
{
	struct worker *w = p;
	struct rank_ctx *rc = w->rc;
	int other = 1 - rc->rank;
	uint32_t rng = (uint32_t)(w->id * 31 + rc->rank + 1);
	for (int i = 1; i <= PER_THREAD; i++) {
		rng = rng * 1103515245u + 12345u;
		size_t len = (rng >> 8) % 4 == 0 ? (rng >> 4) % (256u << 10) : (rng >> 4) % 2000;
		unsigned char *buf = malloc(len ? len : 1);
		fill_pattern(buf, len, (uint32_t)w->id * 100000u + (uint32_t)i);
		struct iovec iov = {buf, len};
		int r = sctpt_send(rc->ep, rc->peer[other], (uint32_t)w->id, i, 0, &iov, 1, buf);
		CHECK(r >= 0, "thread %d send %d: %d", w->id, i, r);
		if (r == 1)
			free(buf);
		sctpt_progress(rc->ep);
	}
	for (int spins = 0; spins < 200000; spins++) {
		pthread_mutex_lock(&count_lock);
		int done = received == THREADS * PER_THREAD;
		pthread_mutex_unlock(&count_lock);
		if (done && !sctpt_pending(rc->ep, -1))
			break;
		sctpt_wait(rc->ep, 1);
	}
	return NULL;
}

static int body(struct rank_ctx *rc)
{
	pthread_t t[THREADS];
	struct worker w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i].rc = rc;
		w[i].id = i;
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(received == THREADS * PER_THREAD, "rank %d received %d of %d", rc->rank, received,
	      THREADS * PER_THREAD);
	harness_barrier(rc);
	printf("rank %d: %d messages from %d threads, in order per context\n", rc->rank, received,
	       THREADS);
	return 0;
}

int main(void)
{
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.handler.complete = on_complete;
	return harness_run(2, 120, &cfg, body);
}
