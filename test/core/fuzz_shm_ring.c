/*
 * Fuzz target for the receiving side of a shared-memory ring: the input is the 8-byte write
 * position a same-host sender claims (little-endian), then the records of its ring as a faulty
 * or hostile sender may have written them (sctpt_shm_proto.h), read through
 * sctpt_shm_fuzz_ring by an endpoint with shared memory. Whatever the bytes, the receiver
 * delivers what is well formed and fails the peer with -EPROTO at the first thing that is
 * not: never a read outside the ring, a crash or a leak (ASan tells). Pulls name addresses of
 * this very process.
 */
#include "sctpt_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct sctpt_ep *ep;
static sctpt_peer_t peer = -1;
static size_t total;

static void *recv_buf(void *arg, sctpt_peer_t p, uint32_t context, int32_t tag, size_t len,
		      void **cookie)
{
	(void)arg, (void)p, (void)context;
	if (!(tag & 1))
		return NULL;
	*cookie = malloc(len ? len : 1);
	return *cookie;
}

static void on_complete(void *arg, const struct sctpt_cqe *m)
{
	(void)arg;
	if (getenv("FUZZ_SHM_VERBOSE")) /* to see what a seed gets through */
		fprintf(stderr, "kind %d status %d context %u tag %d len %zu\n", m->kind, m->status,
			m->context, m->tag, m->len);
	if (m->kind != SCTPT_CQE_RECV)
		return;
	if (m->status == 0) {
		const volatile uint8_t *d = m->data;
		for (size_t i = 0; i < m->len; i++)
			total += d[i]; /* every byte: ASan checks the bounds */
	}
	free(m->cookie);
}

static void setup(void)
{
	struct sctpt_config cfg;
	char card[SCTPT_CARD_MAX], other[SCTPT_CARD_MAX];
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.shm = 1;
	cfg.max_msg_size = 1u << 20;
	cfg.handler.complete = on_complete;
	cfg.handler.recv_buf = recv_buf;
	if (sctpt_open(&cfg, &ep) != 0 || sctpt_card(ep, card, sizeof(card)) < 0) {
		fprintf(stderr, "fuzz_shm_ring: no endpoint: %s\n", sctpt_last_error());
		exit(1);
	}
	/* a peer of this host in another process: our own card, another pid */
	char *t = strstr(card, " shm=");
	if (!t || strlen(t) < 5 + 18) {
		fprintf(stderr, "fuzz_shm_ring: no shared memory in card %s\n", card);
		exit(1);
	}
	snprintf(other, sizeof(other), "%.*s%.16s.%d.00000000", (int)(t - card + 5), card, t + 5,
		 (int)getpid() + 1);
	peer = sctpt_peer_add(ep, other);
	if (peer < 0) {
		fprintf(stderr, "fuzz_shm_ring: peer %s: %s\n", other, sctpt_last_error());
		exit(1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t wp = 0;
	if (!ep)
		setup();
	if (size >= 8) {
		memcpy(&wp, data, 8);
		data += 8;
		size -= 8;
	}
	if (sctpt_shm_fuzz_ring(ep, peer, data, size, wp % (4u << 20)) != 0)
		abort();
	return 0;
}
