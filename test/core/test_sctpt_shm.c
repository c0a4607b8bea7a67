/*
 * Same-host peers through shared memory, between real processes: ring wrap-around with a full
 * and an empty ring, every size class (with the receiver reading large messages from the
 * sender's buffer, and with that forced off), a message on another stream passing a large one,
 * many senders to one receiver with more ranks than cores, and sleeping on the tripwire.
 * Nothing here depends on how fast the machine is: where a ring must fill, its receiver does
 * not read until told.
 * Also one-sided reads and writes of a peer's memory (sctpt_peer_read/write), and what
 * sctpt_peer_mem says of them.
 * And messages handed to the handler where they lie in the ring, which must not change under
 * it while the sender fills the ring (and the same with that off).
 * And three threads of one receiver progressing at once: each message handed out exactly once,
 * in order, one handler call at a time, lent records given back to the sender in time, small
 * ones among them handed straight from the ring to the handler (sctpt_progress's express).
 * And small messages written into the ring at once (nothing queued), which must never pass
 * a message queued before them: sending order kept on one stream, with pulls and fragments;
 * SCTPT_SEND_NOW sends such a message, and refuses (sending nothing) where it would wait.
 * Usage: test_sctpt_shm [wrap|sizes|sizes_nopull|pass|pass_nopull|many|sleep|token|rw|
 *                       rw_nopull|lend|lend_off|threads|fast|fast_nopull]...
 */
#include "test_sctpt_shm_harness.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void conf_small_ring(int rank, struct sctpt_config *c)
{
	(void)rank;
	c->shm_ring = 4096;
}

static void conf_nopull(int rank, struct sctpt_config *c)
{
	(void)rank;
	c->shm_pull_min = 0;
}

/* Checks the RECV entries of the log from rank `from` (all, if -1): intact, and in tag order
 * per context unless unordered (context 2). Returns how many. */
static int check_recvs(struct sh_rank *r, int from)
{
	int32_t last[256];
	int n = 0;
	for (int i = 0; i < 256; i++)
		last[i] = -1;
	for (int i = 0; i < lg.n; i++) {
		const struct sh_msg *m = &lg.m[i];
		if (m->kind != SCTPT_CQE_RECV || m->status != 0)
			continue;
		if (from >= 0 && m->peer != r->peer[from])
			continue;
		CHECK(m->intact, "rank %d: context %u tag %d (%zu bytes) arrived corrupt", r->rank,
		      m->context, m->tag, m->len);
		CHECK(m->stream != 0, "data on the control stream");
		if (m->context != 2) {
			CHECK(m->tag > last[m->context & 255], "rank %d: context %u: tag %d after %d",
			      r->rank, m->context, m->tag, last[m->context & 255]);
			last[m->context & 255] = m->tag;
		}
		n++;
	}
	return n;
}

/* ---- wrap-around, full, empty: a 4 KiB ring whose receiver stops reading ---- */

#define WRAP_N 300

static size_t wrap_len(int i)
{
	return (size_t)(i * 37) % 3000; /* up to three records each: fragments in the ring */
}

