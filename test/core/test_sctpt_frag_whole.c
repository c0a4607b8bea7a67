/*
 * A message that fits cfg.frag_size travels as one fragment, even where the fragments of
 * larger messages are cut shorter to fill whole packets (the native engine, at a 1500-byte
 * path MTU and at loopback's 64000): the receiver reads it whole into its staging buffer and
 * never asks its handler for a reassembly buffer (recv_buf). One byte more, and it does.
 * The fragment size is ch3:sctp's (64 KiB and an 80-byte packet header): its 64 KiB eager
 * messages were cut in two and reassembled in a buffer malloc'd per message.
 */
#include "harness.h"

#include <string.h>

#define FRAG (64 * 1024 + 80)

static const size_t sizes[] = {FRAG - 1, FRAG, FRAG + 1, 3 * FRAG};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
static int nrecv, nbufs, done;
static size_t got[NSIZES];

static void *recv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		      void **cookie)
{
	(void)arg, (void)peer, (void)context, (void)tag;
	nbufs++;
	*cookie = malloc(len);
	return *cookie;
}

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	if (c->kind == SCTPT_CQE_EVENT) /* the peer leaving at the end is no failure */
		CHECK(done || c->ev.type != SCTPT_EV_ASSOC_DOWN, "%s", c->ev.what);
	if (c->kind != SCTPT_CQE_RECV)
		return;
	CHECK(c->status == 0 && nrecv < (int)NSIZES, "receive %d: status %d", nrecv, c->status);
	CHECK(check_pattern(c->data, c->len, (uint32_t)c->tag) == 0, "payload of tag %d", c->tag);
	got[nrecv++] = c->len;
	free(c->cookie);
}

static int body(struct rank_ctx *rc)
{
	if (rc->rank == 0) {
		static unsigned char buf[3 * FRAG];
		for (size_t i = 0; i < NSIZES; i++) {
			fill_pattern(buf, sizes[i], (uint32_t)i);
			struct iovec v = {buf, sizes[i]};
			int r = sctpt_send(rc->ep, rc->peer[1], 5, (int32_t)i, 0, &v, 1, NULL);
			CHECK(r >= 0, "send of %zu bytes: %d", sizes[i], r);
			while (sctpt_pending(rc->ep, rc->peer[1])) /* buf is reused */
				sctpt_wait(rc->ep, 5);
		}
		done = 1;
		harness_barrier(rc);
		return 0;
	}
	while (nrecv < (int)NSIZES)
		sctpt_wait(rc->ep, 5);
	for (size_t i = 0; i < NSIZES; i++)
		CHECK(got[i] == sizes[i], "message %zu: %zu bytes, sent %zu", i, got[i], sizes[i]);
	/* reassembly buffers for FRAG + 1 and 3 * FRAG only */
	CHECK(nbufs == 2, "%d reassembly buffers for %zu messages", nbufs, NSIZES);
	done = 1;
	harness_barrier(rc);
	return 0;
}

int main(void)
{
	static const unsigned mtus[] = {1500, 0};
	for (int i = 0; i < 2; i++) {
		struct sctpt_config cfg;
		sctpt_config_init(&cfg);
		cfg.addrs = "127.0.0.1";
		cfg.backend = "native";
		cfg.shm = 0;
		cfg.frag_size = FRAG;
		cfg.path_mtu = mtus[i];
		cfg.handler.complete = on_complete;
		cfg.handler.recv_buf = recv_buf;
		if (harness_run(2, 60, &cfg, body) != 0) {
			fprintf(stderr, "FAIL at path MTU %u\n", mtus[i]);
			return 1;
		}
		printf("path MTU %u: messages up to the fragment size came whole\n", mtus[i]);
	}
	return 0;
}
