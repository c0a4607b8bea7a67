/* The wire layer: CRC32c against RFC 3720's vectors (hardware and table), packets built and
 * parsed back, and hostile packets (lengths past the end, short chunks, bad counts) refused. */
#include "sctpe_crc32c.h"
#include "sctpe_packet.h"

#include <string.h>

#include "common/sm_bytes.h"
#include "common/sm_check.h"

/* RFC 3720 B.4, and the common "123456789" check value. */
TEST(crc32c_matches_rfc3720_vectors)
{
	uint8_t b[48];
	memset(b, 0, 32);
	CHECK_EQ(sctpe_crc32c(b, 32), 0x8a9136aau);
	CHECK_EQ(sctpe_crc32c_sw(0, b, 32), 0x8a9136aau);
	memset(b, 0xff, 32);
	CHECK_EQ(sctpe_crc32c(b, 32), 0x62a8ab43u);
	CHECK_EQ(sctpe_crc32c_sw(0, b, 32), 0x62a8ab43u);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	CHECK_EQ(sctpe_crc32c(b, 32), 0x46dd794eu);
	CHECK_EQ(sctpe_crc32c_sw(0, b, 32), 0x46dd794eu);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	CHECK_EQ(sctpe_crc32c(b, 32), 0x113fdb5cu);
	CHECK_EQ(sctpe_crc32c_sw(0, b, 32), 0x113fdb5cu);
	static const uint8_t iscsi[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
	CHECK_EQ(sctpe_crc32c(iscsi, 48), 0xd9963a56u);
	CHECK_EQ(sctpe_crc32c_sw(0, iscsi, 48), 0xd9963a56u);
	CHECK_EQ(sctpe_crc32c("123456789", 9), 0xe3069283u);
	printf("     (crc32c by %s)\n", sctpe_crc32c_hw() ? "SSE4.2" : "table");
}

/* Any split of the input, any alignment: hardware, table and extension agree. */
TEST(crc32c_extends_and_agrees_at_every_alignment)
{
	uint8_t b[300];
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 7 + 3);
	for (size_t off = 0; off < 9; off++) {
		for (size_t len = 0; len + off <= sizeof(b); len += 13) {
			uint32_t whole = sctpe_crc32c(b + off, len);
			CHECK_EQ(whole, sctpe_crc32c_sw(0, b + off, len), "off %zu len %zu", off, len);
			size_t cut = len / 3;
			uint32_t part = sctpe_crc32c_extend(sctpe_crc32c(b + off, cut), b + off + cut,
							    len - cut);
			CHECK_EQ(whole, part, "off %zu len %zu", off, len);
		}
	}
}

/* Lengths that take the interleaved blocks (and leave every kind of remainder): hardware and
 * table agree, whole and in pieces. */
TEST(crc32c_agrees_across_block_sizes)
{
	static uint8_t b[10000];
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < sizeof(b); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (uint8_t)x;
	}
	for (size_t len = 0; len + 8 <= sizeof(b); len = len < 800 ? len + 7 : len + 377) {
		for (size_t off = 0; off < 8; off += 3) {
			uint32_t whole = sctpe_crc32c(b + off, len);
			CHECK_EQ(whole, sctpe_crc32c_sw(0, b + off, len), "off %zu len %zu", off, len);
			size_t cut = len / 2 + 5 > len ? len : len / 2 + 5;
			CHECK_EQ(whole, sctpe_crc32c_extend(sctpe_crc32c(b + off, cut), b + off + cut,
							    len - cut), "off %zu len %zu", off, len);
		}
	}
}

