/* Envelope and business-card codecs; everything received is checked here first. */
#include "sctpt_proto.h"
#include "sctpt_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sm_bytes.h"

void sctpt_hdr_encode(const struct sctpt_hdr *h, uint8_t out[SCTPT_HDR_LEN])
{
	out[0] = h->version;
	out[1] = h->op;
	out[2] = h->flags;
	out[3] = 0;
	sm_put_be32(out + 4, h->context);
	sm_put_be32(out + 8, (uint32_t)h->tag);
	sm_put_be32(out + 12, h->seq);
	sm_put_be64(out + 16, h->msg_len);
	sm_put_be64(out + 24, h->offset);
}

int sctpt_hdr_decode(const uint8_t *buf, size_t len, struct sctpt_hdr *h)
{
	if (len < SCTPT_HDR_LEN)
		return sctpt_err(-EPROTO, "envelope truncated: %zu of %d bytes", len, SCTPT_HDR_LEN);
	h->version = buf[0];
	h->op = buf[1];
	h->flags = buf[2];
	h->context = sm_get_be32(buf + 4);
	h->tag = (int32_t)sm_get_be32(buf + 8);
	h->seq = sm_get_be32(buf + 12);
	h->msg_len = sm_get_be64(buf + 16);
	h->offset = sm_get_be64(buf + 24);
	if (h->version != SCTPT_PROTO_VERSION)
		return sctpt_err(-EPROTO, "envelope version %u, expected %u", h->version,
				 SCTPT_PROTO_VERSION);
	if (h->op != SCTPT_OP_DATA && h->op != SCTPT_OP_CLOSE)
		return sctpt_err(-EPROTO, "unknown envelope op %u", h->op);
	if (h->op == SCTPT_OP_CLOSE && (h->msg_len != 0 || h->seq != 0))
		return sctpt_err(-EPROTO, "CLOSE with a payload or a sequence number");
	if ((h->flags & ~SCTPT_F_ALL) || buf[3] != 0)
		return sctpt_err(-EPROTO, "reserved envelope bits set (flags 0x%x)", h->flags);
	if (h->msg_len > SCTPT_MAX_MSG || h->offset > h->msg_len)
		return sctpt_err(-EPROTO, "envelope offset %llu beyond message length %llu",
				 (unsigned long long)h->offset, (unsigned long long)h->msg_len);
	if ((h->flags & SCTPT_F_MSGID) &&
	    (!(h->flags & SCTPT_F_UNORDERED) || h->seq == 0 || h->op != SCTPT_OP_DATA))
		return sctpt_err(-EPROTO, "message id flag on an ordered, unnumbered or control "
				 "message");
	if ((h->flags & SCTPT_F_UNORDERED) && !(h->flags & SCTPT_F_MSGID) && h->seq != 0)
		return sctpt_err(-EPROTO, "unordered message with sequence %u", h->seq);
	return 0;
}

int sctpt_hdr_check_payload(const struct sctpt_hdr *h, size_t payload_len)
{
	int first = (h->flags & SCTPT_F_FIRST) != 0;
	int last = (h->flags & SCTPT_F_LAST) != 0;
	if (payload_len > h->msg_len - h->offset)
		return sctpt_err(-EPROTO, "fragment at %llu with %zu bytes overruns message of %llu",
				 (unsigned long long)h->offset, payload_len,
				 (unsigned long long)h->msg_len);
	if (first != (h->offset == 0))
		return sctpt_err(-EPROTO, "FIRST flag %d at offset %llu", first,
				 (unsigned long long)h->offset);
	if (last != (h->offset + payload_len == h->msg_len))
		return sctpt_err(-EPROTO, "LAST flag %d with %llu bytes left", last,
				 (unsigned long long)(h->msg_len - h->offset - payload_len));
	if (!last && payload_len == 0)
		return sctpt_err(-EPROTO, "empty fragment in the middle of a message");
	return 0;
}

