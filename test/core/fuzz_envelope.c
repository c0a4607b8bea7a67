/*
 * Fuzz target for the receive path: the input is a series of records [peer|stream:1]
 * [len:2 big-endian][bytes], each handed to a socketless endpoint as one received SCTP
 * message (envelope decode, fragment checks, reassembly, ordering, completion entries). A
 * first byte of 'C' instead makes the rest a business card to parse. Bad input must be
 * rejected with an error, never crash or read/write out of bounds. Messages with an odd tag
 * are reassembled in buffers of ours, and those with bit 1 of the tag set are placed in two
 * pieces of ours where their first byte says (the place hook): each must come back exactly
 * once, filled or not (ASan's leak and double-free checks tell).
 */
#include "sctpt_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t total;

/* A buffer of ours a message went to: one piece (recv_buf), or two (place). */
struct ours {
	uint8_t *p0, *p1;
	size_t len0, len;
};

static struct ours *ours_new(size_t len, size_t len0)
{
	struct ours *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->len = len;
	o->len0 = len0;
	o->p0 = malloc(len0 ? len0 : 1);
	o->p1 = malloc(len - len0 ? len - len0 : 1);
	if (!o->p0 || !o->p1) {
		free(o->p0);
		free(o->p1);
		free(o);
		return NULL;
	}
	return o;
}

static void *recv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		      void **cookie)
{
	(void)arg;
	(void)peer;
	(void)context;
	struct ours *o;
	if (!(tag & 1) || !(o = ours_new(len, len)))
		return NULL;
	*cookie = o;
	return o->p0;
}

/* Tags with bit 1 set: two pieces, split where the message's first byte says. */
static int place(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		 const void *head, size_t head_len, struct iovec iov[2], void **cookie)
{
	(void)arg;
	(void)peer;
	(void)context;
	struct ours *o;
	if (head_len > len || head_len < (len < SCTPT_PLACE_HEAD ? len : SCTPT_PLACE_HEAD))
		__builtin_trap(); /* what the hook is promised */
	if (!(tag & 2))
		return 0;
	size_t len0 = head_len ? ((const uint8_t *)head)[0] * len / 256 : 0;
	if (!(o = ours_new(len, len0)))
		return 0;
	iov[0] = (struct iovec){o->p0, len0};
	iov[1] = (struct iovec){o->p1, len - len0};
	*cookie = o;
	return 2;
}

static void on_complete(void *arg, const struct sctpt_cqe *m)
{
	(void)arg;
	struct ours *o = m->cookie;
	if (m->kind != SCTPT_CQE_RECV)
		return;
	if (m->status == 0) {
		/* touch every byte: ASan checks the bounds */
		const volatile uint8_t *d = o ? o->p0 : m->data;
		size_t n = o ? o->len0 : m->len;
		for (size_t i = 0; i < n; i++)
			total += d[i];
		if (o && o->len0 && m->data != o->p0)
			__builtin_trap(); /* the entry shows the first piece */
		for (size_t i = 0; o && i < o->len - o->len0; i++)
			total += ((const volatile uint8_t *)o->p1)[i];
	}
	if (o) {
		free(o->p0);
		free(o->p1);
		free(o);
	}
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
	cfg.handler.place = place;
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