static int body_wrap(struct sh_rank *r)
{
	if (r->rank == 1) {
		int queued = sh_send(r, 0, 1, 0, 0, 0, 1); /* 0: queued until the ring is up */
		CHECK(queued >= 0, "warm-up send");
		queued = !queued;
		sh_wait_flag(r, 0, 1, 1);
		for (int i = 1; i <= WRAP_N; i++) {
			int rc = sh_send(r, 0, 1 + (uint32_t)i % 3, i, 0, wrap_len(i), 1 + i % 3);
			CHECK(rc >= 0, "send %d: %d", i, rc);
			queued += rc == 0;
		}
		for (int k = 0; k < 100; k++)
			sctpt_progress(r->ep);
		struct sctpt_peer_stats *st = sh_stats(r, 0);
		CHECK(st->shm & 1, "rank 1 does not send through shared memory (shm %d)", st->shm);
		CHECK(queued > 1 && sctpt_pending(r->ep, r->peer[0]),
		      "%d of %d sends queued while the receiver reads nothing", queued, WRAP_N);
		CHECK(st->shm_ring_full > 0, "the 4 KiB ring never looked full");
		printf("  sender: %d of %d sends queued behind a full ring\n", queued, WRAP_N);
		sh_set_flag(1, 1);
		sh_drain(r, 0);
		CHECK(lg.sends == queued && lg.sends_failed == 0, "%d send completions for %d queued, "
		      "%d failed", lg.sends, queued, lg.sends_failed);
		sh_barrier(r);
		return 0;
	}
	sh_drain(r, 1); /* the warm-up, from an empty ring */
	sh_set_flag(0, 1);
	sh_wait_flag(r, 1, 1, 0); /* reading nothing meanwhile */
	sh_drain(r, 1 + WRAP_N);
	CHECK(check_recvs(r, 1) == 1 + WRAP_N, "messages");
	for (int i = 0; i < lg.n; i++)
		if (lg.m[i].kind == SCTPT_CQE_RECV)
			CHECK(lg.m[i].len == wrap_len(lg.m[i].tag), "tag %d: %zu bytes", lg.m[i].tag,
			      lg.m[i].len);
	struct sctpt_peer_stats *st = sh_stats(r, 1);
	CHECK(st->shm & 2, "rank 0 does not receive through shared memory (shm %d)", st->shm);
	printf("  receiver: %d messages through the ring, %llu bytes (%d laps at least)\n",
	       lg.recvs, (unsigned long long)st->bytes_recv, (int)(st->bytes_recv / 4096));
	sh_barrier(r);
	return 0;
}

/* ---- every size class, both ways ---- */

static const size_t sizes[] = {0,     1,     7,     16,    47,    48,     63,      64,
			       65,    255,   256,   257,   975,   976,    977,     1024,
			       4095,  4096,  16383, 16384, 16385, 65535,  65536,   65537,
			       70000, 200000, 1u << 20, (4u << 20) + 3};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
static int pulls_expected;

/* Per size: context 1 (the core's buffers, one iovec), context 100 (recv_buf buffers, two),
 * context 2 unordered (forty iovecs: more than a pull can name). */
static void send_sizes(struct sh_rank *r, int to)
{
	for (int i = 0; i < NSIZES; i++) {
		CHECK(sh_send(r, to, 1, i, 0, sizes[i], 1) >= 0, "send %zu", sizes[i]);
		CHECK(sh_send(r, to, SH_OWN_BUF_CTX, i, 0, sizes[i], 2) >= 0, "send %zu", sizes[i]);
		CHECK(sh_send(r, to, 2, i, SCTPT_SEND_UNORDERED, sizes[i], 40) >= 0, "send %zu",
		      sizes[i]);
	}
}

static void check_sizes(struct sh_rank *r, int from)
{
	int seen[3][NSIZES];
	memset(seen, 0, sizeof(seen));
	CHECK(check_recvs(r, from) == 3 * NSIZES, "rank %d: messages", r->rank);
	for (int i = 0; i < lg.n; i++) {
		const struct sh_msg *m = &lg.m[i];
		if (m->kind != SCTPT_CQE_RECV)
			continue;
		int c = m->context == 1 ? 0 : m->context == 2 ? 1 : 2;
		CHECK(m->tag >= 0 && m->tag < NSIZES && m->len == sizes[m->tag], "tag %d: %zu bytes",
		      m->tag, m->len);
		seen[c][m->tag]++;
		/* as over SCTP: a buffer of the handler's own for what does not fit a fragment */
		if (m->context == SH_OWN_BUF_CTX && m->len > 65536)
			CHECK(m->in_own_buf, "%zu bytes not in the handler's buffer", m->len);
	}
	for (int c = 0; c < 3; c++)
		for (int i = 0; i < NSIZES; i++)
			CHECK(seen[c][i] == 1, "size %zu arrived %d times", sizes[i], seen[c][i]);
}

