/*
 * Two ranks on loopback, each on its own engine (native or usrsctp, by argument), send each
 * other messages of every size class (1 B to 4 MiB, across chunk, packet and fragment
 * boundaries) on many streams and contexts; every byte is checked and per (peer, context)
 * order must hold. Usage: test_sctpe_xfer [ENGINE_RANK0 [ENGINE_RANK1 [MSGS [MTU [crc]]]]]
 * (MTU 0: the interface's; crc: both ends compute and check CRC32c).
 */
#include "engine_test.h"

#include <string.h>

#define NCTX 4

static int per_rank = 200;
static const char *engines[2] = {"native", "native"};

struct state {
	int received;
	int last[NCTX];
	uint64_t bytes;
};
static struct state st;

static const size_t sizes[] = {1, 7, 31, 32, 100, 1024, 1399, 1400, 1452, 1500, 2900, 4096,
			       9000, 16384, 65536 - 32, 65536, 65536 + 1, 100000, 300000,
			       1 << 20, (4 << 20) + 3};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static uint32_t seed_of(int src, int j)
{
	return (uint32_t)(src * 1000003 + j * 31 + 17);
}

static size_t size_at(int j)
{
	/* mostly small, every size now and then */
	return j % 3 == 0 ? sizes[(j / 3) % NSIZES] : sizes[j % 7];
}

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	struct pair_ctx *rc = arg;
	if (c->kind == SCTPT_CQE_SEND) {
		CHECK(c->status == 0, "rank %d: send failed: %d", rc->rank, c->status);
		free(c->cookie);
		return;
	}
	if (c->kind != SCTPT_CQE_RECV)
		return;
	int src = 1 - rc->rank, j = c->tag;
	CHECK(c->status == 0, "rank %d: receive failed: %d", rc->rank, c->status);
	CHECK(c->context < NCTX && j > st.last[c->context], "rank %d: context %u: message %d after %d",
	      rc->rank, c->context, j, st.last[c->context]);
	st.last[c->context] = j;
	CHECK(c->len == size_at(j), "rank %d: message %d: %zu bytes, not %zu", rc->rank, j, c->len,
	      size_at(j));
	CHECK(check_pattern(c->data, c->len, seed_of(src, j)) == 0,
	      "rank %d: message %d (%zu bytes) corrupt", rc->rank, j, c->len);
	st.received++;
	st.bytes += c->len;
}

static int body(struct pair_ctx *rc)
{
	int sent = 0;
	for (int k = 0; k < NCTX; k++)
		st.last[k] = -1;
	while (sent < per_rank || st.received < per_rank || sctpt_pending(rc->ep, -1)) {
		if (sent < per_rank) {
			size_t len = size_at(sent);
			unsigned char *buf = malloc(len);
			fill_pattern(buf, len, seed_of(rc->rank, sent));
			struct iovec iov = {buf, len};
			int r = sctpt_send(rc->ep, rc->peer, (uint32_t)(sent % NCTX), sent,
					   0, &iov, 1, buf);
			CHECK(r >= 0, "rank %d: send %d: %d", rc->rank, sent, r);
			if (r == 1)
				free(buf);
			sent++;
		}
		if (sctpt_progress(rc->ep) == 0 && sent == per_rank)
			sctpt_wait(rc->ep, 5);
	}
	pair_barrier(rc);
	printf("rank %d (%s): %d messages, %llu bytes received in order and intact\n", rc->rank,
	       rc->engine, st.received, (unsigned long long)st.bytes);
	return 0;
}

int main(int argc, char **argv)
{
	struct sctpt_config cfg;
	if (argc > 1)
		engines[0] = argv[1];
	if (argc > 2)
		engines[1] = argv[2];
	if (argc > 3)
		per_rank = atoi(argv[3]);
	engine_config(&cfg);
	if (argc > 4)
		cfg.path_mtu = (uint32_t)atoi(argv[4]);
	cfg.crc32c = argc > 5 && strcmp(argv[5], "crc") == 0;
	cfg.handler.complete = on_complete;
	return pair_run(engines, 120, &cfg, body);
}
