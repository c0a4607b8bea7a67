/* SCTP packet parser and builder (sctpe_packet.h). */
#include "sctpe_packet.h"

#include "sctpe_crc32c.h"

#include <errno.h>
#include <string.h>

#include "common/sm_bytes.h"

int sctpe_packet_parse(const uint8_t *buf, size_t len, struct sctpe_hdr *h,
		       struct sctpe_iter *chunks)
{
	if (len < SCTPE_COMMON_LEN || len > SCTPE_MAX_PACKET)
		return -EMSGSIZE;
	h->sport = sm_get_be16(buf + SCTPE_OFF_SPORT);
	h->dport = sm_get_be16(buf + SCTPE_OFF_DPORT);
	h->vtag = sm_get_be32(buf + SCTPE_OFF_VTAG);
	chunks->p = buf + SCTPE_COMMON_LEN;
	chunks->len = len - SCTPE_COMMON_LEN;
	chunks->off = 0;
	return 0;
}

/* Type-length-value at it->off: the header fields, or -EBADMSG. The last element may come
 * without its padding. */
static int tlv_at(struct sctpe_iter *it, uint16_t *len)
{
	size_t left = it->len - it->off;
	if (left == 0)
		return 0;
	if (left < 4)
		return -EBADMSG;
	uint16_t l = sm_get_be16(it->p + it->off + 2);
	if (l < 4 || l > left)
		return -EBADMSG;
	*len = l;
	return 1;
}

static void tlv_skip(struct sctpe_iter *it, uint16_t len)
{
	size_t next = it->off + SCTPE_PAD4(len);
	it->off = next > it->len ? it->len : next;
}

int sctpe_chunk_next(struct sctpe_iter *it, struct sctpe_chunk *c)
{
	uint16_t len;
	int rc = tlv_at(it, &len);
	if (rc <= 0) {
		if (rc < 0)
			it->off = it->len; /* nothing after a bad length can be trusted */
		return rc;
	}
	c->p = it->p + it->off;
	c->type = c->p[0];
	c->flags = c->p[1];
	c->len = len;
	tlv_skip(it, len);
	return 1;
}

void sctpe_tlv_iter(struct sctpe_iter *it, const uint8_t *val, size_t len)
{
	it->p = val;
	it->len = len;
	it->off = 0;
}

int sctpe_tlv_next(struct sctpe_iter *it, struct sctpe_tlv *t)
{
	uint16_t len;
	int rc = tlv_at(it, &len);
	if (rc <= 0) {
		if (rc < 0)
			it->off = it->len;
		return rc;
	}
	const uint8_t *p = it->p + it->off;
	t->type = sm_get_be16(p);
	t->len = len;
	t->val = p + 4;
	t->vlen = len - 4u;
	tlv_skip(it, len);
	return 1;
}

int sctpe_data_decode(const struct sctpe_chunk *c, struct sctpe_data *d)
{
	const uint8_t *p = c->p;
	d->flags = c->flags & (SCTPE_DATA_I | SCTPE_DATA_U | SCTPE_DATA_B | SCTPE_DATA_E);
	if (c->type == SCTPE_I_DATA) {
		if (c->len < SCTPE_IDATA_HDR_LEN)
			return -EBADMSG;
		d->idata = 1;
		d->tsn = sm_get_be32(p + SCTPE_IDATA_OFF_TSN);
		d->sid = sm_get_be16(p + SCTPE_IDATA_OFF_SID);
		d->mid = sm_get_be32(p + SCTPE_IDATA_OFF_MID);
		uint32_t v = sm_get_be32(p + SCTPE_IDATA_OFF_PPID_FSN);
		d->ppid = d->flags & SCTPE_DATA_B ? v : 0;
		d->fsn = d->flags & SCTPE_DATA_B ? 0 : v;
		d->payload = p + SCTPE_IDATA_HDR_LEN;
		d->len = c->len - SCTPE_IDATA_HDR_LEN;
		return 0;
	}
	if (c->type != SCTPE_DATA || c->len < SCTPE_DATA_HDR_LEN)
		return -EBADMSG;
	d->idata = 0;
	d->tsn = sm_get_be32(p + SCTPE_DATA_OFF_TSN);
	d->sid = sm_get_be16(p + SCTPE_DATA_OFF_SID);
	d->mid = sm_get_be16(p + SCTPE_DATA_OFF_SSN);
	d->fsn = 0;
	d->ppid = sm_get_be32(p + SCTPE_DATA_OFF_PPID);
	d->payload = p + SCTPE_DATA_HDR_LEN;
	d->len = c->len - SCTPE_DATA_HDR_LEN;
	return 0;
}

