/* The emulated peer (emu.h). */
#include "emu.h"

#include "sctpe_crc32c.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/sm_bytes.h"

static void tap(void *arg, struct sctpt_sel *sel, const uint8_t *pkt, size_t len)
{
	struct emu *m = arg;
	if (m->npkts == EMU_CAP) {
		free(m->pkts[0].data);
		memmove(m->pkts, m->pkts + 1, (EMU_CAP - 1) * sizeof(m->pkts[0]));
		m->npkts--;
		m->dropped++;
	}
	struct emu_pkt *p = &m->pkts[m->npkts];
	p->data = malloc(len);
	if (!p->data)
		return;
	memcpy(p->data, pkt, len);
	p->len = len;
	p->in = sel->kind == SCTPT_SEL_MIRROR;
	m->npkts++;
}

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	struct emu *m = arg;
	if (c->kind == SCTPT_CQE_RECV && c->status == 0) {
		if (m->recvs < 64)
			m->tags[m->recvs] = c->tag;
		m->recvs++;
		m->recv_bytes += c->len;
		m->last_len = c->len < sizeof(m->last) ? c->len : sizeof(m->last);
		memcpy(m->last, c->data, m->last_len);
	} else if (c->kind == SCTPT_CQE_EVENT) {
		m->events++;
		m->ups += c->ev.type == SCTPT_EV_ASSOC_UP;
		if (c->ev.type == SCTPT_EV_ASSOC_DOWN) {
			m->downs++;
			m->last_down_err = c->ev.error;
		}
	}
}

int emu_open(struct emu *m, int crc, uint16_t streams)
{
	struct sctpt_config cfg;
	memset(m, 0, sizeof(*m));
	setenv("SCTPT_SHM", "0", 1);
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.backend = "native";
	cfg.crc32c = crc;
	cfg.streams = streams;
	cfg.hb_interval_ms = 0;
	cfg.sack_freq = 1; /* a SACK per packet: tests see each at once */
	cfg.max_msg_size = 16u << 20; /* the core allocates what an envelope announces */
	cfg.handler.complete = on_complete;
	cfg.handler.arg = m;
	int rc = sctpt_open(&cfg, &m->ep);
	if (rc)
		return rc;
	m->e = m->ep->engine;
	sctpe_set_tap(m->ep, tap, m);
	m->peer = sctpt_peer_add(m->ep, "sctpt1 9 5001 127.0.0.1");
	m->tag = 0x5eed0001u;
	m->tsn = 1000;
	return m->peer < 0 ? m->peer : 0;
}

void emu_clear(struct emu *m)
{
	for (int i = 0; i < m->npkts; i++)
		free(m->pkts[i].data);
	m->npkts = 0;
}

void emu_close(struct emu *m)
{
	/* the peer is gone: closing does not wait for it to acknowledge anything */
	pthread_mutex_lock(&m->ep->lock);
	sctpt_peer_fail(m->ep, sctpt_peer_get(m->ep, m->peer), -ECONNRESET);
	pthread_mutex_unlock(&m->ep->lock);
	sctpt_close(m->ep);
	emu_clear(m);
}

void emu_inject_raw(struct emu *m, const uint8_t *pkt, size_t len)
{
	sctpe_inject(m->ep, m->peer, 0, pkt, len);
}

void emu_inject(struct emu *m, int in, uint32_t vtag, const uint8_t *chunks, size_t len)
{
	static uint8_t pkt[SCTPE_MAX_PACKET];
	if (len + SCTPE_COMMON_LEN > sizeof(pkt))
		return;
	sm_put_be16(pkt, in ? SCTPE_SPORT : SCTPE_RPORT);
	sm_put_be16(pkt + 2, in ? SCTPE_RPORT : SCTPE_SPORT);
	sm_put_be32(pkt + 4, vtag);
	memcpy(pkt + SCTPE_COMMON_LEN, chunks, len);
	len += SCTPE_COMMON_LEN;
	if (m->e->crc)
		sctpe_crc32c_set(pkt, len);
	else
		sm_put_be32(pkt + 8, 0);
	emu_inject_raw(m, pkt, len);
}

void emu_progress(struct emu *m)
{
	for (int i = 0; i < 4; i++)
		sctpt_progress(m->ep);
}

