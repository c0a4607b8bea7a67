/*
 * sctp_proto.h: what the libfabric provider `sctp` puts on the wire, and nothing else.
 * All fields are big-endian.
 *
 * Every provider message is one core message (transport/sctpt.h) that starts with this header:
 *
 *   0: version (SCTP_PROTO_VERSION)   1: op (enum sctp_op)   2..3: flags (SCTP_HF_*)
 *   4..7:   the sending endpoint's index within its domain
 *   8..15:  the sending domain's nonce (names the sender whatever core peer it arrives as)
 *   16..23: tag (SCTP_OP_TAGGED), else 0
 *   24..31: remote CQ data (with SCTP_HF_CQ_DATA); SCTP_OP_QP_HELLO: the sender's QP
 *           number; SCTP_OP_QP_READY: the receiver's QP number the sender connected to
 *   16..23 of SCTP_OP_QP_HELLO: the STag of the sender's fence byte, 32..39: its address
 *   32..39: acknowledgement id: with SCTP_HF_ACK_REQ the target answers SCTP_OP_ACK with it
 *   40..:   payload (SCTP_OP_MSG, SCTP_OP_TAGGED); nothing for the other ops
 *
 * Messages for endpoint i travel on core context SCTP_CTX_EP + i, in order per (sender
 * domain, target endpoint): that is FI_ORDER_SAS. Domain-to-domain control (acks, the RMA
 * queue-pair handshake) travels on SCTP_CTX_CTRL.
 *
 * Endpoint names (fi_getname, fi_av_insert; FI_FORMAT_UNSPEC), SCTP_ADDR_LEN bytes (no more
 * than FI_NAME_MAX, which is what Open MPI's mtl ofi has room for):
 *   0: SCTP_ADDR_VERSION   1: number of IPv4 addresses (1..SCTP_ADDR_IPS), bit 7: shm
 *   2..3: endpoint index   4..5: UDP port   6..7: SCTP port   8..15: domain nonce
 *   16..47: IPv4 addresses, 4 bytes each (network order), unused ones zero
 *   48..63: with the shm bit, the core's shared-memory token: host (8), pid (4), nonce (4)
 * The core's business card ("sctpt1 <udp> <sctp> <ip>... [shm=<host>.<pid>.<nonce>]")
 * follows from it.
 */
#ifndef SCTP_PROTO_H
#define SCTP_PROTO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/sm_bytes.h"

#define SCTP_PROTO_VERSION 1
#define SCTP_HDR_LEN 40

#define SCTP_CTX_CTRL 0x100u /* domain-to-domain control */
#define SCTP_CTX_EP 0x200u   /* + endpoint index */
#define SCTP_MAX_EPS 256u    /* endpoints per domain */

enum sctp_op {
	SCTP_OP_MSG = 1,      /* fi_send & co. */
	SCTP_OP_TAGGED = 2,   /* fi_tsend & co. */
	SCTP_OP_ACK = 3,      /* "your message ack_id was delivered" (FI_DELIVERY_COMPLETE) */
	SCTP_OP_QP_HELLO = 4, /* RMA: "my queue pair for you is number data" */
	SCTP_OP_QP_READY = 5, /* RMA: "mine is connected to yours": send RDMA now */
};

#define SCTP_HF_CQ_DATA 0x1u /* data carries remote CQ data */
#define SCTP_HF_ACK_REQ 0x2u /* answer with SCTP_OP_ACK once delivered */
#define SCTP_HF_ALL (SCTP_HF_CQ_DATA | SCTP_HF_ACK_REQ)

struct sctp_hdr {
	uint8_t version, op;
	uint16_t flags;
	uint32_t src_ep;
	uint64_t src_dom;
	uint64_t tag, data, ack_id;
};

static inline void sctp_hdr_encode(const struct sctp_hdr *h, uint8_t out[SCTP_HDR_LEN])
{
	out[0] = SCTP_PROTO_VERSION;
	out[1] = h->op;
	sm_put_be16(out + 2, h->flags);
	sm_put_be32(out + 4, h->src_ep);
	sm_put_be64(out + 8, h->src_dom);
	sm_put_be64(out + 16, h->tag);
	sm_put_be64(out + 24, h->data);
	sm_put_be64(out + 32, h->ack_id);
}

