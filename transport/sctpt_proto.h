/*
 * sctpt wire format: the envelope in front of every SCTP user message the core sends.
 * Fixed-width big-endian fields; the version byte comes first so it can change.
 *
 *  0        1        2        3
 *  version  op       flags    reserved(0)
 *  context (32)
 *  tag (32, signed)
 *  seq (32)            per (peer, context) message sequence, 0 when UNORDERED (but
 *                      with MSGID: the sender's per-peer id of an unordered message)
 *  msg_len (64)        length of the whole message
 *  offset (64)         where this fragment's payload goes in the message
 * followed by the payload: min(frag_size, msg_len - offset) bytes.
 */
#ifndef SCTPT_PROTO_H
#define SCTPT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define SCTPT_PROTO_VERSION 1
#define SCTPT_HDR_LEN 32
#define SCTPT_PPID 0x534d5031u /* "SMP1": SCTP payload protocol id of our messages */
#define SCTPT_MAX_MSG (1ull << 40) /* larger announced lengths are rejected as malformed */

enum sctpt_op {
	SCTPT_OP_DATA = 1,  /* a message or one fragment of it */
	SCTPT_OP_CLOSE = 2, /* the sender closes its endpoint: no more data will follow;
			     * empty, stream 0, FIRST|LAST|UNORDERED */
};

#define SCTPT_F_FIRST 0x01     /* offset == 0 */
#define SCTPT_F_LAST 0x02      /* offset + payload == msg_len */
#define SCTPT_F_UNORDERED 0x04 /* not sequenced per (peer, context) */
#define SCTPT_F_MSGID 0x08     /* with UNORDERED, to a striped peer: seq is the sender's
				* per-peer id of the message (nonzero), for duplicate detection */
#define SCTPT_F_ALL (SCTPT_F_FIRST | SCTPT_F_LAST | SCTPT_F_UNORDERED | SCTPT_F_MSGID)

struct sctpt_hdr {
	uint8_t version;
	uint8_t op;
	uint8_t flags;
	uint32_t context;
	int32_t tag;
	uint32_t seq;
	uint64_t msg_len;
	uint64_t offset;
};

void sctpt_hdr_encode(const struct sctpt_hdr *h, uint8_t out[SCTPT_HDR_LEN]);
/* Decodes and checks the header alone: version, op, reserved bits, lengths. -EPROTO if bad. */
int sctpt_hdr_decode(const uint8_t *buf, size_t len, struct sctpt_hdr *h);
/* Checks a decoded header against the payload that came with it and the sender's fragment
 * size rules: FIRST iff offset 0, LAST iff the payload ends the message, payload within the
 * message. -EPROTO if not. */
int sctpt_hdr_check_payload(const struct sctpt_hdr *h, size_t payload_len);

/* Business card: "sctpt1 <udp port> <sctp port> <ipv4> [<ipv4> ...] [shm=<token>]"; the
 * token (host identity, pid, nonce) names the endpoint's shared-memory socket. */
#define SCTPT_SHM_TOKEN_MAX 64
struct sctpt_card_info {
	uint16_t udp_port;
	uint16_t sctp_port;
	int naddrs;
	uint32_t addrs[8]; /* network byte order, as in struct in_addr */
	char shm[SCTPT_SHM_TOKEN_MAX]; /* "" when the card has none */
};
int sctpt_card_format(const struct sctpt_card_info *c, char *buf, size_t len);
/* -EINVAL with sctpt_last_error() naming the bad field. */
int sctpt_card_parse(const char *s, struct sctpt_card_info *c);

/*
 * Path probes, beside SCTP in the same UDP port: 12 bytes, whose first four (where SCTP has
 * its two ports, never both 0) are zero, then "SMPR", the type, three zero bytes. A PING is
 * answered with a PONG; either one says the path works.
 */
#define SCTPT_PROBE_LEN 12
enum { SCTPT_PROBE_PING = 1, SCTPT_PROBE_PONG = 2 };
/* A datagram that is a probe rather than SCTP. */
#define SCTPT_IS_PROBE(b) ((b)[0] == 0 && (b)[1] == 0 && (b)[2] == 0 && (b)[3] == 0)
void sctpt_probe_encode(int type, uint8_t out[SCTPT_PROBE_LEN]);
/* The type of a probe datagram, or -EPROTO. */
int sctpt_probe_decode(const uint8_t *buf, size_t len);

#endif
