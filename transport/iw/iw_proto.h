/*
 * iw_proto.h: the iWARP-over-SCTP wire format (DDP RFC 5041 over SCTP RFC 5043, RDMAP RFC 5040,
 * atomics RFC 7306). Nothing but the wire format lives here. All fields are big-endian.
 * One DDP segment = one sctpt message on the RNIC's context base + qpn (no MPA: SCTP frames).
 *
 * DDP control (byte 0) and RDMAP control (byte 1), RFC 5041 s4, RFC 5040 s4.1:
 *   byte 0: | T(1) | L(1) | Rsvd(4) | DV(2) |       DV = IW_DDP_VERSION (1)
 *   byte 1: | RV(2) | Rsv(2) | Opcode(4) |          RV = IW_RDMAP_VERSION (1)
 *
 * Tagged header (T=1), 14 bytes:
 *   0: ctrl  1: rdmap ctrl  2..5: STag  6..13: TO (64 bit)
 * Untagged header (T=0), 18 bytes:
 *   0: ctrl  1: rdmap ctrl  2..5: Invalidate STag (Send with Invalidate, else 0)
 *   6..9: QN  10..13: MSN  14..17: MO
 * Read Request payload (QN 1), 28 bytes, RFC 5040 s4.4:
 *   0..3 sink STag  4..11 sink TO  12..15 RDMA read message size
 *   16..19 source STag  20..27 source TO
 * Terminate payload (QN 2), 4 bytes, RFC 5040 s4.8:
 *   byte 0: | layer(4) | etype(4) |  byte 1: error code  bytes 2..3: | hdrct(3) | rsvd(13) |
 * Atomic Request payload (QN 3), 52 bytes, RFC 7306 s5.1:
 *   0..3 rsvd|atomic opcode(4)  4..7 req id  8..11 remote STag  12..19 remote TO
 *   20..27 add/swap data  28..35 add/swap mask  36..43 compare data  44..51 compare mask
 * Atomic Response payload (QN 3 on responder side, opcode IW_OP_ATOMIC_RESP), 12 bytes:
 *   0..3 original request id  4..11 original remote data
 */
#ifndef IW_PROTO_H
#define IW_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define IW_DDP_VERSION 1
#define IW_RDMAP_VERSION 1
#define IW_SCTP_PPID_DDP 16 /* RFC 5043 payload protocol identifier for DDP segments */

enum iw_opcode {
	IW_OP_WRITE = 0,
	IW_OP_READ_REQ = 1,
	IW_OP_READ_RESP = 2,
	IW_OP_SEND = 3,
	IW_OP_SEND_INV = 4,
	IW_OP_SEND_SE = 5,
	IW_OP_SEND_SE_INV = 6,
	IW_OP_TERMINATE = 7,
	IW_OP_ATOMIC_REQ = 10,  /* RFC 7306 */
	IW_OP_ATOMIC_RESP = 11, /* RFC 7306 */
};

/* Untagged queue numbers, RFC 5040 s5.1 and RFC 7306. */
enum iw_qn { IW_QN_SEND = 0, IW_QN_READ_REQ = 1, IW_QN_TERMINATE = 2, IW_QN_ATOMIC = 3 };

enum iw_atomic_op { IW_ATOMIC_FADD = 0, IW_ATOMIC_CSWAP = 1 };

/* Terminate layer (RFC 5040 s4.8). */
enum iw_term_layer { IW_LAYER_RDMAP = 0, IW_LAYER_DDP = 1, IW_LAYER_LLP = 2 };

#define IW_DDP_T 0x80u
#define IW_DDP_L 0x40u
/*
 * A bundle (not in RFC 5043, which puts one DDP segment in each SCTP message): several ordered
 * segments of one QP in one message: this byte (DDP's reserved bits set: never a segment's
 * first), then each segment behind its 4-byte big-endian length. The message's fence covers
 * them all; they are handled in order as if each had come alone.
 */
#define IW_BUNDLE_MARK 0x3cu
#define IW_TAGGED_HLEN 14
#define IW_UNTAGGED_HLEN 18
#define IW_READ_REQ_LEN 28
#define IW_TERM_LEN 4
#define IW_ATOMIC_REQ_LEN 52
#define IW_ATOMIC_RESP_LEN 12

struct iw_hdr {
	uint8_t tagged, last, opcode;
	uint32_t stag;     /* tagged: STag; untagged: invalidate STag */
	uint64_t to;       /* tagged only */
	uint32_t qn, msn, mo; /* untagged only */
};

struct iw_read_req {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
	uint32_t src_stag;
	uint64_t src_to;
};

struct iw_term {
	uint8_t layer, etype, ecode;
	uint8_t hdrct;
};

struct iw_atomic_req {
	uint8_t op;
	uint32_t req_id, stag;
	uint64_t to, add_swap, add_swap_mask, cmp, cmp_mask;
};

struct iw_atomic_resp {
	uint32_t req_id;
	uint64_t orig;
};

/* Encoders return bytes written or -EINVAL; decoders bytes consumed or -EPROTO/-EINVAL. */
int iw_hdr_encode(const struct iw_hdr *h, uint8_t *buf, size_t len);
int iw_hdr_decode(struct iw_hdr *h, const uint8_t *buf, size_t len);
int iw_read_req_encode(const struct iw_read_req *r, uint8_t *buf, size_t len);
int iw_read_req_decode(struct iw_read_req *r, const uint8_t *buf, size_t len);
int iw_term_encode(const struct iw_term *t, uint8_t *buf, size_t len);
int iw_term_decode(struct iw_term *t, const uint8_t *buf, size_t len);
int iw_atomic_req_encode(const struct iw_atomic_req *a, uint8_t *buf, size_t len);
int iw_atomic_req_decode(struct iw_atomic_req *a, const uint8_t *buf, size_t len);
int iw_atomic_resp_encode(const struct iw_atomic_resp *a, uint8_t *buf, size_t len);
int iw_atomic_resp_decode(struct iw_atomic_resp *a, const uint8_t *buf, size_t len);

#endif /* IW_PROTO_H */
