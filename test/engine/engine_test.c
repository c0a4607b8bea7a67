/* The engine tests' two-rank runner (engine_test.h). */
#include "engine_test.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
	pthread_barrier_t barrier;
	int arrived, generation;
	char cards[2][SCTPT_CARD_MAX];
};
static struct shared *g_sh;

void engine_config(struct sctpt_config *cfg)
{
	setenv("SCTPT_SHM", "0", 1); /* same-host peers too go through the engine */
	sctpt_config_init(cfg);
	cfg->addrs = "127.0.0.1";
}

void pair_barrier(struct pair_ctx *pc)
{
	int gen = __atomic_load_n(&g_sh->generation, __ATOMIC_ACQUIRE);
	if (__atomic_add_fetch(&g_sh->arrived, 1, __ATOMIC_ACQ_REL) == 2) {
		__atomic_store_n(&g_sh->arrived, 0, __ATOMIC_RELEASE);
		__atomic_add_fetch(&g_sh->generation, 1, __ATOMIC_ACQ_REL);
		return;
	}
	while (__atomic_load_n(&g_sh->generation, __ATOMIC_ACQUIRE) == gen)
		sctpt_wait(pc->ep, 1);
}

/* Eight bytes per xorshift64 step: fast enough not to be what a transfer test measures. */
static uint64_t pattern_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

void fill_pattern(unsigned char *buf, size_t len, uint32_t seed)
{
	uint64_t x = (uint64_t)seed * 0x9e3779b97f4a7c15ull + 1, v;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		v = pattern_next(&x);
		memcpy(buf + i, &v, 8);
	}
	v = pattern_next(&x);
	memcpy(buf + i, &v, len - i);
}

int check_pattern(const unsigned char *buf, size_t len, uint32_t seed)
{
	uint64_t x = (uint64_t)seed * 0x9e3779b97f4a7c15ull + 1, v;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		v = pattern_next(&x);
		if (memcmp(buf + i, &v, 8) != 0)
			return -1;
	}
	v = pattern_next(&x);
	return memcmp(buf + i, &v, len - i) != 0 ? -1 : 0;
}

static int rank_main(int rank, const char *engine, struct sctpt_config cfg,
		     int (*body)(struct pair_ctx *))
{
	struct pair_ctx pc = {.rank = rank, .engine = engine};
	cfg.backend = engine;
	cfg.handler.arg = &pc;
	int e = sctpt_open(&cfg, &pc.ep);
	CHECK(e == 0, "rank %d: sctpt_open on %s: %d", rank, engine, e);
	sctpt_card(pc.ep, g_sh->cards[rank], SCTPT_CARD_MAX);
	pthread_barrier_wait(&g_sh->barrier);
	pc.peer = sctpt_peer_add(pc.ep, g_sh->cards[1 - rank]);
	CHECK(pc.peer >= 0, "rank %d: peer_add(%s)", rank, g_sh->cards[1 - rank]);
	pthread_barrier_wait(&g_sh->barrier);
	int result = body(&pc);
	sctpt_close(pc.ep);
	return result;
}

int pair_run(const char *engines[2], int seconds, struct sctpt_config *cfg,
	     int (*body)(struct pair_ctx *))
{
	pid_t pids[2];
	pthread_barrierattr_t ba;
	int failed = 0;
	g_sh = mmap(NULL, sizeof(*g_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_sh == MAP_FAILED)
		return 1;
	memset(g_sh, 0, sizeof(*g_sh));
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&g_sh->barrier, &ba, 2);
	fflush(NULL);
	for (int r = 0; r < 2; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			alarm((unsigned)seconds);
			int rc = rank_main(r, engines[r], *cfg, body);
			fflush(NULL);
			_exit(rc);
		}
	}
	for (int r = 0; r < 2; r++) {
		int st;
		if (waitpid(pids[r], &st, 0) < 0)
			st = -1;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "rank %d (%s): %s %d\n", r, engines[r],
				WIFSIGNALED(st) ? "killed by signal" : "exit status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			failed = 1;
		}
	}
	munmap(g_sh, sizeof(*g_sh));
	return failed;
}