/* 0, or -EPROTO for a message that is not ours to take (short, other version, unknown op or
 * flags, payload on a control op). */
static inline int sctp_hdr_decode(struct sctp_hdr *h, const uint8_t *buf, size_t len)
{
	if (len < SCTP_HDR_LEN || buf[0] != SCTP_PROTO_VERSION)
		return -EPROTO;
	h->version = buf[0];
	h->op = buf[1];
	h->flags = sm_get_be16(buf + 2);
	h->src_ep = sm_get_be32(buf + 4);
	h->src_dom = sm_get_be64(buf + 8);
	h->tag = sm_get_be64(buf + 16);
	h->data = sm_get_be64(buf + 24);
	h->ack_id = sm_get_be64(buf + 32);
	if (h->op < SCTP_OP_MSG || h->op > SCTP_OP_QP_READY || (h->flags & ~SCTP_HF_ALL) ||
	    h->src_ep >= SCTP_MAX_EPS)
		return -EPROTO;
	if (h->op != SCTP_OP_MSG && h->op != SCTP_OP_TAGGED && (len != SCTP_HDR_LEN || h->flags))
		return -EPROTO;
	return 0;
}

#define SCTP_ADDR_VERSION 1
#define SCTP_ADDR_IPS 8
#define SCTP_ADDR_LEN 64
#define SCTP_ADDR_SHM 0x80u

struct sctp_addr {
	uint8_t naddrs;
	uint16_t ep;
	uint16_t udp_port, sctp_port;
	uint64_t nonce;
	uint32_t ips[SCTP_ADDR_IPS]; /* network order */
	int shm;                     /* the shared-memory token is there */
	uint64_t shm_host;
	uint32_t shm_pid, shm_nonce;
};

static inline void sctp_addr_encode(const struct sctp_addr *a, uint8_t out[SCTP_ADDR_LEN])
{
	memset(out, 0, SCTP_ADDR_LEN);
	out[0] = SCTP_ADDR_VERSION;
	out[1] = (uint8_t)(a->naddrs | (a->shm ? SCTP_ADDR_SHM : 0));
	sm_put_be16(out + 2, a->ep);
	sm_put_be16(out + 4, a->udp_port);
	sm_put_be16(out + 6, a->sctp_port);
	sm_put_be64(out + 8, a->nonce);
	for (int i = 0; i < a->naddrs && i < SCTP_ADDR_IPS; i++)
		memcpy(out + 16 + 4 * i, &a->ips[i], 4);
	if (a->shm) {
		sm_put_be64(out + 48, a->shm_host);
		sm_put_be32(out + 56, a->shm_pid);
		sm_put_be32(out + 60, a->shm_nonce);
	}
}

static inline int sctp_addr_decode(struct sctp_addr *a, const uint8_t *buf, size_t len)
{
	uint8_t n = buf[1] & (uint8_t)~SCTP_ADDR_SHM;

	if (len < SCTP_ADDR_LEN || buf[0] != SCTP_ADDR_VERSION || n == 0 || n > SCTP_ADDR_IPS)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->naddrs = n;
	if (buf[1] & SCTP_ADDR_SHM) {
		a->shm = 1;
		a->shm_host = sm_get_be64(buf + 48);
		a->shm_pid = sm_get_be32(buf + 56);
		a->shm_nonce = sm_get_be32(buf + 60);
	}
	a->ep = sm_get_be16(buf + 2);
	a->udp_port = sm_get_be16(buf + 4);
	a->sctp_port = sm_get_be16(buf + 6);
	a->nonce = sm_get_be64(buf + 8);
	for (int i = 0; i < a->naddrs; i++)
		memcpy(&a->ips[i], buf + 16 + 4 * i, 4);
	if (a->ep >= SCTP_MAX_EPS || a->udp_port == 0 || a->sctp_port == 0)
		return -EINVAL;
	return 0;
}

#endif /* SCTP_PROTO_H */