static int body_sizes(struct sh_rank *r)
{
	int other = 1 - r->rank;
	if (r->rank == 1)
		send_sizes(r, 0);
	sh_drain(r, r->rank == 0 ? 3 * NSIZES : 0);
	if (r->rank == 0)
		check_sizes(r, 1);
	sh_barrier(r);
	int got = lg.recvs;
	lg.n = lg.recvs = 0;
	if (r->rank == 0)
		send_sizes(r, 1);
	sh_drain(r, r->rank == 1 ? 3 * NSIZES : 0);
	if (r->rank == 1)
		check_sizes(r, 0);
	struct sctpt_peer_stats *st = sh_stats(r, other);
	CHECK(st->shm == 3, "rank %d: shared memory both ways (shm %d)", r->rank, st->shm);
	CHECK(pulls_expected ? st->shm_pulls > 0 : st->shm_pulls == 0,
	      "rank %d: %llu messages read from our buffers", r->rank,
	      (unsigned long long)st->shm_pulls);
	CHECK(lg.sends_failed == 0 && lg.bufs_back == 0, "failed sends or buffers given back");
	printf("  rank %d: %d + %d messages intact; %llu read straight from our buffers\n",
	       r->rank, got, lg.recvs, (unsigned long long)st->shm_pulls);
	sh_barrier(r);
	return 0;
}

/* ---- a small message on another stream passes a large one ---- */

#define BIG (2u << 20)

static int body_pass(struct sh_rank *r)
{
	if (r->rank == 1) {
		CHECK(sh_send(r, 0, 1, 0, 0, 0, 1) >= 0, "warm-up");
		sh_wait_flag(r, 0, 1, 1);
		CHECK(sh_send(r, 0, 7, 1, 0, BIG, 1) >= 0, "send A");
		CHECK(sh_send(r, 0, 9, 2, 0, 8, 1) >= 0, "send C");
		for (int k = 0; k < 100; k++)
			sctpt_progress(r->ep);
		sh_set_flag(1, 1);
		sh_drain(r, 0);
		sh_barrier(r);
		return 0;
	}
	sh_drain(r, 1);
	sh_set_flag(0, 1);
	sh_wait_flag(r, 1, 1, 0); /* A and C wait in the ring (A in part, without pulls) */
	sh_drain(r, 3);
	CHECK(check_recvs(r, 1) == 3, "messages");
	int a = -1, c = -1;
	for (int i = 0; i < lg.n; i++) {
		if (lg.m[i].kind == SCTPT_CQE_RECV && lg.m[i].context == 7)
			a = i;
		if (lg.m[i].kind == SCTPT_CQE_RECV && lg.m[i].context == 9)
			c = i;
	}
	CHECK(a >= 0 && c >= 0 && c < a, "context 9 waited behind the large message on context 7");
	printf("  the 8-byte message on context 9 came before the 2 MiB one sent ahead of it\n");
	sh_barrier(r);
	return 0;
}

/* ---- many senders, one receiver, more ranks than cores ---- */

#define MANY_RANKS 7
#define MANY_N 150

static size_t many_len(int src, int i)
{
	uint32_t x = (uint32_t)(src * 7919 + i * 104729);
	x ^= x >> 7;
	return x % 10 < 6 ? x % 300 : x % 10 < 9 ? x % 40000 : x % 400000;
}

static int body_many(struct sh_rank *r)
{
	if (r->rank > 0) {
		for (int i = 0; i < MANY_N; i++) {
			int rc = sh_send(r, 0, 3 + (uint32_t)i % 3, r->rank * 100000 + i, 0,
					 many_len(r->rank, i), 1 + i % 4);
			CHECK(rc >= 0, "rank %d send %d: %d", r->rank, i, rc);
			if (i % 16 == 15)
				sctpt_wait(r->ep, 0);
		}
		sh_drain(r, 0);
		sh_barrier(r);
		return 0;
	}
	sh_drain(r, (MANY_RANKS - 1) * MANY_N);
	for (int s = 1; s < MANY_RANKS; s++) {
		CHECK(check_recvs(r, s) == MANY_N, "from rank %d", s);
		CHECK(sh_stats(r, s)->shm & 2, "rank %d's messages did not come through its ring", s);
	}
	for (int i = 0; i < lg.n; i++)
		if (lg.m[i].kind == SCTPT_CQE_RECV) {
			int src = lg.m[i].tag / 100000, k = lg.m[i].tag % 100000;
			CHECK(lg.m[i].len == many_len(src, k), "rank %d message %d: %zu bytes", src, k,
			      lg.m[i].len);
		}
	printf("  %d senders x %d messages, in order per (sender, context) and intact\n",
	       MANY_RANKS - 1, MANY_N);
	sh_barrier(r);
	return 0;
}