const uint8_t *emu_chunk(struct emu *m, uint8_t type, uint16_t *len, uint32_t *vtag)
{
	for (int i = m->npkts - 1; i >= 0; i--) {
		struct sctpe_hdr h;
		struct sctpe_iter it;
		struct sctpe_chunk c;
		if (sctpe_packet_parse(m->pkts[i].data, m->pkts[i].len, &h, &it) != 0)
			continue;
		while (sctpe_chunk_next(&it, &c) == 1) {
			if (c.type == type) {
				if (len)
					*len = c.len;
				if (vtag)
					*vtag = h.vtag;
				return c.p;
			}
		}
	}
	return NULL;
}

int emu_handshake(struct emu *m, int idata)
{
	uint8_t c[64];
	memset(c, 0, sizeof(c));
	size_t n = 20;
	c[0] = SCTPE_INIT;
	sm_put_be32(c + 4, m->tag);
	sm_put_be32(c + 8, 1u << 20);
	sm_put_be16(c + 12, 64);
	sm_put_be16(c + 14, 64);
	sm_put_be32(c + 16, m->tsn);
	if (idata) {
		sm_put_be16(c + 20, SCTPE_P_SUPPORTED_EXT);
		sm_put_be16(c + 22, 5);
		c[24] = SCTPE_I_DATA;
		n = 28;
	}
	sm_put_be16(c + 2, (uint16_t)(idata ? 25 : 20));
	emu_clear(m);
	emu_inject(m, 1, 0, c, n);
	uint16_t len;
	uint32_t vtag;
	const uint8_t *ack = emu_chunk(m, SCTPE_INIT_ACK, &len, &vtag);
	if (!ack || vtag != m->tag || len < 20)
		return -EPROTO;
	m->peer_tag = sm_get_be32(ack + 4);
	struct sctpe_iter it;
	struct sctpe_tlv t;
	sctpe_tlv_iter(&it, ack + 20, len - 20u);
	m->cookie_len = 0;
	while (sctpe_tlv_next(&it, &t) == 1)
		if (t.type == SCTPE_P_STATE_COOKIE && t.vlen <= sizeof(m->cookie)) {
			memcpy(m->cookie, t.val, t.vlen);
			m->cookie_len = t.vlen;
		}
	if (!m->cookie_len)
		return -EPROTO;
	if (m->echo_delay_ms) {
		struct timespec ts = {0, m->echo_delay_ms * 1000000L};
		nanosleep(&ts, NULL);
	}
	uint8_t echo[4 + 256];
	echo[0] = SCTPE_COOKIE_ECHO;
	echo[1] = 0;
	sm_put_be16(echo + 2, (uint16_t)(4 + m->cookie_len));
	memcpy(echo + 4, m->cookie, m->cookie_len);
	emu_clear(m);
	emu_inject(m, 1, m->peer_tag, echo, SCTPE_PAD4(4 + m->cookie_len));
	if (!emu_chunk(m, SCTPE_COOKIE_ACK, NULL, NULL))
		return -EPROTO;
	emu_progress(m);
	return 0;
}

size_t emu_data(uint8_t *out, int idata, uint8_t flags, uint32_t tsn, uint16_t sid,
		uint32_t mid, uint32_t fsn, const void *payload, size_t len)
{
	size_t hl = idata ? SCTPE_IDATA_HDR_LEN : SCTPE_DATA_HDR_LEN;
	memset(out, 0, SCTPE_PAD4(hl + len));
	out[0] = idata ? SCTPE_I_DATA : SCTPE_DATA;
	out[1] = flags;
	sm_put_be16(out + 2, (uint16_t)(hl + len));
	sm_put_be32(out + 4, tsn);
	sm_put_be16(out + 8, sid);
	if (idata) {
		sm_put_be32(out + 12, mid);
		sm_put_be32(out + 16, (flags & SCTPE_DATA_B) ? SCTPT_PPID : fsn);
	} else {
		sm_put_be16(out + 10, (uint16_t)mid);
		sm_put_be32(out + 12, SCTPT_PPID);
	}
	if (len)
		memcpy(out + hl, payload, len);
	return SCTPE_PAD4(hl + len);
}

size_t emu_message(uint8_t *out, int32_t tag, size_t n)
{
	struct sctpt_hdr h = {.version = SCTPT_PROTO_VERSION, .op = SCTPT_OP_DATA,
			      .flags = SCTPT_F_FIRST | SCTPT_F_LAST | SCTPT_F_UNORDERED,
			      .context = 1, .tag = tag, .msg_len = n};
	sctpt_hdr_encode(&h, out);
	memset(out + SCTPT_HDR_LEN, 'x', n);
	return SCTPT_HDR_LEN + n;
}
