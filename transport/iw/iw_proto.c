/* iw_proto.c: encode/decode of the headers in iw_proto.h, every field checked, big-endian. */
#include <errno.h>

#include "iw_proto.h"

#include "common/sm_bytes.h"

static int op_valid(unsigned op)
{
	return op <= IW_OP_TERMINATE || op == IW_OP_ATOMIC_REQ || op == IW_OP_ATOMIC_RESP;
}

/* Tagged opcodes: Write and Read Response; everything else travels untagged. */
static int op_tagged(unsigned op)
{
	return op == IW_OP_WRITE || op == IW_OP_READ_RESP;
}

int iw_hdr_encode(const struct iw_hdr *h, uint8_t *buf, size_t len)
{
	size_t need = h->tagged ? IW_TAGGED_HLEN : IW_UNTAGGED_HLEN;
	if (len < need || !op_valid(h->opcode) || op_tagged(h->opcode) != !!h->tagged)
		return -EINVAL;
	buf[0] = (h->tagged ? IW_DDP_T : 0) | (h->last ? IW_DDP_L : 0) | IW_DDP_VERSION;
	buf[1] = IW_RDMAP_VERSION << 6 | h->opcode;
	sm_put_be32(buf + 2, h->stag);
	if (h->tagged) {
		sm_put_be64(buf + 6, h->to);
	} else {
		sm_put_be32(buf + 6, h->qn);
		sm_put_be32(buf + 10, h->msn);
		sm_put_be32(buf + 14, h->mo);
	}
	return (int)need;
}

int iw_hdr_decode(struct iw_hdr *h, const uint8_t *buf, size_t len)
{
	if (len < 2)
		return -EPROTO;
	if ((buf[0] & 0x03) != IW_DDP_VERSION || (buf[0] & 0x3c) || (buf[1] >> 6) != IW_RDMAP_VERSION ||
	    (buf[1] & 0x30))
		return -EPROTO;
	h->tagged = !!(buf[0] & IW_DDP_T);
	h->last = !!(buf[0] & IW_DDP_L);
	h->opcode = buf[1] & 0x0f;
	if (!op_valid(h->opcode) || op_tagged(h->opcode) != h->tagged)
		return -EPROTO;
	size_t need = h->tagged ? IW_TAGGED_HLEN : IW_UNTAGGED_HLEN;
	if (len < need)
		return -EPROTO;
	h->stag = sm_get_be32(buf + 2);
	h->to = 0;
	h->qn = h->msn = h->mo = 0;
	if (h->tagged) {
		h->to = sm_get_be64(buf + 6);
	} else {
		h->qn = sm_get_be32(buf + 6);
		h->msn = sm_get_be32(buf + 10);
		h->mo = sm_get_be32(buf + 14);
		if (h->qn > IW_QN_ATOMIC)
			return -EPROTO;
	}
	return (int)need;
}

int iw_read_req_encode(const struct iw_read_req *r, uint8_t *buf, size_t len)
{
	if (len < IW_READ_REQ_LEN)
		return -EINVAL;
	sm_put_be32(buf, r->sink_stag);
	sm_put_be64(buf + 4, r->sink_to);
	sm_put_be32(buf + 12, r->size);
	sm_put_be32(buf + 16, r->src_stag);
	sm_put_be64(buf + 20, r->src_to);
	return IW_READ_REQ_LEN;
}

int iw_read_req_decode(struct iw_read_req *r, const uint8_t *buf, size_t len)
{
	if (len < IW_READ_REQ_LEN)
		return -EPROTO;
	r->sink_stag = sm_get_be32(buf);
	r->sink_to = sm_get_be64(buf + 4);
	r->size = sm_get_be32(buf + 12);
	r->src_stag = sm_get_be32(buf + 16);
	r->src_to = sm_get_be64(buf + 20);
	return IW_READ_REQ_LEN;
}

int iw_term_encode(const struct iw_term *t, uint8_t *buf, size_t len)
{
	if (len < IW_TERM_LEN || t->layer > IW_LAYER_LLP || t->etype > 15 || t->hdrct > 7)
		return -EINVAL;
	buf[0] = (uint8_t)(t->layer << 4 | t->etype);
	buf[1] = t->ecode;
	buf[2] = (uint8_t)(t->hdrct << 5);
	buf[3] = 0;
	return IW_TERM_LEN;
}

int iw_term_decode(struct iw_term *t, const uint8_t *buf, size_t len)
{
	if (len < IW_TERM_LEN)
		return -EPROTO;
	t->layer = buf[0] >> 4;
	t->etype = buf[0] & 0x0f;
	t->ecode = buf[1];
	t->hdrct = buf[2] >> 5;
	if (t->layer > IW_LAYER_LLP || (buf[2] & 0x1f) || buf[3])
		return -EPROTO;
	return IW_TERM_LEN;
}

int iw_atomic_req_encode(const struct iw_atomic_req *a, uint8_t *buf, size_t len)
{
	if (len < IW_ATOMIC_REQ_LEN || a->op > IW_ATOMIC_CSWAP)
		return -EINVAL;
	sm_put_be32(buf, a->op);
	sm_put_be32(buf + 4, a->req_id);
	sm_put_be32(buf + 8, a->stag);
	sm_put_be64(buf + 12, a->to);
	sm_put_be64(buf + 20, a->add_swap);
	sm_put_be64(buf + 28, a->add_swap_mask);
	sm_put_be64(buf + 36, a->cmp);
	sm_put_be64(buf + 44, a->cmp_mask);
	return IW_ATOMIC_REQ_LEN;
}

int iw_atomic_req_decode(struct iw_atomic_req *a, const uint8_t *buf, size_t len)
{
	if (len < IW_ATOMIC_REQ_LEN)
		return -EPROTO;
	uint32_t w = sm_get_be32(buf);
	if (w > IW_ATOMIC_CSWAP)
		return -EPROTO;
	a->op = (uint8_t)w;
	a->req_id = sm_get_be32(buf + 4);
	a->stag = sm_get_be32(buf + 8);
	a->to = sm_get_be64(buf + 12);
	a->add_swap = sm_get_be64(buf + 20);
	a->add_swap_mask = sm_get_be64(buf + 28);
	a->cmp = sm_get_be64(buf + 36);
	a->cmp_mask = sm_get_be64(buf + 44);
	return IW_ATOMIC_REQ_LEN;
}

int iw_atomic_resp_encode(const struct iw_atomic_resp *a, uint8_t *buf, size_t len)
{
	if (len < IW_ATOMIC_RESP_LEN)
		return -EINVAL;
	sm_put_be32(buf, a->req_id);
	sm_put_be64(buf + 4, a->orig);
	return IW_ATOMIC_RESP_LEN;
}

int iw_atomic_resp_decode(struct iw_atomic_resp *a, const uint8_t *buf, size_t len)
{
	if (len < IW_ATOMIC_RESP_LEN)
		return -EPROTO;
	a->req_id = sm_get_be32(buf);
	a->orig = sm_get_be64(buf + 4);
	return IW_ATOMIC_RESP_LEN;
}
