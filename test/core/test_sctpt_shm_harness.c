#include "test_sctpt_shm_harness.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct sh_shared *sh;
struct sh_log lg;
void (*sh_card_filter)(int rank, int peer, char *card);
static pthread_barrier_t *g_bar;
static struct sctpt_peer_stats g_st;

uint32_t sh_seed(uint32_t context, int32_t tag, size_t len)
{
	return context * 2654435761u ^ (uint32_t)tag * 40503u ^ (uint32_t)len;
}

static void *on_recv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
			 void **cookie)
{
	(void)arg, (void)peer, (void)tag;
	if (context < SH_OWN_BUF_CTX)
		return NULL;
	*cookie = malloc(len ? len : 1);
	return *cookie;
}

void (*sh_on_recv)(const struct sctpt_cqe *c);

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	CHECK(lg.n < SH_MSGS, "completion log full");
	struct sh_msg *m = &lg.m[lg.n++];
	memset(m, 0, sizeof(*m));
	m->kind = c->kind;
	m->status = c->status;
	m->peer = c->peer;
	m->context = c->context;
	m->tag = c->tag;
	m->stream = c->stream;
	m->len = c->len;
	m->cookie = c->cookie;
	switch (c->kind) {
	case SCTPT_CQE_RECV:
		if (c->status != 0) {
			lg.bufs_back++;
			free(c->cookie);
			break;
		}
		lg.recvs++;
		m->intact = check_pattern(c->data, c->len, sh_seed(c->context, c->tag, c->len)) == 0;
		m->in_own_buf = c->cookie && c->data == c->cookie;
		if (m->intact && sh_on_recv)
			sh_on_recv(c);
		free(c->cookie);
		break;
	case SCTPT_CQE_SEND:
		lg.sends++;
		lg.sends_failed += c->status != 0;
		free(c->cookie);
		break;
	case SCTPT_CQE_EVENT:
		m->ev = c->ev.type;
		m->ev_error = c->ev.error;
		m->peer = c->ev.peer;
		lg.downs += c->ev.type == SCTPT_EV_ASSOC_DOWN;
		lg.closed += c->ev.type == SCTPT_EV_PEER_CLOSED;
		lg.ups += c->ev.type == SCTPT_EV_ASSOC_UP;
		if (c->ev.type == SCTPT_EV_ASSOC_DOWN)
			fprintf(stderr, "  event: %s [%s]\n", c->ev.what, sctpt_last_error());
		break;
	}
}

void sh_barrier(struct sh_rank *r)
{
	int gen = __atomic_load_n(&sh->generation, __ATOMIC_ACQUIRE);
	if (__atomic_add_fetch(&sh->arrived, 1, __ATOMIC_ACQ_REL) == r->n) {
		__atomic_store_n(&sh->arrived, 0, __ATOMIC_RELEASE);
		__atomic_add_fetch(&sh->generation, 1, __ATOMIC_ACQ_REL);
		return;
	}
	while (__atomic_load_n(&sh->generation, __ATOMIC_ACQUIRE) == gen)
		sctpt_wait(r->ep, 1);
}

void sh_set_flag(int i, int v)
{
	__atomic_store_n(&sh->flag[i], v, __ATOMIC_RELEASE);
}

void sh_wait_flag(struct sh_rank *r, int i, int v, int progress)
{
	while (__atomic_load_n(&sh->flag[i], __ATOMIC_ACQUIRE) < v) {
		if (progress) {
			sctpt_wait(r->ep, 1);
		} else {
			struct timespec ts = {0, 200000};
			nanosleep(&ts, NULL);
		}
	}
}

int sh_send(struct sh_rank *r, int to, uint32_t context, int32_t tag, unsigned flags, size_t len,
	    int iovcnt)
{
	struct iovec iov[64];
	unsigned char *buf = malloc(len ? len : 1);
	CHECK(buf && iovcnt >= 1 && iovcnt <= 64, "sh_send");
	fill_pattern(buf, len, sh_seed(context, tag, len));
	size_t off = 0;
	for (int i = 0; i < iovcnt; i++) { /* uneven pieces, some empty */
		size_t k = i == iovcnt - 1 ? len - off : i % 3 == 1 ? 0 : (len - off) / (size_t)(iovcnt - i);
		iov[i].iov_base = buf + off;
		iov[i].iov_len = k;
		off += k;
	}
	int rc = sctpt_send(r->ep, r->peer[to], context, tag, flags, iov, iovcnt, buf);
	if (rc != 0)
		free(buf);
	return rc;
}

void sh_drain(struct sh_rank *r, int want_recvs)
{
	while (lg.recvs < want_recvs || sctpt_pending(r->ep, -1))
		sctpt_wait(r->ep, 5);
}

struct sctpt_peer_stats *sh_stats(struct sh_rank *r, int to)
{
	CHECK(sctpt_peer_stats(r->ep, r->peer[to], &g_st) == 0, "peer stats of rank %d", to);
	return &g_st;
}

static int rank_main(int rank, int n, void (*conf)(int, struct sctpt_config *),
		     int (*body)(struct sh_rank *))
{
	struct sh_rank r = {.rank = rank, .n = n};
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.shm = 1; /* whatever SCTPT_SHM says: these tests are about it */
	cfg.handler.complete = on_complete;
	cfg.handler.recv_buf = on_recv_buf;
	if (conf)
		conf(rank, &cfg);
	memset(&lg, 0, sizeof(lg));
	CHECK(sctpt_open(&cfg, &r.ep) == 0, "rank %d: sctpt_open", rank);
	sctpt_card(r.ep, sh->cards[rank], SCTPT_CARD_MAX);
	pthread_barrier_wait(g_bar);
	for (int i = 0; i < n; i++) {
		r.peer[i] = -1;
		if (i != rank) {
			char card[SCTPT_CARD_MAX];
			snprintf(card, sizeof(card), "%s", sh->cards[i]);
			if (sh_card_filter)
				sh_card_filter(rank, i, card);
			r.peer[i] = sctpt_peer_add(r.ep, card);
			CHECK(r.peer[i] >= 0, "rank %d: peer_add(%s)", rank, card);
		}
	}
	pthread_barrier_wait(g_bar);
	int rc = body(&r);
	sctpt_close(r.ep);
	return rc;
}

int sh_run(const char *name, int n, int seconds, void (*conf)(int rank, struct sctpt_config *),
	   int (*body)(struct sh_rank *), int killed)
{
	pid_t pids[SH_MAX];
	pthread_barrierattr_t ba;
	int failed = 0;
	size_t len = sizeof(*sh) + sizeof(pthread_barrier_t);
	void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || n > SH_MAX)
		return 1;
	sh = mem;
	g_bar = (pthread_barrier_t *)(sh + 1);
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(g_bar, &ba, (unsigned)n);
	printf("%s: %d ranks\n", name, n);
	fflush(NULL);
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			alarm((unsigned)seconds);
			int rc = rank_main(i, n, conf, body);
			fflush(NULL);
			_exit(rc);
		}
	}
	for (int i = 0; i < n; i++) {
		int st;
		if (waitpid(pids[i], &st, 0) < 0)
			st = -1;
		if (i == killed && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			continue;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "%s: rank %d %s %d\n", name, i,
				WIFSIGNALED(st) ? "killed by signal" : "exit status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			failed = 1;
		}
	}
	munmap(mem, len);
	printf("%s: %s\n", name, failed ? "FAILED" : "ok");
	fflush(NULL);
	return failed;
}