/* ---- sleeping on the tripwire ---- */

#define SLEEP_ROUNDS 20

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int body_sleep(struct sh_rank *r)
{
	if (r->rank == 1) {
		CHECK(sh_send(r, 0, 1, 0, 0, 8, 1) >= 0, "warm-up");
		sh_wait_flag(r, 0, 1, 1);
		for (int k = 1; k <= SLEEP_ROUNDS; k++) {
			struct timespec ts = {0, 20 * 1000000L}; /* the receiver goes to sleep */
			nanosleep(&ts, NULL);
			CHECK(sh_send(r, 0, 1, k, 0, 8, 1) >= 0, "send %d", k);
		}
		sh_drain(r, 0);
		uint64_t w = sh_stats(r, 0)->shm_wakeups;
		printf("  sender woke the sleeping receiver %llu times in %d messages\n",
		       (unsigned long long)w, SLEEP_ROUNDS);
		CHECK(w > 0, "the receiver was never woken through its tripwire");
		sh_barrier(r);
		return 0;
	}
	sh_drain(r, 1);
	sh_set_flag(0, 1);
	double t0 = now_s(), c0 = cpu_s();
	while (lg.recvs < 1 + SLEEP_ROUNDS)
		sctpt_wait(r->ep, 1000);
	double wall = now_s() - t0, cpu = cpu_s() - c0;
	printf("  receiver: %.0f ms waiting, %.0f ms of CPU\n", wall * 1e3, cpu * 1e3);
	CHECK(cpu < wall / 2, "the waiting receiver kept the CPU busy: %.3f s of %.3f s", cpu,
	      wall);
	check_recvs(r, 1);
	sh_barrier(r);
	return 0;
}

/* ---- a token around a ring of sleepers: more ranks than cores, all in sctpt_wait ---- */

#define TOKEN_RANKS 6
#define TOKEN_LAPS 100

static int body_token(struct sh_rank *r)
{
	int next = (r->rank + 1) % r->n, prev = (r->rank + r->n - 1) % r->n;
	if (r->rank == 0)
		CHECK(sh_send(r, next, 1, 0, 0, 8, 1) >= 0, "first token");
	for (int lap = 0; lap < TOKEN_LAPS; lap++) {
		int want = lap + 1;
		while (lg.recvs < want)
			sctpt_wait(r->ep, 1000); /* asleep on the tripwire most of the time */
		const struct sh_msg *m = &lg.m[lg.n - 1];
		CHECK(m->peer == r->peer[prev] && m->intact, "token from the wrong rank");
		if (r->rank != 0 || lap + 1 < TOKEN_LAPS)
			CHECK(sh_send(r, next, 1, lap + 1, 0, 8 + (size_t)lap * 100, 1) >= 0, "token");
	}
	sh_drain(r, TOKEN_LAPS);
	uint64_t w = sh_stats(r, next)->shm_wakeups;
	__atomic_add_fetch(&sh->flag[1], (int)w, __ATOMIC_RELAXED);
	sh_barrier(r);
	if (r->rank == 0) {
		int total = __atomic_load_n(&sh->flag[1], __ATOMIC_RELAXED);
		printf("  %d laps of %d ranks; %d wake-ups through tripwires\n", TOKEN_LAPS, r->n,
		       total);
		CHECK(total > 0, "no rank was ever woken through its tripwire");
	}
	sh_barrier(r);
	return 0;
}

/* ---- messages delivered where they lie in the ring (cfg.shm_lend) ---- */

#define LEND_N 2000
static int lend_on, lend_spoiled;

/* Inside the handler, while the sender fills the 4 KiB ring as fast as it can: a message lent
 * from the ring must keep its bytes until the handler returns. */
static void lend_recheck(const struct sctpt_cqe *c)
{
	for (int k = 0; k < 2; k++)
		sched_yield(); /* the sender's turn, if it shares our CPU */
	for (volatile int k = 0; k < 2000; k++)
		;
	lend_spoiled += check_pattern(c->data, c->len, sh_seed(c->context, c->tag, c->len)) != 0;
}

