/*
 * The core's shared-memory path between two processes against the same ring pattern written
 * naively: a ring per direction in shared memory whose every look and every copy takes a
 * process-shared mutex, with both positions published at once and read every time. OSU
 * methodology (osu_latency, osu_bw): one-way latency from thousands of ping-pongs after a
 * warm-up (the median of pieces of 100), and streaming bandwidth from windows of 64
 * back-to-back sends closed by a 4-byte ack; sizes 0 B (latency; 1 B bandwidth) to 4 MiB.
 * Every stack busy-polls, as MPI does. Each repetition runs every stack at every size,
 * alternating, so all see the same machine; the table gives the median per size and the gains of "core" and "core-ring" over "naive"
 * (how many times lower the latency, or higher the bandwidth; above 1: better).
 *
 * Stacks: "core" (sctpt with its defaults: large messages read by the receiver from the
 * sender's buffer), "core-ring" (cfg.shm_pull_min 0: everything through the ring), "naive".
 * The receivers copy each message into their own buffer (the core: recv_buf for what is
 * larger than a fragment, a copy of the entry's data below).
 *
 * Usage: shm_bench [-r REPS] [-q SCALE] [-m MAX] [-n MIN] [-t latency|bw|both] [-s STACKS]
 * (STACKS: a comma-separated subset of core,core-ring,naive, for profiling one)
 */
#include "sctpt.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE (4u << 20)
#define LARGE 8192
#define WINDOW 64
#define NRING (128u << 10) /* the naive ring: as large as the core's default */
#define MAX_REPS 15
#define NSIZES 24
#define NSTACKS 3

static const char *stack_name[NSTACKS] = {"core", "core-ring", "naive"};
static int stacks = 7; /* bit s: stack s runs */

/* ---- the naive ring: one mutex around everything ---- */

struct nring {
	pthread_mutex_t mu;
	uint64_t head, tail; /* bytes read, written */
	uint8_t data[NRING];
};

static void nr_put(struct nring *r, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	uint64_t hdr = len;
	size_t done = 0, total = sizeof(hdr) + len;
	while (done < total) {
		pthread_mutex_lock(&r->mu);
		size_t room = NRING - (size_t)(r->tail - r->head);
		while (room && done < total) {
			size_t off = (size_t)(r->tail % NRING), k = NRING - off;
			const uint8_t *src = done < sizeof(hdr) ? (const uint8_t *)&hdr + done :
								    b + done - sizeof(hdr);
			size_t left = done < sizeof(hdr) ? sizeof(hdr) - done : total - done;
			k = k < room ? k : room;
			k = k < left ? k : left;
			memcpy(r->data + off, src, k);
			r->tail += k;
			room -= k;
			done += k;
		}
		pthread_mutex_unlock(&r->mu);
	}
}

/* Takes one message into buf (at most cap bytes); returns its length, or -1 if none yet. */
static long nr_get(struct nring *r, void *buf, size_t cap)
{
	uint64_t hdr;
	pthread_mutex_lock(&r->mu);
	if (r->tail - r->head < sizeof(hdr)) {
		pthread_mutex_unlock(&r->mu);
		return -1;
	}
	for (size_t i = 0; i < sizeof(hdr); i++)
		((uint8_t *)&hdr)[i] = r->data[(r->head + i) % NRING];
	r->head += sizeof(hdr);
	pthread_mutex_unlock(&r->mu);
	size_t done = 0;
	while (done < hdr) {
		pthread_mutex_lock(&r->mu);
		while (r->tail != r->head && done < hdr) {
			size_t off = (size_t)(r->head % NRING), k = NRING - off;
			size_t avail = (size_t)(r->tail - r->head), left = (size_t)hdr - done;
			k = k < avail ? k : avail;
			k = k < left ? k : left;
			if (done + k <= cap)
				memcpy((uint8_t *)buf + done, r->data + off, k);
			r->head += k;
			done += k;
		}
		pthread_mutex_unlock(&r->mu);
	}
	return (long)hdr;
}

/* ---- shared state ---- */