TEST(packet_built_parses_back_with_checksum)
{
	uint8_t buf[1500];
	struct sctpe_pb b;
	sctpe_pb_init(&b, buf, sizeof(buf), 5000, 5001, 0x11223344u);
	/* INIT with parameters: an odd-length one in the middle and at the end */
	uint8_t *c = sctpe_pb_open(&b, SCTPE_INIT, 0, SCTPE_INIT_FIXED_LEN);
	REQUIRE(c);
	sm_put_be32(c + SCTPE_INIT_OFF_ITAG, 0xdeadbeefu);
	sm_put_be32(c + SCTPE_INIT_OFF_ARWND, 1u << 22);
	sm_put_be16(c + SCTPE_INIT_OFF_OS, 16);
	sm_put_be16(c + SCTPE_INIT_OFF_MIS, 17);
	sm_put_be32(c + SCTPE_INIT_OFF_ITSN, 77);
	uint8_t ext[3] = {SCTPE_I_DATA, SCTPE_FORWARD_TSN, SCTPE_I_FORWARD_TSN};
	CHECK_EQ(sctpe_pb_param(&b, SCTPE_P_SUPPORTED_EXT, ext, 3), 0);
	CHECK_EQ(sctpe_pb_param(&b, SCTPE_P_ECN, NULL, 0), 0);
	CHECK_EQ(sctpe_pb_param(&b, SCTPE_P_HOST_NAME, "abcde", 5), 0);
	sctpe_pb_close(&b, c);
	CHECK_EQ(sm_get_be16(c + 2), 20 + 8 + 4 + 9, "chunk length without the last padding");
	struct sctpe_data d = {.flags = SCTPE_DATA_B | SCTPE_DATA_E, .sid = 3, .tsn = 77,
			       .mid = 9, .ppid = 0x534d5031u};
	uint8_t *pl = sctpe_pb_data(&b, &d, 5);
	REQUIRE(pl);
	memcpy(pl, "hello", 5);
	d.idata = 1;
	d.flags = SCTPE_DATA_E;
	d.fsn = 4;
	d.tsn = 78;
	d.mid = 100000;
	pl = sctpe_pb_data(&b, &d, 2);
	REQUIRE(pl);
	memcpy(pl, "hi", 2);
	size_t len = sctpe_pb_finish(&b, 1);
	CHECK_EQ(len % 4, 0);
	CHECK_EQ(sctpe_crc32c_check(buf, len), 0);
	buf[len - 1] ^= 1; /* padding is covered too */
	CHECK(sctpe_crc32c_check(buf, len) != 0);
	buf[len - 1] ^= 1;

	struct sctpe_hdr h;
	struct sctpe_iter it;
	struct sctpe_chunk ch;
	REQUIRE(sctpe_packet_parse(buf, len, &h, &it) == 0);
	CHECK_EQ(h.sport, 5000);
	CHECK_EQ(h.dport, 5001);
	CHECK_EQ(h.vtag, 0x11223344u);
	REQUIRE(sctpe_chunk_next(&it, &ch) == 1);
	CHECK_EQ(ch.type, SCTPE_INIT);
	struct sctpe_init in;
	REQUIRE(sctpe_init_decode(&ch, &in) == 0);
	CHECK_EQ(in.itag, 0xdeadbeefu);
	CHECK_EQ(in.os, 16);
	CHECK_EQ(in.mis, 17);
	CHECK_EQ(in.itsn, 77);
	struct sctpe_iter pi;
	struct sctpe_tlv t;
	sctpe_tlv_iter(&pi, in.params, in.plen);
	int np = 0;
	while (sctpe_tlv_next(&pi, &t) == 1) {
		np++;
		if (t.type == SCTPE_P_SUPPORTED_EXT)
			CHECK(t.vlen == 3 && t.val[0] == SCTPE_I_DATA);
		if (t.type == SCTPE_P_HOST_NAME)
			CHECK(t.vlen == 5 && memcmp(t.val, "abcde", 5) == 0);
	}
	CHECK_EQ(np, 3);
	REQUIRE(sctpe_chunk_next(&it, &ch) == 1);
	REQUIRE(sctpe_data_decode(&ch, &d) == 0);
	CHECK(!d.idata && d.tsn == 77 && d.sid == 3 && d.mid == 9 && d.ppid == 0x534d5031u);
	CHECK(d.len == 5 && memcmp(d.payload, "hello", 5) == 0);
	REQUIRE(sctpe_chunk_next(&it, &ch) == 1);
	REQUIRE(sctpe_data_decode(&ch, &d) == 0);
	CHECK(d.idata && d.tsn == 78 && d.mid == 100000 && d.fsn == 4 && d.ppid == 0);
	CHECK(d.len == 2 && memcmp(d.payload, "hi", 2) == 0);
	CHECK_EQ(sctpe_chunk_next(&it, &ch), 0);
}