static void conf_lend(int rank, struct sctpt_config *c)
{
	c->shm_ring = 4096; /* records of up to 976 bytes: lent from 257 on */
	c->shm_lend = rank == 0 ? lend_on : 1;
}

static int body_lend(struct sh_rank *r)
{
	if (r->rank == 1) {
		for (int i = 0; i <= LEND_N; i++) {
			uint32_t ctx = 1 + (uint32_t)i % 2; /* 2: unordered */
			size_t len = i ? 260 + (size_t)(i * 53) % 700 : 0;
			CHECK(sh_send(r, 0, ctx, i, ctx == 2 ? SCTPT_SEND_UNORDERED : 0, len, 1 + i % 2) >=
				      0, "send %d", i);
		}
		sh_drain(r, 0);
		sh_barrier(r);
		return 0;
	}
	sh_on_recv = lend_recheck;
	sh_drain(r, LEND_N + 1);
	sh_on_recv = NULL;
	CHECK(check_recvs(r, 1) == LEND_N + 1, "messages missing");
	struct sctpt_peer_stats *st = sh_stats(r, 1);
	CHECK(lend_spoiled == 0, "%d lent messages changed under their handler", lend_spoiled);
	CHECK(lend_on ? st->shm_lent > 0 : st->shm_lent == 0, "%llu messages lent",
	      (unsigned long long)st->shm_lent);
	printf("  %d messages intact, %llu of them read where they lay in the ring\n", LEND_N + 1,
	       (unsigned long long)st->shm_lent);
	sh_barrier(r);
	return 0;
}

/* ---- several threads progressing one receiver ---- */

#define THR_N 4000
#define THR_THREADS 3
static atomic_int thr_inside, thr_overlap;
static atomic_int thr_stop;
static unsigned char thr_seen[THR_N + 1];

/* Two threads in handlers at once, or a message twice, is what dispatching must prevent. */
static void thr_recheck(const struct sctpt_cqe *c)
{
	if (atomic_fetch_add(&thr_inside, 1) != 0)
		atomic_fetch_add(&thr_overlap, 1);
	if (c->tag >= 0 && c->tag <= THR_N)
		thr_seen[c->tag]++;
	sched_yield(); /* the other threads' turn while we are inside */
	for (volatile int k = 0; k < 200; k++)
		;
	atomic_fetch_sub(&thr_inside, 1);
}

static struct sh_rank *thr_rank;

static void conf_threads(int rank, struct sctpt_config *c)
{
	(void)rank;
	c->shm_ring = 64 << 10; /* a few hundred records: batches queue behind the one out */
	c->shm_lend = 1;
}

static void *thr_progress(void *arg)
{
	(void)arg;
	while (!atomic_load(&thr_stop))
		sctpt_progress(thr_rank->ep);
	return NULL;
}

static int body_threads(struct sh_rank *r)
{
	if (r->rank == 1) {
		for (int i = 0; i <= THR_N; i++) {
			uint32_t ctx = 1 + (uint32_t)i % 3; /* 2: unordered */
			if (i == 1) /* the ring is set up: now fill it */
				sh_wait_flag(r, 1, 1, 1);
			/* small (copied into the entry) and lent from the ring */
			size_t len = i % 2 ? (size_t)i % 200 : 260 + (size_t)(i * 53) % 700;
			CHECK(sh_send(r, 0, ctx, i, ctx == 2 ? SCTPT_SEND_UNORDERED : 0, len, 1) >= 0,
			      "send %d", i);
		}
		sh_set_flag(0, 1); /* the ring is full: rank 0 finds many records at once */
		sh_drain(r, 0);
		sh_barrier(r);
		return 0;
	}
	pthread_t t[THR_THREADS];
	sh_on_recv = thr_recheck;
	sh_drain(r, 1);
	sh_set_flag(1, 1);
	sh_wait_flag(r, 0, 1, 0);
	thr_rank = r;
	for (int i = 0; i < THR_THREADS; i++)
		CHECK(pthread_create(&t[i], NULL, thr_progress, NULL) == 0, "thread");
	sh_drain(r, THR_N + 1); /* this thread too, with sctpt_wait */
	atomic_store(&thr_stop, 1);
	for (int i = 0; i < THR_THREADS; i++)
		pthread_join(t[i], NULL);
	sh_on_recv = NULL;
	CHECK(check_recvs(r, 1) == THR_N + 1, "messages missing");
	CHECK(thr_overlap == 0, "%d handler calls overlapped another", thr_overlap);
	for (int i = 0; i <= THR_N; i++)
		CHECK(thr_seen[i] == 1, "message %d handed out %d times", i, thr_seen[i]);
	struct sctpt_peer_stats *st = sh_stats(r, 1);
	printf("  %d messages, each once and in order, to %d threads progressing at once (%llu "
	       "lent, %llu straight to the handler)\n", THR_N + 1, THR_THREADS + 1,
	       (unsigned long long)st->shm_lent, (unsigned long long)st->shm_express);
	sh_barrier(r);
	return 0;
}

