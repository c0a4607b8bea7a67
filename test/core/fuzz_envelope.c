/*
 * Fuzz target for the receive path: the input is a series of records [peer|stream:1]
 * [len:2 big-endian][bytes], each handed to a socketless endpoint as one received SCTP
 * message (envelope decode, fragment checks, reassembly, ordering, completion entries). A
 * first byte of 'C' instead makes the rest a business card to parse. Bad input must be
 * rejected with an error, never crash or read/write out of bounds. Messages with an odd tag
 * are reassembled in buffers of ours: each must come back exactly once, filled or not
 * (ASan's leak and double-free checks tell).
 */
#include "sctpt_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t total;

static void *recv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		      void **cookie)
{
	(void)arg;
	(void)peer;
	(void)context;
	if (!(tag & 1))
		return NULL;
	*cookie = malloc(len ? len : 1);
	return *cookie;
}

static void on_complete(void *arg, const struct sctpt_cqe *m)
{
	(void)arg;
	if (m->kind != SCTPT_CQE_RECV)
		return;
	if (m->status == 0) {
		const volatile uint8_t *d = m->data;
		for (size_t i = 0; i < m->len; i++)
			total += d[i]; /* touch every byte: ASan checks the bounds */
	}
	free(m->cookie);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 0 && data[0] == 'C') {
		char card[SCTPT_CARD_MAX + 8];
		size_t n = size - 1 < sizeof(card) - 1 ? size - 1 : sizeof(card) - 1;
		struct sctpt_card_info ci;
		memcpy(card, data + 1, n);
		card[n] = '\0';
		if (sctpt_card_parse(card, &ci) == 0) {
			char again[SCTPT_CARD_MAX];
			struct sctpt_card_info c2;
			if (sctpt_card_format(&ci, again, sizeof(again)) < 0 ||
			    sctpt_card_parse(again, &c2) != 0 || memcmp(&ci, &c2, sizeof(ci)) != 0)
				__builtin_trap(); /* a parsed card must print and parse back */
		}
		return 0;
	}
	struct sctpt_config cfg;
	struct sctpt_ep *ep;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.streams = 8;
	cfg.frag_size = 512;
	cfg.max_msg_size = 1 << 20;
	cfg.handler.complete = on_complete;
	cfg.handler.recv_buf = recv_buf;
	if (sctpt_open_nosock(&cfg, &ep) != 0)
		return 0;
	sctpt_peer_t peers[2] = {sctpt_peer_add(ep, "sctpt1 9 9 127.0.0.2"),
				 sctpt_peer_add(ep, "sctpt1 9 9 127.0.0.3")};
	while (size >= 3) {
		size_t len = (size_t)data[1] << 8 | data[2];
		uint8_t sel = data[0];
		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		sctpt_rx_inject(ep, peers[sel >> 7], (uint16_t)(sel & 0x7f), data, len);
		sctpt_progress(ep); /* completions are handed out here, not in the injection */
		data += len;
		size -= len;
	}
	sctpt_close(ep);
	return 0;
}
