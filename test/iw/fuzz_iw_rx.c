/*
 * Fuzz target for the iWARP receive path (DDP/RDMAP validation, placement, fences). The input
 * is a series of records [sel:1][tag:1][len:2 big-endian][bytes], each injected into the core
 * as one received SCTP message (envelope: the RNIC's context, the tag, unordered) that
 * sctpt_progress hands to the RNIC's handler: a segment for a connected QP whose PD owns a
 * registered region (STag 0x101, remote read/write/atomic, Read Responses sent from it in
 * place) and a local-write-only region (STag 0x202, with two receives posted into it); a
 * region of another PD is STag 0x303. sel bit 0: the message goes to another (unknown) QP
 * number; bit 1: tagged offsets in the bytes are relative to the first region (the target
 * adds its address, so inputs reach placement).
 * A message that starts with IW_BUNDLE_MARK is a bundle of segments.
 * Every byte outside the regions must stay untouched, and nothing may crash. The endpoint has
 * no sockets: whatever the RNIC answers fails to send, which fails the QP, as a lost peer would.
 */
#include "sctpt_int.h"
#include "iw/iw_verbs.h"

#include <string.h>

#define AREA 4096
#define GUARD 64
#define GUARDB 0xe7

static uint8_t mem[3][GUARD + AREA + GUARD] __attribute__((aligned(64)));

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void relocate(uint8_t *b, size_t len, uint64_t base)
{
	if (len >= IW_TAGGED_HLEN && (b[0] & IW_DDP_T)) {
		put64(b + 6, get64(b + 6) + base);
	} else if (len >= IW_UNTAGGED_HLEN + IW_READ_REQ_LEN && (b[1] & 0x0f) == IW_OP_READ_REQ) {
		put64(b + IW_UNTAGGED_HLEN + 20, get64(b + IW_UNTAGGED_HLEN + 20) + base);
		put64(b + IW_UNTAGGED_HLEN + 4, get64(b + IW_UNTAGGED_HLEN + 4) + base);
	} else if (len >= IW_UNTAGGED_HLEN + IW_ATOMIC_REQ_LEN && (b[1] & 0x0f) == IW_OP_ATOMIC_REQ) {
		put64(b + IW_UNTAGGED_HLEN + 12, get64(b + IW_UNTAGGED_HLEN + 12) + base);
	}
}

static struct iw_rnic *rn;

/* One SCTP message: the core's envelope, then the segment. */
static size_t frame(uint8_t *out, uint32_t context, int32_t tag, const uint8_t *seg, size_t len)
{
	struct sctpt_hdr h = {.version = SCTPT_PROTO_VERSION, .op = SCTPT_OP_DATA,
			      .flags = SCTPT_F_FIRST | SCTPT_F_LAST | SCTPT_F_UNORDERED,
			      .context = context, .tag = tag, .msg_len = len};
	sctpt_hdr_encode(&h, out);
	memcpy(out + SCTPT_HDR_LEN, seg, len);
	return SCTPT_HDR_LEN + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sctpt_config cfg;
	struct sctpt_ep *ep;
	struct iw_pd *pd, *pd2;
	struct iw_cq *cq;
	struct iw_qp *qp;
	uint32_t st[3];
	static uint8_t rec[1 << 16], pkt[SCTPT_HDR_LEN + (1 << 16)];
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	if (sctpt_open_nosock(&cfg, &ep) != 0)
		return 0;
	sctpt_peer_t peer = sctpt_peer_add(ep, "sctpt1 9 9 127.0.0.2");
	memset(mem, GUARDB, sizeof(mem));
	if (iw_open(ep, NULL, &rn) != 0)
		__builtin_trap();
	struct iw_qp_attr qa = {.max_send_wr = 8, .max_recv_wr = 8};
	if (iw_pd_alloc(rn, &pd) || iw_pd_alloc(rn, &pd2) || iw_cq_create(rn, 64, &cq))
		__builtin_trap();
	qa.send_cq = qa.recv_cq = cq;
	if (iw_reg_mr(pd, mem[0] + GUARD, AREA, IW_ACCESS_REMOTE_READ | IW_ACCESS_REMOTE_WRITE |
		      IW_ACCESS_REMOTE_ATOMIC | IW_ACCESS_LOCAL_WRITE | IW_ACCESS_READ_IN_PLACE,
		      &st[0]) ||
	    iw_reg_mr(pd, mem[1] + GUARD, AREA, IW_ACCESS_LOCAL_WRITE, &st[1]) ||
	    iw_reg_mr(pd2, mem[2] + GUARD, AREA, IW_ACCESS_REMOTE_WRITE, &st[2]) ||
	    iw_qp_create(pd, &qa, &qp) || iw_qp_connect(qp, peer, 1))
		__builtin_trap();
	for (int i = 0; i < 2; i++) {
		struct iw_sge sge = {mem[1] + GUARD + i * 1024, 1024, st[1]};
		struct iw_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1};
		iw_post_recv(qp, &wr);
	}
	uint64_t base = (uint64_t)(uintptr_t)(mem[0] + GUARD);
	while (size >= 4) {
		uint8_t sel = data[0];
		size_t len = (size_t)data[2] << 8 | data[3];
		int32_t tag = data[1];
		data += 4;
		size -= 4;
		if (len > size)
			len = size;
		memcpy(rec, data, len);
		if (sel & 2)
			relocate(rec, len, base);
		uint32_t context = IW_CONTEXT_BASE + ((sel & 1) ? 77u : iw_qp_num(qp));
		sctpt_rx_inject(ep, peer, 1, pkt, frame(pkt, context, tag, rec, len));
		sctpt_progress(ep);
		iw_progress(rn);
		data += len;
		size -= len;
	}
	struct iw_wc wc[16];
	while (iw_poll_cq(cq, 16, wc) > 0)
		;
	iw_qp_destroy(qp);
	for (int i = 0; i < 3; i++)
		if (iw_dereg_mr(rn, st[i]))
			__builtin_trap(); /* nothing is left in flight: every send failed */
	if (iw_cq_destroy(cq) || iw_pd_free(pd) || iw_pd_free(pd2))
		__builtin_trap();
	iw_close(rn);
	rn = NULL;
	sctpt_close(ep);
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < GUARD; i++)
			if (mem[r][i] != GUARDB || mem[r][GUARD + AREA + i] != GUARDB)
				__builtin_trap(); /* a write outside a registered region */
	return 0;
}