/* ---- small messages straight into the ring, and what they must not overtake ---- */

#define FAST_N 1000
#define FAST_ROUNDS 20

/* Every message on one stream: the ring and the queue are then first in, first out for
 * unordered messages too, so the receiver sees exactly the sending order. */
static uint16_t one_stream(void *arg, uint32_t context, int32_t tag, uint16_t nstreams)
{
	(void)arg;
	(void)context;
	(void)tag;
	(void)nstreams;
	return 1;
}

static void conf_fast(int rank, struct sctpt_config *c)
{
	(void)rank;
	c->ops.stream_map = one_stream;
	c->shm_ring = 4096; /* records of up to 976 bytes */
}

/* (and without the core's lock: each rank calls from one thread) */
static void conf_fast_nopull(int rank, struct sctpt_config *c)
{
	conf_fast(rank, c);
	c->shm_pull_min = 0;
	c->single_thread = 1;
}

/* Mixed: mostly small, now and then one larger than a record (a pull, or fragments that
 * fill the ring and wait in their queue). Then rounds of: a pull (or fragments), fragments
 * that fill the ring, the receiver empties the ring while the sender stands still, and small
 * messages that now find room in the ring but must still go after the queued fragments. */
static size_t fast_len(int tag)
{
	if (tag <= FAST_N)
		return tag % 10 == 2 ? 20000 + (size_t)tag : (size_t)(tag * 37) % 250;
	switch ((tag - FAST_N - 1) % 4) {
	case 0: return 20000 + (size_t)tag;
	case 1: return 10000 + (size_t)tag;
	default: return (size_t)tag % 200;
	}
}

static int fast_send(struct sh_rank *r, int tag, unsigned flags, int *queued)
{
	uint32_t ctx = 1 + (uint32_t)tag % 2; /* 2: unordered */
	int rc = sh_send(r, 0, ctx, tag, flags | (ctx == 2 ? SCTPT_SEND_UNORDERED : 0),
			 fast_len(tag), 1 + tag % 3);
	CHECK(rc >= 0 || (rc == -EAGAIN && (flags & SCTPT_SEND_NOW)), "send %d: %d", tag, rc);
	*queued += rc == 0;
	return rc;
}