int sctpe_init_decode(const struct sctpe_chunk *c, struct sctpe_init *in)
{
	if (c->len < SCTPE_INIT_FIXED_LEN)
		return -EBADMSG;
	in->itag = sm_get_be32(c->p + SCTPE_INIT_OFF_ITAG);
	in->arwnd = sm_get_be32(c->p + SCTPE_INIT_OFF_ARWND);
	in->os = sm_get_be16(c->p + SCTPE_INIT_OFF_OS);
	in->mis = sm_get_be16(c->p + SCTPE_INIT_OFF_MIS);
	in->itsn = sm_get_be32(c->p + SCTPE_INIT_OFF_ITSN);
	in->params = c->p + SCTPE_INIT_FIXED_LEN;
	in->plen = c->len - SCTPE_INIT_FIXED_LEN;
	return 0;
}

int sctpe_sack_decode(const struct sctpe_chunk *c, struct sctpe_sack *s)
{
	if (c->len < SCTPE_SACK_FIXED_LEN)
		return -EBADMSG;
	s->cum = sm_get_be32(c->p + SCTPE_SACK_OFF_CUM);
	s->arwnd = sm_get_be32(c->p + SCTPE_SACK_OFF_ARWND);
	s->ngaps = sm_get_be16(c->p + SCTPE_SACK_OFF_NGAPS);
	s->ndups = sm_get_be16(c->p + SCTPE_SACK_OFF_NDUPS);
	size_t need = SCTPE_SACK_FIXED_LEN + (size_t)s->ngaps * SCTPE_GAP_LEN +
		      (size_t)s->ndups * SCTPE_DUP_LEN;
	if (need > c->len)
		return -EBADMSG;
	s->gaps = c->p + SCTPE_SACK_FIXED_LEN;
	s->dups = s->gaps + (size_t)s->ngaps * SCTPE_GAP_LEN;
	return 0;
}

int sctpe_shutdown_decode(const struct sctpe_chunk *c, uint32_t *cum)
{
	if (c->len < SCTPE_SHUTDOWN_LEN)
		return -EBADMSG;
	*cum = sm_get_be32(c->p + SCTPE_SHUTDOWN_OFF_CUM);
	return 0;
}

int sctpe_heartbeat_decode(const struct sctpe_chunk *c, struct sctpe_tlv *info)
{
	struct sctpe_iter it;
	sctpe_tlv_iter(&it, c->p + SCTPE_HB_FIXED_LEN, c->len - (size_t)SCTPE_HB_FIXED_LEN);
	if (sctpe_tlv_next(&it, info) != 1 || info->type != SCTPE_P_HEARTBEAT_INFO)
		return -EBADMSG;
	return 0;
}

/* ---- building ---- */

void sctpe_pb_init(struct sctpe_pb *b, uint8_t *buf, size_t cap, uint16_t sport, uint16_t dport,
		   uint32_t vtag)
{
	b->buf = buf;
	b->cap = cap;
	b->len = b->end = SCTPE_COMMON_LEN;
	sm_put_be16(buf + SCTPE_OFF_SPORT, sport);
	sm_put_be16(buf + SCTPE_OFF_DPORT, dport);
	sm_put_be32(buf + SCTPE_OFF_VTAG, vtag);
	sm_put_be32(buf + SCTPE_OFF_CSUM, 0);
}

