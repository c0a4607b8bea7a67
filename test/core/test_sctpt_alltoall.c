/*
 * All-to-all over real usrsctp associations on loopback: every rank sends every other rank
 * messages of random sizes (0 B..4 MiB) with random tags over three contexts and all
 * streams; every payload is checked, and per (source, context) messages must arrive in the
 * order they were sent. Usage: test_sctpt_alltoall NRANKS MSGS_PER_PAIR
 */
#include "harness.h"

#include <errno.h>
#include <string.h>

#define NCTX 3
#define MAX_RANKS 64

struct state {
	int received, expected;
	int last_j[MAX_RANKS][NCTX];
	int streams_seen[SCTPT_MAX_STREAMS];
	int rank;
};
static struct state st;
static int per_pair;

static uint32_t seed_of(int src, int dst, int j)
{
	return (uint32_t)(src * 1000003 + dst * 7919 + j * 31 + 17);
}

static size_t size_of(uint32_t *rng)
{
	*rng = *rng * 1103515245u + 12345u;
	uint32_t r = (*rng >> 8) % 100, v = *rng >> 3;
	if (r < 40)
		return v % 65;
	if (r < 70)
		return 65 + v % 4032;
	if (r < 92)
		return 4097 + v % 200000;
	return 200000 + v % ((4u << 20) - 200000 + 1);
}

static void on_recv(struct rank_ctx *rc, const struct sctpt_cqe *m)
{
	int src = -1;
	CHECK(m->status == 0, "rank %d: receive failed: %d", rc->rank, m->status);
	for (int r = 0; r < rc->size; r++)
		if (r != rc->rank && rc->peer[r] == m->peer)
			src = r;
	CHECK(src >= 0, "message from unknown peer %d", m->peer);
	int j = m->tag & 0xfff;
	CHECK(m->context < NCTX, "context %u", m->context);
	CHECK(j > st.last_j[src][m->context],
	      "rank %d: from %d context %u: message %d after %d (order broken)", rc->rank, src,
	      m->context, j, st.last_j[src][m->context]);
	st.last_j[src][m->context] = j;
	CHECK(check_pattern(m->data, m->len, seed_of(src, rc->rank, j)) == 0,
	      "rank %d: payload of message %d from %d (%zu bytes) corrupt", rc->rank, j, src, m->len);
	st.streams_seen[m->stream]++;
	st.received++;
}

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	switch (c->kind) {
	case SCTPT_CQE_RECV:
		on_recv(arg, c);
		break;
	case SCTPT_CQE_SEND:
		CHECK(c->status == 0, "send failed: %d", c->status);
		free(c->cookie);
		break;
	case SCTPT_CQE_EVENT:
		break;
	}
}

static int body(struct rank_ctx *rc)
{
	int total = per_pair * (rc->size - 1), sent = 0;
	uint32_t rng = (uint32_t)rc->rank * 7777u + 1;
	memset(&st, 0, sizeof(st));
	for (int s = 0; s < MAX_RANKS; s++)
		for (int c = 0; c < NCTX; c++)
			st.last_j[s][c] = -1;
	st.expected = total;
	while (sent < total || st.received < st.expected || sctpt_pending(rc->ep, -1)) {
		if (sent < total) {
			int dst = (rc->rank + 1 + sent % (rc->size - 1)) % rc->size;
			int j = sent / (rc->size - 1);
			size_t len = size_of(&rng);
			unsigned char *buf = malloc(len ? len : 1);
			fill_pattern(buf, len, seed_of(rc->rank, dst, j));
			struct iovec iov[2] = {{buf, len / 3}, {buf + len / 3, len - len / 3}};
			rng = rng * 1103515245u + 12345u;
			int32_t tag = (int32_t)(((rng >> 4) & 0x7ffff) << 12 | (uint32_t)j);
			int r = sctpt_send(rc->ep, rc->peer[dst], (uint32_t)(j % NCTX), tag, 0, iov, 2, buf);
			CHECK(r >= 0, "rank %d: send %d to %d: %d", rc->rank, j, dst, r);
			if (r == 1)
				free(buf);
			sent++;
		}
		sctpt_progress(rc->ep);
		if (sent == total)
			sctpt_wait(rc->ep, 5);
	}
	int used = 0;
	for (int s = 0; s < SCTPT_MAX_STREAMS; s++)
		used += st.streams_seen[s] > 0;
	CHECK(st.streams_seen[0] == 0, "data arrived on control stream 0");
	if (total >= 60)
		CHECK(used >= 10, "only %d streams carried data", used);
	harness_barrier(rc);
	printf("rank %d: %d messages received in order and intact over %d streams\n", rc->rank,
	       st.received, used);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	per_pair = argc > 2 ? atoi(argv[2]) : 40;
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.handler.complete = on_complete;
	return harness_run(n, 240, &cfg, body);
}