static int body_fast(struct sh_rank *r)
{
	int last_tag = FAST_N + 4 * FAST_ROUNDS;
	if (r->rank == 1) {
		int fast = 0, queued = 0;
		fast_send(r, 0, 0, &queued);
		sh_wait_flag(r, 0, 1, 1); /* the ring is up */
		CHECK(fast_send(r, 1, SCTPT_SEND_NOW, &queued) == 1, "SEND_NOW to an idle ring");
		fast = 1;
		for (int i = 2; i <= FAST_N; i++) /* rank 0 reads meanwhile */
			fast += fast_send(r, i, 0, &queued) == 1;
		sh_set_flag(3, 1);
		for (int k = 0; k < FAST_ROUNDS; k++) {
			int tag = FAST_N + 1 + 4 * k;
			fast_send(r, tag, 0, &queued);
			fast_send(r, tag + 1, 0, &queued);
			CHECK(sctpt_pending(r->ep, r->peer[0]), "round %d: fragments not queued", k);
			sh_set_flag(1, k + 1);
			sh_wait_flag(r, 2, k + 1, 0); /* rank 0 empties the ring; we stand still */
			/* room in the ring, but fragments queued: not now (nor ever: sent again) */
			CHECK(fast_send(r, tag + 2, SCTPT_SEND_NOW, &queued) == -EAGAIN,
			      "SEND_NOW past queued fragments");
			fast_send(r, tag + 2, 0, &queued);
			fast_send(r, tag + 3, 0, &queued);
		}
		printf("  %d of %d mixed sends done at once; %d rounds of small sends behind queued "
		       "fragments\n", fast, FAST_N, FAST_ROUNDS);
		while (lg.sends < queued) /* pulls complete once read */
			sctpt_wait(r->ep, 5);
		sh_drain(r, 0);
		CHECK(lg.sends == queued && lg.sends_failed == 0, "%d send completions for %d queued",
		      lg.sends, queued);
		sh_barrier(r);
		/* everything read: nothing queued, a small one goes at once again */
		CHECK(sh_send(r, 0, 1, last_tag + 1, 0, 8, 1) == 1, "small send to an idle ring "
		      "queued");
		sh_barrier(r);
		return 0;
	}
	sh_drain(r, 1);
	sh_set_flag(0, 1);
	sh_wait_flag(r, 3, 1, 1);
	for (int k = 0; k < FAST_ROUNDS; k++) {
		sh_wait_flag(r, 1, k + 1, 0); /* reading nothing: the fragments fill the ring */
		/* the sender stands still: two idle progress calls in a row, the ring is empty */
		for (int idle = 0; idle < 2;)
			idle = sctpt_progress(r->ep) ? 0 : idle + 1;
		sh_set_flag(2, k + 1);
	}
	sh_drain(r, 1 + last_tag);
	CHECK(check_recvs(r, 1) == 1 + last_tag, "messages");
	int32_t last = -1;
	for (int i = 0; i < lg.n; i++) {
		const struct sh_msg *m = &lg.m[i];
		if (m->kind != SCTPT_CQE_RECV)
			continue;
		CHECK(m->tag > last, "tag %d (%zu bytes) after %d: out of sending order", m->tag,
		      m->len, last);
		CHECK(m->len == fast_len(m->tag), "tag %d: %zu bytes", m->tag, m->len);
		last = m->tag;
	}
	CHECK(sh_stats(r, 1)->shm_express > 0, "no small message went straight to the handler");
	printf("  %d messages in sending order on one stream (%llu straight to the handler)\n",
	       1 + last_tag, (unsigned long long)sh_stats(r, 1)->shm_express);
	sh_barrier(r);
	sh_drain(r, 2 + last_tag);
	CHECK(lg.m[lg.n - 1].tag == last_tag + 1 && lg.m[lg.n - 1].intact, "the last message");
	sh_barrier(r);
	return 0;
}

/* ---- one-sided reads and writes of a peer's memory ---- */

#define RW_LEN (1u << 20)
static int rw_allowed;