uint8_t *sctpe_pb_chunk(struct sctpe_pb *b, uint8_t type, uint8_t flags, size_t len)
{
	if (len < SCTPE_CHUNK_HDR_LEN || len > 0xffff || !sctpe_pb_fits(b, len))
		return NULL;
	uint8_t *c = b->buf + b->len;
	c[0] = type;
	c[1] = flags;
	sm_put_be16(c + 2, (uint16_t)len);
	/* the padding, as one store over the last word (the value is the caller's, written after;
	 * len >= 4 keeps the header out of it): a call to memset per chunk costs more */
	if (len & 3)
		sm_put_be32(c + (len & ~(size_t)3), 0);
	b->end = b->len + len;
	b->len += SCTPE_PAD4(len);
	return c;
}

uint8_t *sctpe_pb_open(struct sctpe_pb *b, uint8_t type, uint8_t flags, size_t fixed)
{
	return sctpe_pb_chunk(b, type, flags, fixed);
}

int sctpe_pb_put(struct sctpe_pb *b, const void *val, size_t vlen)
{
	if (!sctpe_pb_fits(b, vlen))
		return -ENOSPC;
	if (vlen)
		memcpy(b->buf + b->len, val, vlen);
	memset(b->buf + b->len + vlen, 0, SCTPE_PAD4(vlen) - vlen);
	b->end = b->len + vlen;
	b->len += SCTPE_PAD4(vlen);
	return 0;
}

int sctpe_pb_param(struct sctpe_pb *b, uint16_t type, const void *val, size_t vlen)
{
	if (vlen > 0xffff - SCTPE_PARAM_HDR_LEN || !sctpe_pb_fits(b, SCTPE_PARAM_HDR_LEN + vlen))
		return -ENOSPC;
	uint8_t *p = b->buf + b->len;
	sm_put_be16(p, type);
	sm_put_be16(p + 2, (uint16_t)(SCTPE_PARAM_HDR_LEN + vlen));
	b->len += SCTPE_PARAM_HDR_LEN;
	return sctpe_pb_put(b, val, vlen);
}

/* The length of a chunk excludes the padding of its last parameter (RFC 9260 3.2). */
void sctpe_pb_close(struct sctpe_pb *b, uint8_t *chunk)
{
	sm_put_be16(chunk + 2, (uint16_t)(b->buf + b->end - chunk));
}

void sctpe_pb_trim(struct sctpe_pb *b, size_t len)
{
	if (len >= SCTPE_COMMON_LEN && len <= b->len)
		b->len = b->end = len;
}

size_t sctpe_pb_finish(struct sctpe_pb *b, int crc)
{
	if (crc)
		sctpe_crc32c_set(b->buf, b->len);
	else
		sm_put_be32(b->buf + SCTPE_OFF_CSUM, 0);
	return b->len;
}

uint8_t *sctpe_pb_data(struct sctpe_pb *b, const struct sctpe_data *d, size_t len)
{
	size_t hl = d->idata ? SCTPE_IDATA_HDR_LEN : SCTPE_DATA_HDR_LEN;
	uint8_t *c = sctpe_pb_chunk(b, d->idata ? SCTPE_I_DATA : SCTPE_DATA, d->flags, hl + len);
	if (!c)
		return NULL;
	if (d->idata) {
		sm_put_be32(c + SCTPE_IDATA_OFF_TSN, d->tsn);
		sm_put_be16(c + SCTPE_IDATA_OFF_SID, d->sid);
		sm_put_be16(c + SCTPE_IDATA_OFF_RSVD, 0);
		sm_put_be32(c + SCTPE_IDATA_OFF_MID, d->mid);
		sm_put_be32(c + SCTPE_IDATA_OFF_PPID_FSN, d->flags & SCTPE_DATA_B ? d->ppid : d->fsn);
	} else {
		sm_put_be32(c + SCTPE_DATA_OFF_TSN, d->tsn);
		sm_put_be16(c + SCTPE_DATA_OFF_SID, d->sid);
		sm_put_be16(c + SCTPE_DATA_OFF_SSN, (uint16_t)d->mid);
		sm_put_be32(c + SCTPE_DATA_OFF_PPID, d->ppid);
	}
	return c + hl;
}
