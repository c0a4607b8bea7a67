/*
 * nvm_proto.h - the VM's wire format on a link, and nothing else.
 *
 * Every datagram starts with a 16-byte versioned base header (little-endian):
 *   u8 magic (0xa7) u8 version (1) u8 kind u8 flags(0)
 *   u32 dst_prog  u16 dst_trig  u16 reserved(0)  u32 src_prog
 * kind MSG:       payload = the PDL message bytes (<= NVM_MSG_MAX)
 * kind MGMT_REQ:  payload = u8 op, u8 0, u16 0, u32 req_id, then the op's data
 *                 (LOAD/REPLACE: module image; SEND: message bytes, dst_trig used)
 * kind MGMT_RESP: payload = u32 req_id, i32 status (0 or -errno), then a
 *                 NUL-free error text
 * dst_prog names the program for MSG and for the management ops.
 */
#ifndef NVM_PROTO_H
#define NVM_PROTO_H

#include <stdint.h>
#include <string.h>

#include "common/sm_bytes.h"

#define NVM_WIRE_MAGIC 0xa7
#define NVM_WIRE_VERSION 1
#define NVM_HDR_LEN 16
#define NVM_MGMT_REQ_LEN 8
#define NVM_MGMT_RESP_LEN 8

enum nvm_wire_kind { NVM_K_MSG = 1, NVM_K_MGMT_REQ = 2, NVM_K_MGMT_RESP = 3 };
enum nvm_mgmt_op { NVM_MOP_LOAD = 1, NVM_MOP_UNLOAD, NVM_MOP_REPLACE, NVM_MOP_RUN, NVM_MOP_SEND };

struct nvm_hdr {
	uint8_t kind;
	uint32_t dst_prog;
	uint16_t dst_trig;
	uint32_t src_prog;
};

static inline void nvm_hdr_put(uint8_t *p, const struct nvm_hdr *h)
{
	memset(p, 0, NVM_HDR_LEN);
	p[0] = NVM_WIRE_MAGIC;
	p[1] = NVM_WIRE_VERSION;
	p[2] = h->kind;
	sm_put_le32(p + 4, h->dst_prog);
	sm_put_le16(p + 8, h->dst_trig);
	sm_put_le32(p + 12, h->src_prog);
}

/* 0, or -1 if p does not hold a valid header of this version. */
static inline int nvm_hdr_get(const uint8_t *p, size_t len, struct nvm_hdr *h)
{
	if (len < NVM_HDR_LEN || p[0] != NVM_WIRE_MAGIC || p[1] != NVM_WIRE_VERSION || p[3] ||
	    p[10] || p[11])
		return -1;
	h->kind = p[2];
	h->dst_prog = sm_get_le32(p + 4);
	h->dst_trig = sm_get_le16(p + 8);
	h->src_prog = sm_get_le32(p + 12);
	return 0;
}

#endif
