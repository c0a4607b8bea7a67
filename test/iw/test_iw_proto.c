/* test_iw_proto: every iWARP header encodes to, and decodes from, the byte layout written
 * out from RFC 5040/5041/7306 (see transport/iw/iw_proto.h); malformed fields are refused. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "iw/iw_proto.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); return 1; } } while (0)

static int tagged_write_matches_layout(void)
{
	static const uint8_t want[IW_TAGGED_HLEN] = {0xc1, 0x40, 0x11, 0x22, 0x33, 0x44,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
	struct iw_hdr h = {.tagged = 1, .last = 1, .opcode = IW_OP_WRITE, .stag = 0x11223344,
			   .to = 0x0102030405060708ull}, d;
	uint8_t b[32];
	CHECK(iw_hdr_encode(&h, b, sizeof b) == IW_TAGGED_HLEN);
	CHECK(!memcmp(b, want, sizeof want));
	CHECK(iw_hdr_decode(&d, want, sizeof want) == IW_TAGGED_HLEN);
	CHECK(d.tagged && d.last && d.opcode == IW_OP_WRITE && d.stag == 0x11223344 &&
	      d.to == 0x0102030405060708ull);
	CHECK(iw_hdr_decode(&d, want, sizeof want - 1) == -EPROTO);
	return 0;
}

static int untagged_send_inv_matches_layout(void)
{
	static const uint8_t want[IW_UNTAGGED_HLEN] = {0x01, 0x44, 0xde, 0xad, 0xbe, 0xef,
		0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0x10, 0};
	struct iw_hdr h = {.opcode = IW_OP_SEND_INV, .stag = 0xdeadbeef, .qn = IW_QN_SEND,
			   .msn = 7, .mo = 4096}, d;
	uint8_t b[32];
	CHECK(iw_hdr_encode(&h, b, sizeof b) == IW_UNTAGGED_HLEN);
	CHECK(!memcmp(b, want, sizeof want));
	CHECK(iw_hdr_decode(&d, want, sizeof want) == IW_UNTAGGED_HLEN);
	CHECK(!d.tagged && !d.last && d.opcode == IW_OP_SEND_INV && d.msn == 7 && d.mo == 4096);
	return 0;
}

static int bad_versions_and_opcodes_refused(void)
{
	uint8_t b[IW_UNTAGGED_HLEN] = {0x01, 0x43};
	struct iw_hdr d;
	CHECK(iw_hdr_decode(&d, b, sizeof b) == IW_UNTAGGED_HLEN);
	b[0] = 0x02; /* DV 2 */
	CHECK(iw_hdr_decode(&d, b, sizeof b) == -EPROTO);
	b[0] = 0x01; b[1] = 0x83; /* RV 2 */
	CHECK(iw_hdr_decode(&d, b, sizeof b) == -EPROTO);
	b[1] = 0x48; /* opcode 8 */
	CHECK(iw_hdr_decode(&d, b, sizeof b) == -EPROTO);
	b[1] = 0x40; /* Write untagged */
	CHECK(iw_hdr_decode(&d, b, sizeof b) == -EPROTO);
	b[1] = 0x43; b[9] = 4; /* QN 4 */
	CHECK(iw_hdr_decode(&d, b, sizeof b) == -EPROTO);
	b[9] = 0; b[0] = 0x05; /* reserved bit */
	CHECK(iw_hdr_decode(&d, b, sizeof b) == -EPROTO);
	return 0;
}

static int read_req_matches_layout(void)
{
	static const uint8_t want[IW_READ_REQ_LEN] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2,
		0, 0, 1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 4};
	struct iw_read_req r = {1, 2, 256, 3, 4}, d;
	uint8_t b[IW_READ_REQ_LEN];
	CHECK(iw_read_req_encode(&r, b, sizeof b) == IW_READ_REQ_LEN);
	CHECK(!memcmp(b, want, sizeof want));
	CHECK(iw_read_req_decode(&d, want, sizeof want) == IW_READ_REQ_LEN);
	CHECK(d.sink_stag == 1 && d.sink_to == 2 && d.size == 256 && d.src_stag == 3 && d.src_to == 4);
	return 0;
}

static int terminate_matches_layout(void)
{
	static const uint8_t want[IW_TERM_LEN] = {0x12, 0x05, 0x60, 0};
	struct iw_term t = {.layer = IW_LAYER_DDP, .etype = 2, .ecode = 5, .hdrct = 3}, d;
	uint8_t b[IW_TERM_LEN];
	CHECK(iw_term_encode(&t, b, sizeof b) == IW_TERM_LEN);
	CHECK(!memcmp(b, want, sizeof want));
	CHECK(iw_term_decode(&d, want, sizeof want) == IW_TERM_LEN);
	CHECK(d.layer == 1 && d.etype == 2 && d.ecode == 5 && d.hdrct == 3);
	uint8_t bad[IW_TERM_LEN] = {0x32, 0, 0, 0};
	CHECK(iw_term_decode(&d, bad, sizeof bad) == -EPROTO);
	return 0;
}

static int atomics_match_layout(void)
{
	struct iw_atomic_req a = {.op = IW_ATOMIC_CSWAP, .req_id = 9, .stag = 0xabcd, .to = 64,
				  .add_swap = 5, .add_swap_mask = ~0ull, .cmp = 6, .cmp_mask = ~0ull}, d;
	uint8_t b[IW_ATOMIC_REQ_LEN];
	CHECK(iw_atomic_req_encode(&a, b, sizeof b) == IW_ATOMIC_REQ_LEN);
	CHECK(b[3] == 1 && b[7] == 9 && b[10] == 0xab && b[11] == 0xcd && b[19] == 64 && b[27] == 5 &&
	      b[28] == 0xff && b[43] == 6);
	CHECK(iw_atomic_req_decode(&d, b, sizeof b) == IW_ATOMIC_REQ_LEN);
	CHECK(d.op == 1 && d.req_id == 9 && d.stag == 0xabcd && d.to == 64 && d.cmp == 6);
	b[3] = 2;
	CHECK(iw_atomic_req_decode(&d, b, sizeof b) == -EPROTO);
	struct iw_atomic_resp r = {7, 0x1122334455667788ull}, rd;
	uint8_t rb[IW_ATOMIC_RESP_LEN];
	CHECK(iw_atomic_resp_encode(&r, rb, sizeof rb) == IW_ATOMIC_RESP_LEN);
	CHECK(rb[3] == 7 && rb[4] == 0x11 && rb[11] == 0x88);
	CHECK(iw_atomic_resp_decode(&rd, rb, sizeof rb) == IW_ATOMIC_RESP_LEN && rd.orig == r.orig);
	return 0;
}

int main(void)
{
	alarm(10);
	int fail = tagged_write_matches_layout() | untagged_send_inv_matches_layout() |
		   bad_versions_and_opcodes_refused() | read_req_matches_layout() |
		   terminate_matches_layout() | atomics_match_layout();
	puts(fail ? "FAIL" : "ok");
	return fail;
}