struct shared {
	pthread_barrier_t bar;
	char card[2][2][SCTPT_CARD_MAX];    /* [stack][rank] */
	struct nring ring[2];               /* ring[r]: to rank r */
	double res[2][NSIZES][MAX_REPS][NSTACKS]; /* [test][size][rep][stack] */
};
static struct shared *g;

/* ---- the core ---- */

static struct {
	int recvs, sends_pending;
	uint8_t *rbuf;
} cs;

static void *c_recv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
			void **cookie)
{
	(void)arg, (void)peer, (void)context, (void)tag;
	*cookie = cs.rbuf;
	return len <= MAX_SIZE ? cs.rbuf : NULL;
}

static void c_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	if (c->kind == SCTPT_CQE_RECV && c->status == 0) {
		if (!c->cookie && c->len)
			memcpy(cs.rbuf, c->data, c->len); /* into the receiver's buffer */
		cs.recvs++;
	} else if (c->kind == SCTPT_CQE_SEND) {
		cs.sends_pending--;
	} else if (c->kind == SCTPT_CQE_EVENT && c->ev.type == SCTPT_EV_ASSOC_DOWN) {
		fprintf(stderr, "shm_bench: %s\n", c->ev.what);
		exit(1);
	}
}

struct core {
	struct sctpt_ep *ep;
	sctpt_peer_t peer;
};

static void c_send(struct core *c, const void *buf, size_t len)
{
	struct iovec iov = {(void *)buf, len};
	int rc = sctpt_send(c->ep, c->peer, 1, 1, 0, &iov, 1, NULL);
	if (rc < 0) {
		fprintf(stderr, "shm_bench: sctpt_send: %s\n", sctpt_last_error());
		exit(1);
	}
	cs.sends_pending += rc == 0;
}

static void c_wait_recvs(struct core *c, int n)
{
	while (cs.recvs < n)
		sctpt_progress(c->ep);
}

static void c_wait_sends(struct core *c)
{
	while (cs.sends_pending > 0)
		sctpt_progress(c->ep);
}

/* ---- timing ---- */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double q = 1;

