/*
 * The MPI_ANY_TAG scenario of the thesis (its Figure 3.5): rank 0 sends a large message A
 * (tag 1) and then a small message B (another tag, on another stream) on the same context.
 * Rank 1 has posted recv(ANY_TAG) and then recv(B's tag). B travels on another stream and completes first, but
 * MPI says the ANY_TAG receive matches A. Also: a message C on another context, sent after
 * A, is not held back by A (streams keep flowing).
 */
#include "harness.h"

#include <string.h>

#define BIG (2u << 20)

struct posted {
	int32_t tag; /* -1: any */
	int matched_tag;
	size_t matched_len;
};
static struct posted posted[2] = {{-1, 0, 0}, {0, 0, 0}};
static int32_t tag_b; /* a tag whose stream differs from tag 1's, so B can overtake A */
static int nposted_matched, order[3], norder;

/* A minimal MPI-style matching layer over the core's ordered delivery. */
static void on_recv(void *arg, const struct sctpt_msg *m)
{
	(void)arg;
	if (m->context == 9) {
		order[norder++] = 'C';
		return;
	}
	CHECK(m->context == 7, "context %u", m->context);
	order[norder++] = m->tag == 1 ? 'A' : 'B';
	posted[1].tag = tag_b;
	for (int i = 0; i < 2; i++) {
		if (posted[i].matched_tag == 0 && (posted[i].tag == -1 || posted[i].tag == m->tag)) {
			posted[i].matched_tag = m->tag;
			posted[i].matched_len = m->len;
			nposted_matched++;
			CHECK(check_pattern(m->data, m->len, (uint32_t)m->tag) == 0, "payload of tag %d",
			      m->tag);
			return;
		}
	}
	CHECK(0, "message tag %d matched no posted receive", m->tag);
}

static int body(struct rank_ctx *rc)
{
	if (rc->rank == 0) {
		static unsigned char a[BIG], b[8], c[8];
		fill_pattern(a, sizeof(a), 1);
		fill_pattern(b, sizeof(b), (uint32_t)tag_b);
		struct iovec ia = {a, sizeof(a)}, ib = {b, sizeof(b)}, ic = {c, sizeof(c)};
		CHECK(sctpt_send(rc->ep, rc->peer[1], 7, 1, 0, &ia, 1, NULL) >= 0, "send A");
		CHECK(sctpt_send(rc->ep, rc->peer[1], 7, tag_b, 0, &ib, 1, NULL) >= 0, "send B");
		CHECK(sctpt_send(rc->ep, rc->peer[1], 9, 3, 0, &ic, 1, NULL) >= 0, "send C");
		while (sctpt_pending(rc->ep, -1))
			sctpt_wait(rc->ep, 5);
		harness_barrier(rc);
		return 0;
	}
	while (nposted_matched < 2 || norder < 3)
		sctpt_wait(rc->ep, 5);
	struct sctpt_peer_stats st;
	sctpt_peer_stats(rc->ep, rc->peer[0], &st);
	printf("delivery order %c%c%c; ANY_TAG matched tag %d (%zu bytes), tag-B receive matched "
	       "tag %d; %llu message(s) held for order\n", order[0], order[1], order[2],
	       posted[0].matched_tag, posted[0].matched_len, posted[1].matched_tag,
	       (unsigned long long)st.held_for_order);
	CHECK(posted[0].matched_tag == 1 && posted[0].matched_len == BIG,
	      "MPI_ANY_TAG receive matched tag %d, not the first message sent", posted[0].matched_tag);
	CHECK(posted[1].matched_tag == tag_b, "tag-%d receive matched tag %d", tag_b,
	      posted[1].matched_tag);
	CHECK(order[0] == 'C', "context 9 waited behind the large message on context 7");
	CHECK(st.held_for_order >= 1, "B never overtook A on the wire: the scenario was not exercised");
	harness_barrier(rc);
	return 0;
}

int main(void)
{
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.ops.recv = on_recv;
	uint16_t sa = sctpt_stream_default(7, 1, cfg.streams);
	for (tag_b = 2; sctpt_stream_default(7, tag_b, cfg.streams) == sa; tag_b++)
		;
	return harness_run(2, 60, &cfg, body);
}