static int body_rw(struct sh_rank *r)
{
	static unsigned char mine[RW_LEN], theirs[RW_LEN];
	if (r->rank == 1) {
		fill_pattern(mine, RW_LEN, 11);
		memset(theirs, 0, RW_LEN);
		sh->addr[0] = (uint64_t)(uintptr_t)mine;
		sh->addr[1] = (uint64_t)(uintptr_t)theirs;
		CHECK(sh_send(r, 0, 1, 0, 0, 8, 1) >= 0, "send"); /* its ring to rank 0 */
		sh_wait_flag(r, 0, 1, 1);
		if (rw_allowed)
			CHECK(check_pattern(theirs, RW_LEN, 12) == 0, "what rank 0 wrote");
		/* our message set up our ring to rank 0, which tried reading us; it sent nothing */
		int mem = sctpt_peer_mem(r->ep, r->peer[0]);
		CHECK(mem == (rw_allowed ? SCTPT_MEM_PEER_READS : 0), "peer_mem of rank 0: %d", mem);
		sh_barrier(r);
		return 0;
	}
	sh_drain(r, 1);
	int mem = sctpt_peer_mem(r->ep, r->peer[1]);
	CHECK(mem == (rw_allowed ? SCTPT_MEM_READ : 0), "peer_mem of rank 1: %d", mem);
	int rc = sctpt_peer_read(r->ep, r->peer[1], theirs, sh->addr[0], RW_LEN);
	if (!rw_allowed) {
		CHECK(rc == -ENOTSUP, "read with pulls off: %d", rc);
		printf("  reads and writes refused with pulls off: %s\n", sctpt_last_error());
	} else {
		CHECK(rc == 0, "read: %d", rc);
		CHECK(check_pattern(theirs, RW_LEN, 1 + 10) == 0, "what was read");
		fill_pattern(mine, RW_LEN, 12);
		CHECK(sctpt_peer_write(r->ep, r->peer[1], mine, sh->addr[1], RW_LEN) == 0, "write");
		rc = sctpt_peer_read(r->ep, r->peer[1], theirs, 0x1000, 64);
		CHECK(rc == -EFAULT, "read of unmapped memory: %d", rc);
		printf("  1 MiB read from and written to rank 1's memory; a bad address: %s\n",
		       sctpt_last_error());
	}
	sh_set_flag(0, 1);
	sh_barrier(r);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *all[] = {"wrap", "sizes", "sizes_nopull", "pass", "pass_nopull",
				    "many", "sleep", "token", "rw", "rw_nopull", "lend", "lend_off",
				    "threads", "fast", "fast_nopull"};
	int failed = 0, n = argc > 1 ? argc - 1 : (int)(sizeof(all) / sizeof(all[0]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < n; i++) {
		const char *t = argc > 1 ? argv[i + 1] : all[i];
		if (!strcmp(t, "wrap")) {
			failed |= sh_run(t, 2, 60, conf_small_ring, body_wrap, -1);
		} else if (!strcmp(t, "sizes")) {
			pulls_expected = 1;
			failed |= sh_run(t, 2, 120, NULL, body_sizes, -1);
		} else if (!strcmp(t, "sizes_nopull")) {
			pulls_expected = 0;
			failed |= sh_run(t, 2, 120, conf_nopull, body_sizes, -1);
		} else if (!strcmp(t, "pass")) {
			failed |= sh_run(t, 2, 60, NULL, body_pass, -1);
		} else if (!strcmp(t, "pass_nopull")) {
			failed |= sh_run(t, 2, 60, conf_nopull, body_pass, -1);
		} else if (!strcmp(t, "many")) {
			failed |= sh_run(t, MANY_RANKS, 180, NULL, body_many, -1);
		} else if (!strcmp(t, "token")) {
			failed |= sh_run(t, TOKEN_RANKS, 120, NULL, body_token, -1);
		} else if (!strcmp(t, "rw")) {
			rw_allowed = 1;
			failed |= sh_run(t, 2, 60, NULL, body_rw, -1);
		} else if (!strcmp(t, "rw_nopull")) {
			rw_allowed = 0;
			failed |= sh_run(t, 2, 60, conf_nopull, body_rw, -1);
		} else if (!strcmp(t, "lend")) {
			lend_on = 1;
			failed |= sh_run(t, 2, 120, conf_lend, body_lend, -1);
		} else if (!strcmp(t, "threads")) {
			failed |= sh_run(t, 2, 120, conf_threads, body_threads, -1);
		} else if (!strcmp(t, "lend_off")) {
			lend_on = 0;
			failed |= sh_run(t, 2, 120, conf_lend, body_lend, -1);
		} else if (!strcmp(t, "fast")) {
			failed |= sh_run(t, 2, 120, conf_fast, body_fast, -1);
		} else if (!strcmp(t, "fast_nopull")) {
			failed |= sh_run(t, 2, 120, conf_fast_nopull, body_fast, -1);
		} else if (!strcmp(t, "sleep")) {
			failed |= sh_run(t, 2, 60, NULL, body_sleep, -1);
		} else {
			fprintf(stderr, "unknown test %s\n", t);
			return 2;
		}
	}
	return failed;
}