int sctpt_card_format(const struct sctpt_card_info *c, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "sctpt1 %u %u", c->udp_port, c->sctp_port);
	for (int i = 0; i < c->naddrs && n < len; i++) {
		char a[INET_ADDRSTRLEN];
		struct in_addr in = {.s_addr = c->addrs[i]};
		inet_ntop(AF_INET, &in, a, sizeof(a));
		n += (size_t)snprintf(buf + n, len - n, " %s", a);
	}
	if (c->shm[0] && n < len)
		n += (size_t)snprintf(buf + n, len - n, " shm=%s", c->shm);
	if (n >= len)
		return sctpt_err(-ENOSPC, "business card needs %zu bytes, buffer has %zu", n + 1, len);
	return (int)n;
}

static int parse_port(const char *tok, const char *what, uint16_t *out)
{
	char *end;
	long v = strtol(tok, &end, 10);
	if (*tok == '\0' || *end != '\0' || v <= 0 || v > 65535)
		return sctpt_err(-EINVAL, "business card: bad %s '%.16s'", what, tok);
	*out = (uint16_t)v;
	return 0;
}

int sctpt_card_parse(const char *s, struct sctpt_card_info *c)
{
	char copy[SCTPT_CARD_MAX_LEN];
	char *save = NULL, *tok;
	size_t n = strnlen(s, sizeof(copy));
	if (n == sizeof(copy))
		return sctpt_err(-EINVAL, "business card longer than %zu bytes", sizeof(copy) - 1);
	memcpy(copy, s, n + 1);
	memset(c, 0, sizeof(*c));
	tok = strtok_r(copy, " ", &save);
	if (!tok || strcmp(tok, "sctpt1") != 0)
		return sctpt_err(-EINVAL, "business card '%.40s' does not start with sctpt1", s);
	tok = strtok_r(NULL, " ", &save);
	if (!tok || parse_port(tok, "UDP port", &c->udp_port))
		return sctpt_err(-EINVAL, "business card '%.40s': bad or missing UDP port", s);
	tok = strtok_r(NULL, " ", &save);
	if (!tok || parse_port(tok, "SCTP port", &c->sctp_port))
		return sctpt_err(-EINVAL, "business card '%.40s': bad or missing SCTP port", s);
	while ((tok = strtok_r(NULL, " ", &save)) != NULL) {
		struct in_addr in;
		if (strncmp(tok, "shm=", 4) == 0) {
			size_t k = strlen(tok + 4);
			if (k == 0 || k >= sizeof(c->shm) || strspn(tok + 4, "0123456789abcdef.") != k)
				return sctpt_err(-EINVAL, "business card: bad shm token '%.40s'", tok);
			if (c->shm[0])
				return sctpt_err(-EINVAL, "business card '%.40s': two shm tokens", s);
			memcpy(c->shm, tok + 4, k + 1);
			continue;
		}
		if (c->naddrs == (int)(sizeof(c->addrs) / sizeof(c->addrs[0])))
			return sctpt_err(-EINVAL, "business card '%.40s': more than %zu addresses", s,
					 sizeof(c->addrs) / sizeof(c->addrs[0]));
		if (inet_pton(AF_INET, tok, &in) != 1)
			return sctpt_err(-EINVAL, "business card: bad IPv4 address '%.20s'", tok);
		c->addrs[c->naddrs++] = in.s_addr;
	}
	if (c->naddrs == 0)
		return sctpt_err(-EINVAL, "business card '%.40s' has no address", s);
	return 0;
}

void sctpt_probe_encode(int type, uint8_t out[SCTPT_PROBE_LEN])
{
	memset(out, 0, SCTPT_PROBE_LEN);
	memcpy(out + 4, "SMPR", 4);
	out[8] = (uint8_t)type;
}

int sctpt_probe_decode(const uint8_t *buf, size_t len)
{
	if (len != SCTPT_PROBE_LEN || memcmp(buf + 4, "SMPR", 4) != 0 ||
	    (buf[8] != SCTPT_PROBE_PING && buf[8] != SCTPT_PROBE_PONG))
		return -EPROTO;
	return buf[8];
}