TEST(builder_refuses_what_does_not_fit)
{
	uint8_t buf[64];
	struct sctpe_pb b;
	sctpe_pb_init(&b, buf, sizeof(buf), 1, 2, 3);
	CHECK(sctpe_pb_chunk(&b, SCTPE_COOKIE_ACK, 0, 4));
	CHECK(!sctpe_pb_chunk(&b, SCTPE_ABORT, 0, 64));
	CHECK(!sctpe_pb_chunk(&b, SCTPE_ABORT, 0, 2), "shorter than a chunk header");
	struct sctpe_data d = {.flags = 3};
	CHECK(!sctpe_pb_data(&b, &d, 40));
	CHECK(sctpe_pb_data(&b, &d, 29));
	CHECK_EQ(b.len, 64);
}

/* Chunks whose lengths lie: each is refused and nothing past the packet is read (run under
 * ASan with exact-size copies). */
TEST(parser_refuses_lying_lengths)
{
	uint8_t pkt[32];
	memset(pkt, 0, sizeof(pkt));
	struct sctpe_hdr h;
	struct sctpe_iter it;
	struct sctpe_chunk ch;
	CHECK_EQ(sctpe_packet_parse(pkt, 11, &h, &it), -EMSGSIZE);
	/* chunk length past the packet */
	pkt[12] = SCTPE_DATA;
	sm_put_be16(pkt + 14, 40);
	REQUIRE(sctpe_packet_parse(pkt, 32, &h, &it) == 0);
	CHECK_EQ(sctpe_chunk_next(&it, &ch), -EBADMSG);
	CHECK_EQ(sctpe_chunk_next(&it, &ch), 0, "nothing after a bad length");
	/* chunk length under the header */
	sm_put_be16(pkt + 14, 3);
	REQUIRE(sctpe_packet_parse(pkt, 32, &h, &it) == 0);
	CHECK_EQ(sctpe_chunk_next(&it, &ch), -EBADMSG);
	/* a trailing fragment of a header */
	sm_put_be16(pkt + 14, 16);
	REQUIRE(sctpe_packet_parse(pkt, 30, &h, &it) == 0);
	CHECK_EQ(sctpe_chunk_next(&it, &ch), 1);
	CHECK_EQ(sctpe_chunk_next(&it, &ch), -EBADMSG);
	/* DATA shorter than its fixed part */
	sm_put_be16(pkt + 14, 12);
	REQUIRE(sctpe_packet_parse(pkt, 24, &h, &it) == 0);
	REQUIRE(sctpe_chunk_next(&it, &ch) == 1);
	struct sctpe_data d;
	CHECK_EQ(sctpe_data_decode(&ch, &d), -EBADMSG);
	/* SACK claiming more gap blocks than it has */
	pkt[12] = SCTPE_SACK;
	sm_put_be16(pkt + 14, 20);
	sm_put_be16(pkt + 12 + SCTPE_SACK_OFF_NGAPS, 2);
	REQUIRE(sctpe_packet_parse(pkt, 32, &h, &it) == 0);
	REQUIRE(sctpe_chunk_next(&it, &ch) == 1);
	struct sctpe_sack s;
	CHECK_EQ(sctpe_sack_decode(&ch, &s), -EBADMSG);
	sm_put_be16(pkt + 12 + SCTPE_SACK_OFF_NGAPS, 1);
	CHECK_EQ(sctpe_sack_decode(&ch, &s), 0);
	/* a parameter running past its chunk */
	uint8_t par[8] = {0x00, 0x07, 0x00, 0x20, 1, 2, 3, 4};
	struct sctpe_tlv t;
	sctpe_tlv_iter(&it, par, sizeof(par));
	CHECK_EQ(sctpe_tlv_next(&it, &t), -EBADMSG);
	/* HEARTBEAT without its info parameter */
	pkt[12] = SCTPE_HEARTBEAT;
	sm_put_be16(pkt + 14, 4);
	REQUIRE(sctpe_packet_parse(pkt, 16, &h, &it) == 0);
	REQUIRE(sctpe_chunk_next(&it, &ch) == 1);
	CHECK_EQ(sctpe_heartbeat_decode(&ch, &t), -EBADMSG);
}

int main(void)
{
	RUN(crc32c_matches_rfc3720_vectors);
	RUN(crc32c_extends_and_agrees_at_every_alignment);
	RUN(crc32c_agrees_across_block_sizes);
	RUN(packet_built_parses_back_with_checksum);
	RUN(builder_refuses_what_does_not_fit);
	RUN(parser_refuses_lying_lengths);
	return sm_check_result();
}
