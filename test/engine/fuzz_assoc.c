/*
 * Fuzz target for the association state machine: a sequence of packets from an emulated peer
 * to one native endpoint. The input is records [flags:1][len:2 big-endian][chunks:len]; each
 * becomes a packet (common header added) to our receive port (flags bit 0) or our send port,
 * with help to get past what a blind fuzzer cannot guess:
 *   bit 1  the packet carries the right verification tag for that association (else 0x...
 *          from the record's first four bytes is not used: the tag is 0 or wrong on purpose)
 *   bit 2  a COOKIE ECHO first in the packet gets the cookie of the endpoint's last INIT ACK
 *   bit 3  TSNs of SACK and SHUTDOWN chunks are offsets from our association's initial TSN
 *   bit 4  first, the core sends a message of len * 97 bytes to the peer (our association
 *          starts, or queues more)
 *   bit 5  first, the endpoint's timers run as if len * 7 ms had passed
 * After each packet the endpoint progresses (delivery to the core, events). Nothing may
 * crash, leak or corrupt memory, whatever the order of chunks and states.
 */
#include "emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sm_bytes.h"

static uint8_t g_cookie[512];
static size_t g_cookie_len;

static void grab_cookie(struct emu *m)
{
	uint16_t len;
	const uint8_t *ack = emu_chunk(m, SCTPE_INIT_ACK, &len, NULL);
	if (!ack || len < SCTPE_INIT_FIXED_LEN)
		return;
	struct sctpe_iter it;
	struct sctpe_tlv t;
	sctpe_tlv_iter(&it, ack + SCTPE_INIT_FIXED_LEN, len - (size_t)SCTPE_INIT_FIXED_LEN);
	while (sctpe_tlv_next(&it, &t) == 1)
		if (t.type == SCTPE_P_STATE_COOKIE && t.vlen <= sizeof(g_cookie)) {
			memcpy(g_cookie, t.val, t.vlen);
			g_cookie_len = t.vlen;
		}
}

static void rebase_tsns(struct emu *m, uint8_t *p, size_t len)
{
	struct sctpe_assoc *a = m->e->ps && m->peer < m->e->nps ? m->e->ps[m->peer].out : NULL;
	uint32_t base = a ? a->my_itsn - 1 : 0;
	struct sctpe_iter it;
	struct sctpe_chunk c;
	sctpe_tlv_iter(&it, p, len);
	while (sctpe_chunk_next(&it, &c) == 1) {
		uint8_t *q = (uint8_t *)c.p;
		if ((c.type == SCTPE_SACK || c.type == SCTPE_SHUTDOWN) && c.len >= 8)
			sm_put_be32(q + 4, sm_get_be32(q + 4) + base);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct emu m;
	static uint8_t buf[SCTPE_MAX_PACKET];
	if (emu_open(&m, 0, 8) != 0)
		return 0;
	g_cookie_len = 0;
	for (int rec = 0; rec < 64 && size >= 3; rec++) {
		uint8_t flags = data[0];
		size_t len = sm_get_be16(data + 1);
		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		if (len > sizeof(buf) - SCTPE_COMMON_LEN - 600)
			len = sizeof(buf) - SCTPE_COMMON_LEN - 600;
		memcpy(buf, data, len);
		data += len;
		size -= len;
		int in = flags & 1;
		if (flags & 0x10) {
			static uint8_t msg[1 << 16];
			struct iovec iov = {msg, (len * 97) % sizeof(msg)};
			sctpt_send(m.ep, m.peer, 1, rec, 0, &iov, 1, NULL);
		}
		if (flags & 0x20) {
			pthread_mutex_lock(&m.ep->lock);
			sctpe_ep_tx_begin(m.ep);
			sctpe_wheel_run(&m.e->wheel, m.e->wheel.now + len * 7);
			sctpe_ep_tx_end(m.ep);
			pthread_mutex_unlock(&m.ep->lock);
		}
		if ((flags & 4) && len >= 4 && buf[0] == SCTPE_COOKIE_ECHO && g_cookie_len) {
			/* the real cookie in place of the record's first chunk */
			size_t old = SCTPE_PAD4(sm_get_be16(buf + 2) < 4 ? 4 : sm_get_be16(buf + 2));
			if (old > len)
				old = len;
			size_t nl = SCTPE_PAD4(4 + g_cookie_len);
			memmove(buf + nl, buf + old, len - old);
			sm_put_be16(buf + 2, (uint16_t)(4 + g_cookie_len));
			memcpy(buf + 4, g_cookie, g_cookie_len);
			memset(buf + 4 + g_cookie_len, 0, nl - 4 - g_cookie_len);
			len = len - old + nl;
		}
		if (flags & 8)
			rebase_tsns(&m, buf, len);
		uint32_t vtag = 0;
		if (flags & 2) {
			struct sctpe_assoc *a = m.e->ps && m.peer < m.e->nps ?
							(in ? m.e->ps[m.peer].in : m.e->ps[m.peer].out) :
							NULL;
			vtag = a ? a->my_vtag : 0;
			if (in && len && buf[0] == SCTPE_COOKIE_ECHO && g_cookie_len >= 16)
				vtag = sm_get_be32(g_cookie + 12); /* the tag the cookie gives us */
		} else if (len >= 4) {
			vtag = sm_get_be32(buf) ^ 0x5a5a5a5au;
		}
		emu_inject(&m, in, vtag, buf, len);
		if (getenv("FUZZ_ASSOC_TRACE")) {
			struct sctpe_assoc *ai = m.e->nps > m.peer ? m.e->ps[m.peer].in : NULL;
			struct sctpe_assoc *ao = m.e->nps > m.peer ? m.e->ps[m.peer].out : NULL;
			fprintf(stderr, "record %d flags %#x len %zu: in %d out %d, sent %d\n", rec,
				flags, len, ai ? ai->state : -1, ao ? ao->state : -1, m.npkts);
		}
		grab_cookie(&m);
		emu_clear(&m);
		sctpt_progress(m.ep);
	}
	emu_close(&m);
	return 0;
}