static int iters(int small, int large, size_t size, int skip)
{
	int n = size > LARGE ? large : small;
	n = (int)(n * q);
	return n < 1 ? 1 : skip ? (n / 100 > 1 ? n / 100 : 1) : n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One-way latency (us) of stack s at size, measured by rank 0: the median of the loop cut in
 * pieces of 100 ping-pongs (the mean follows whoever else had the CPU on a shared machine). */
static double latency(int rank, int s, struct core *c, uint8_t *sbuf, uint8_t *rbuf, size_t size)
{
	int loop = iters(10000, 1000, size, 0), skip = iters(10000, 1000, size, 1);
	int piece = loop < 100 ? loop : 100, np = 0;
	double *pt = malloc(sizeof(double) * (size_t)(loop / piece + 1)), tp = 0;
	for (int i = 0; i < skip + loop; i++) {
		if (i >= skip && (i - skip) % piece == 0) {
			double t = now();
			if (i > skip)
				pt[np++] = (t - tp) * 1e6 / (2.0 * piece);
			tp = t;
		}
		if (s == 2) {
			if (rank == 0) {
				nr_put(&g->ring[1], sbuf, size);
				while (nr_get(&g->ring[0], rbuf, MAX_SIZE) < 0)
					;
			} else {
				while (nr_get(&g->ring[1], rbuf, MAX_SIZE) < 0)
					;
				nr_put(&g->ring[0], sbuf, size);
			}
		} else if (rank == 0) {
			c_send(c, sbuf, size);
			c_wait_recvs(c, cs.recvs + 1);
		} else {
			c_wait_recvs(c, cs.recvs + 1);
			c_send(c, sbuf, size);
		}
	}
	pt[np++] = (now() - tp) * 1e6 / (2.0 * piece);
	qsort(pt, (size_t)np, sizeof(*pt), cmp);
	double t = pt[np / 2];
	free(pt);
	if (s != 2)
		c_wait_sends(c);
	return t;
}

/* Streaming bandwidth (MB/s) of stack s at size, measured by rank 0 (the sender). */
static double bandwidth(int rank, int s, struct core *c, uint8_t *sbuf, uint8_t *rbuf,
			size_t size)
{
	int loop = iters(100, 20, size, 0), skip = iters(1000, 200, size, 1);
	double t0 = 0;
	for (int i = 0; i < skip + loop; i++) {
		if (i == skip)
			t0 = now();
		if (s == 2) {
			if (rank == 0) {
				for (int w = 0; w < WINDOW; w++)
					nr_put(&g->ring[1], sbuf, size);
				while (nr_get(&g->ring[0], rbuf, MAX_SIZE) < 0)
					;
			} else {
				for (int w = 0; w < WINDOW; w++)
					while (nr_get(&g->ring[1], rbuf, MAX_SIZE) < 0)
						;
				nr_put(&g->ring[0], sbuf, 4);
			}
		} else if (rank == 0) {
			for (int w = 0; w < WINDOW; w++)
				c_send(c, sbuf, size);
			c_wait_recvs(c, cs.recvs + 1);
			c_wait_sends(c);
		} else {
			c_wait_recvs(c, cs.recvs + WINDOW);
			c_send(c, sbuf, 4);
			c_wait_sends(c);
		}
	}
	return (double)size * WINDOW * loop / (now() - t0) / 1e6;
}

static size_t sizes[NSIZES];
static int nsizes;

static int rank_main(int rank, int reps, int tests)
{
	struct core cores[2];
	uint8_t *sbuf = malloc(MAX_SIZE), *rbuf = malloc(MAX_SIZE);
	cs.rbuf = rbuf;
	memset(sbuf, 0xa5, MAX_SIZE);
	memset(rbuf, 0, MAX_SIZE);
	for (int s = 0; s < 2; s++) {
		struct sctpt_config cfg;
		sctpt_config_init(&cfg);
		cfg.addrs = "127.0.0.1";
		cfg.shm = 1;
		cfg.handler.complete = c_complete;
		cfg.handler.recv_buf = c_recv_buf;
		if (s == 1)
			cfg.shm_pull_min = 0;
		if (sctpt_open(&cfg, &cores[s].ep) != 0) {
			fprintf(stderr, "shm_bench: sctpt_open: %s\n", sctpt_last_error());
			return 1;
		}
		sctpt_card(cores[s].ep, g->card[s][rank], SCTPT_CARD_MAX);
	}
	pthread_barrier_wait(&g->bar);
	for (int s = 0; s < 2; s++)
		cores[s].peer = sctpt_peer_add(cores[s].ep, g->card[s][1 - rank]);
	pthread_barrier_wait(&g->bar);
	for (int rep = 0; rep < reps; rep++) {
		for (int t = 0; t < 2; t++) {
			if (!(tests & (1 << t)))
				continue;
			for (int k = 0; k < nsizes; k++) {
				size_t size = sizes[k];
				if (t == 1 && size == 0)
					continue;
				for (int s0 = 0; s0 < NSTACKS; s0++) {
					int s = (s0 + rep) % NSTACKS; /* a different one first each time */
					struct core *c = s < 2 ? &cores[s] : NULL;
					if (!(stacks & (1 << s)))
						continue;
					pthread_barrier_wait(&g->bar);
					double v = t == 0 ? latency(rank, s, c, sbuf, rbuf, size) :
							    bandwidth(rank, s, c, sbuf, rbuf, size);
					if (rank == 0)
						g->res[t][k][rep][s] = v;
				}
			}
		}
	}
	pthread_barrier_wait(&g->bar);
	for (int s = 0; s < 2; s++) {
		struct sctpt_peer_stats st;
		if (rank == 0 && (stacks & (1 << s)) &&
		    sctpt_peer_stats(cores[s].ep, cores[s].peer, &st) == 0 && !(st.shm & 1)) {
			fprintf(stderr, "shm_bench: %s did not go through shared memory\n",
				stack_name[s]);
			return 1;
		}
		sctpt_close(cores[s].ep);
	}
	free(sbuf);
	free(rbuf);
	return 0;
}

static double median(int t, int k, int s, int reps)
{
	double v[MAX_REPS];
	for (int r = 0; r < reps; r++)
		v[r] = g->res[t][k][r][s];
	qsort(v, (size_t)reps, sizeof(v[0]), cmp);
	return reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
}

int main(int argc, char **argv)
{
	int reps = 5, tests = 3, c;
	size_t min = 0, max = MAX_SIZE;
	while ((c = getopt(argc, argv, "r:q:m:n:t:s:")) != -1) {
		switch (c) {
		case 'r': reps = atoi(optarg); break;
		case 'q': q = strtod(optarg, NULL); break;
		case 'm': max = strtoul(optarg, NULL, 0); break;
		case 'n': min = strtoul(optarg, NULL, 0); break;
		case 't': tests = !strcmp(optarg, "latency") ? 1 : !strcmp(optarg, "bw") ? 2 : 3; break;
		case 's':
			stacks = 0;
			for (int k = 0; k < NSTACKS; k++) {
				const char *p = strstr(optarg, stack_name[k]);
				size_t l = strlen(stack_name[k]);
				/* "core" also matches inside "core-ring": only whole items */
				while (p && ((p != optarg && p[-1] != ',') || (p[l] && p[l] != ',')))
					p = strstr(p + 1, stack_name[k]);
				stacks |= p ? 1 << k : 0;
			}
			break;
		default:
			fprintf(stderr, "usage: %s [-r reps] [-q scale] [-m max] [-n min] "
				"[-t latency|bw|both] [-s core,core-ring,naive]\n", argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS || max > MAX_SIZE) {
		fprintf(stderr, "shm_bench: 1..%d repetitions, sizes up to %u\n", MAX_REPS, MAX_SIZE);
		return 2;
	}
	for (size_t s = 0; s <= max && nsizes < NSIZES; s = s ? 2 * s : 1)
		if (s >= min)
			sizes[nsizes++] = s;
	g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g == MAP_FAILED)
		return 1;
	pthread_barrierattr_t ba;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&g->bar, &ba, 2);
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	for (int r = 0; r < 2; r++)
		pthread_mutex_init(&g->ring[r].mu, &ma);
	pid_t pid[2];
	for (int r = 0; r < 2; r++) {
		fflush(NULL);
		if ((pid[r] = fork()) == 0)
			_exit(rank_main(r, reps, tests));
	}
	int bad = 0;
	for (int r = 0; r < 2; r++) {
		int st;
		waitpid(pid[r], &st, 0);
		bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	if (bad)
		return 1;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double load[1] = {0};
	getloadavg(load, 1);
	printf("# shm_bench: 2 processes, busy-polling; median of %d repetitions, stacks "
	       "alternating; %ld CPUs, load %.1f (a shared machine)\n", reps, ncpu, load[0]);
	const char *unit[2] = {"one-way latency, us", "bandwidth, MB/s"};
	for (int t = 0; t < 2; t++) {
		if (!(tests & (1 << t)))
			continue;
		printf("# %s\n%-8s %10s %10s %10s %12s %12s\n", unit[t], "size", stack_name[0],
		       stack_name[1], stack_name[2], "core gain", "ring gain");
		for (int k = 0; k < nsizes; k++) {
			if (t == 1 && sizes[k] == 0)
				continue;
			double m[NSTACKS];
			for (int s = 0; s < NSTACKS; s++)
				m[s] = median(t, k, s, reps);
			/* ratios say how many times better the core is (0: a stack not run) */
			double r0 = !m[0] || !m[2] ? 0 : t == 0 ? m[2] / m[0] : m[0] / m[2];
			double r1 = !m[1] || !m[2] ? 0 : t == 0 ? m[2] / m[1] : m[1] / m[2];
			printf("%-8zu %10.2f %10.2f %10.2f %12.2f %12.2f\n", sizes[k], m[0], m[1], m[2],
			       r0, r1);
		}
	}
	return 0;
}
