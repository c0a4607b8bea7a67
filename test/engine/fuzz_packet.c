/*
 * Fuzz target for the packet parser: the input is one SCTP packet. Every chunk is decoded by
 * its type's decoder, every parameter or error cause list walked, SACK blocks read; each
 * chunk that parses is copied into a fresh packet by the builder, which must parse back to
 * the same chunks. Nothing may read outside the input (run with exact-size copies).
 */
#include "sctpe_crc32c.h"
#include "sctpe_packet.h"

#include <stdlib.h>
#include <string.h>

static volatile unsigned sink;

static void walk_tlvs(const uint8_t *p, size_t len)
{
	struct sctpe_iter it;
	struct sctpe_tlv t;
	sctpe_tlv_iter(&it, p, len);
	while (sctpe_tlv_next(&it, &t) == 1)
		for (size_t i = 0; i < t.vlen; i++)
			sink += t.val[i];
}

static void decode(const struct sctpe_chunk *c)
{
	struct sctpe_data d;
	struct sctpe_init in;
	struct sctpe_sack s;
	struct sctpe_tlv t;
	uint32_t cum;
	switch (c->type) {
	case SCTPE_DATA:
	case SCTPE_I_DATA:
		if (sctpe_data_decode(c, &d) == 0 && d.len) /* the payload is inside the chunk */
			sink += d.payload[0] + d.payload[d.len - 1];
		break;
	case SCTPE_INIT:
	case SCTPE_INIT_ACK:
		if (sctpe_init_decode(c, &in) == 0)
			walk_tlvs(in.params, in.plen);
		break;
	case SCTPE_SACK:
		if (sctpe_sack_decode(c, &s) == 0) {
			for (int i = 0; i < s.ngaps; i++)
				sink += sctpe_sack_gap_start(&s, i) + sctpe_sack_gap_end(&s, i);
			for (int i = 0; i < s.ndups; i++)
				sink += s.dups[4 * i + 3];
		}
		break;
	case SCTPE_HEARTBEAT:
	case SCTPE_HEARTBEAT_ACK:
		sctpe_heartbeat_decode(c, &t);
		break;
	case SCTPE_ABORT:
	case SCTPE_ERROR:
		walk_tlvs(c->p + SCTPE_CHUNK_HDR_LEN, c->len - (size_t)SCTPE_CHUNK_HDR_LEN);
		break;
	case SCTPE_SHUTDOWN:
		sctpe_shutdown_decode(c, &cum);
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sctpe_hdr h, h2;
	struct sctpe_iter it, it2;
	struct sctpe_chunk c, c2;
	static uint8_t out[SCTPE_MAX_PACKET + 4]; /* the last chunk's padding may be added */
	if (sctpe_packet_parse(data, size, &h, &it) != 0)
		return 0;
	sctpe_crc32c_check(data, size);
	struct sctpe_pb b;
	sctpe_pb_init(&b, out, sizeof(out), h.sport, h.dport, h.vtag);
	int n = 0;
	while (sctpe_chunk_next(&it, &c) == 1) {
		decode(&c);
		uint8_t *cp = sctpe_pb_chunk(&b, c.type, c.flags, c.len);
		if (!cp)
			abort(); /* a chunk of the input always fits a packet as large */
		memcpy(cp + SCTPE_CHUNK_HDR_LEN, c.p + SCTPE_CHUNK_HDR_LEN, c.len - 4u);
		n++;
	}
	size_t len = sctpe_pb_finish(&b, 1);
	if (len > SCTPE_MAX_PACKET)
		return 0;
	if (sctpe_crc32c_check(out, len) != 0 || sctpe_packet_parse(out, len, &h2, &it2) != 0)
		abort();
	/* the rebuilt packet holds the same chunks */
	sctpe_packet_parse(data, size, &h, &it);
	for (int i = 0; i < n; i++) {
		if (sctpe_chunk_next(&it, &c) != 1 || sctpe_chunk_next(&it2, &c2) != 1 ||
		    c.type != c2.type || c.flags != c2.flags || c.len != c2.len ||
		    memcmp(c.p, c2.p, c.len) != 0)
			abort();
	}
	if (sctpe_chunk_next(&it2, &c2) != 0)
		abort();
	return 0;
}
