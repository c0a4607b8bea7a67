/*
 * The MPI_ANY_TAG scenario of the thesis (its Figure 3.5): rank 0 sends a large message A
 * (tag 1) and then a small message B (another tag, on another stream) on the same context.
 * Rank 1 has posted recv(ANY_TAG) and then recv(B's tag). B travels on another stream and
 * completes first, but MPI says the ANY_TAG receive matches A. Also: a message C on another
 * context, sent after A, is not held back by A (streams keep flowing).
 * Both ranks poll their completions (sctpt_cq_read, no complete function), as a layer over
 * an fi_cq-style queue would; rank 0 checks that each send it queued completes once.
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
static void on_recv(const struct sctpt_cqe *m)
{
	CHECK(m->status == 0, "receive failed: %d", m->status);
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

/* Sends of rank 0: each slot is a send's cookie. */
struct send_slot {
	int rc, completions, status;
};
static struct send_slot sends[3];

/* Drains the polled queue of cfg.handler (id 0): entries are read in batches and released. */
static void poll_cq(struct rank_ctx *rc)
{
	struct sctpt_cqe cqe[4];
	int n;
	while ((n = sctpt_cq_read(rc->ep, 0, cqe, 4)) > 0) {
		for (int i = 0; i < n; i++) {
			const struct sctpt_cqe *c = &cqe[i];
			struct send_slot *s;
			switch (c->kind) {
			case SCTPT_CQE_RECV:
				CHECK(rc->rank == 1, "rank %d received tag %d", rc->rank, c->tag);
				on_recv(c);
				break;
			case SCTPT_CQE_SEND:
				s = c->cookie;
				CHECK(s >= sends && s < sends + 3, "unknown cookie %p", c->cookie);
				if (s->completions++ == 0)
					s->status = c->status;
				break;
			case SCTPT_CQE_EVENT:
				CHECK(c->ev.type != SCTPT_EV_ASSOC_DOWN, "%s", c->ev.what);
				break;
			}
		}
		sctpt_cq_release(rc->ep, cqe, n);
	}
	CHECK(n == 0, "sctpt_cq_read: %d", n);
}

static int body(struct rank_ctx *rc)
{
	if (rc->rank == 0) {
		static unsigned char a[BIG], b[8], c[8];
		fill_pattern(a, sizeof(a), 1);
		fill_pattern(b, sizeof(b), (uint32_t)tag_b);
		struct iovec ia = {a, sizeof(a)}, ib = {b, sizeof(b)}, ic = {c, sizeof(c)};
		sends[0].rc = sctpt_send(rc->ep, rc->peer[1], 7, 1, 0, &ia, 1, &sends[0]);
		sends[1].rc = sctpt_send(rc->ep, rc->peer[1], 7, tag_b, 0, &ib, 1, &sends[1]);
		sends[2].rc = sctpt_send(rc->ep, rc->peer[1], 9, 3, 0, &ic, 1, &sends[2]);
		for (int i = 0; i < 3; i++)
			CHECK(sends[i].rc >= 0, "send %c: %d", "ABC"[i], sends[i].rc);
		for (int i = 0; i < 3; i++)
			while (sends[i].rc == 0 && sends[i].completions == 0) {
				sctpt_wait(rc->ep, 5);
				poll_cq(rc);
			}
		CHECK(!sctpt_pending(rc->ep, -1), "sends pending after each completed");
		harness_barrier(rc);
		poll_cq(rc); /* a second completion of any send would be here by now */
		for (int i = 0; i < 3; i++) {
			CHECK(sends[i].completions == (sends[i].rc == 0),
			      "send %c returned %d and completed %d time(s)", "ABC"[i], sends[i].rc,
			      sends[i].completions);
			CHECK(sends[i].status == 0, "send %c completed with %d", "ABC"[i],
			      sends[i].status);
		}
		return 0;
	}
	while (nposted_matched < 2 || norder < 3) {
		sctpt_wait(rc->ep, 5);
		poll_cq(rc);
	}
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
	cfg.shm = 0; /* SCTP streams overtaking on the wire: test_sctpt_shm has the ring's */
	cfg.handler.complete = NULL; /* polled: see poll_cq */
	uint16_t sa = sctpt_stream_default(7, 1, cfg.streams);
	for (tag_b = 2; sctpt_stream_default(7, tag_b, cfg.streams) == sa; tag_b++)
		;
	return harness_run(2, 60, &cfg, body);
}
