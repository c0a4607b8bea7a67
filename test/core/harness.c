#include "harness.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RANKS 64

struct shared {
	pthread_barrier_t barrier;
	int arrived, generation; /* the progress-driven barrier */
	char cards[MAX_RANKS][SCTPT_CARD_MAX];
};

static struct shared *g_sh;
int harness_killed_rank = -1;

/* Keeps the endpoint progressing while it waits: a rank blocked without progress would
 * leave its peers' data unacknowledged. */
void harness_barrier(struct rank_ctx *rc)
{
	int gen = __atomic_load_n(&g_sh->generation, __ATOMIC_ACQUIRE);
	if (__atomic_add_fetch(&g_sh->arrived, 1, __ATOMIC_ACQ_REL) == rc->size) {
		__atomic_store_n(&g_sh->arrived, 0, __ATOMIC_RELEASE);
		__atomic_add_fetch(&g_sh->generation, 1, __ATOMIC_ACQ_REL);
		return;
	}
	while (__atomic_load_n(&g_sh->generation, __ATOMIC_ACQUIRE) == gen)
		sctpt_wait(rc->ep, 1);
}

void fill_pattern(unsigned char *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (unsigned char)x;
	}
}

int check_pattern(const unsigned char *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (buf[i] != (unsigned char)x)
			return -1;
	}
	return 0;
}

static int rank_main(int rank, int size, struct sctpt_config cfg, int (*body)(struct rank_ctx *))
{
	struct rank_ctx rc = {.rank = rank, .size = size};
	sctpt_peer_t peers[MAX_RANKS];
	cfg.handler.arg = &rc;
	cfg.ops.arg = &rc;
	int e = sctpt_open(&cfg, &rc.ep);
	CHECK(e == 0, "rank %d: sctpt_open: %d", rank, e);
	sctpt_card(rc.ep, g_sh->cards[rank], SCTPT_CARD_MAX);
	pthread_barrier_wait(&g_sh->barrier);
	for (int r = 0; r < size; r++) {
		peers[r] = -1;
		if (r != rank) {
			peers[r] = sctpt_peer_add(rc.ep, g_sh->cards[r]);
			CHECK(peers[r] >= 0, "rank %d: peer_add(%s)", rank, g_sh->cards[r]);
		}
	}
	rc.peer = peers;
	pthread_barrier_wait(&g_sh->barrier);
	int result = body(&rc);
	sctpt_close(rc.ep);
	return result;
}

int harness_run(int size, int seconds, struct sctpt_config *cfg, int (*body)(struct rank_ctx *))
{
	pid_t pids[MAX_RANKS];
	pthread_barrierattr_t ba;
	int failed = 0;
	if (size < 1 || size > MAX_RANKS)
		return -1;
	g_sh = mmap(NULL, sizeof(*g_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_sh == MAP_FAILED)
		return -1;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&g_sh->barrier, &ba, (unsigned)size);
	fflush(NULL);
	for (int r = 0; r < size; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			alarm((unsigned)seconds);
			int rcode = rank_main(r, size, *cfg, body);
			fflush(NULL);
			_exit(rcode);
		}
	}
	for (int r = 0; r < size; r++) {
		int st;
		if (waitpid(pids[r], &st, 0) < 0)
			st = -1;
		if (r == harness_killed_rank && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			continue;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "rank %d: %s %d\n", r,
				WIFSIGNALED(st) ? "killed by signal" : "exit status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			failed = 1;
		}
	}
	munmap(g_sh, sizeof(*g_sh));
	return failed ? 1 : 0;
}
