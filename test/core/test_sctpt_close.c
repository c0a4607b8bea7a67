/*
 * Orderly close: rank 1 sends messages (small and multi-fragment) and closes its endpoint at
 * once. Rank 0 must receive every message intact, then see SCTPT_EV_PEER_CLOSED and never
 * SCTPT_EV_ASSOC_DOWN (the abort that follows CLOSE is not a loss); a later send to the
 * closed peer fails with -EPIPE. Rank 2 never sends: it takes one message from rank 0 and
 * closes, which must read as a close too, not as a loss.
 */
#include "harness.h"

#include <errno.h>
#include <string.h>

#define N 20
static int got, got_from_0, closed[3], lost[3];

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	struct rank_ctx *rc = arg;
	switch (c->kind) {
	case SCTPT_CQE_RECV:
		CHECK(c->status == 0, "receive failed: %d", c->status);
		if (rc->rank == 2) {
			got_from_0++;
			break;
		}
		CHECK(c->peer == rc->peer[1], "rank %d: message from peer %d", rc->rank, c->peer);
		CHECK(c->tag == got, "message %d arrived as number %d", c->tag, got);
		CHECK(check_pattern(c->data, c->len, (uint32_t)c->tag) == 0, "payload of %d",
		      c->tag);
		got++;
		break;
	case SCTPT_CQE_SEND:
		/* sctpt_close must have them all acknowledged, none cancelled */
		CHECK(c->status == 0, "send failed: %d", c->status);
		free(c->cookie);
		break;
	case SCTPT_CQE_EVENT:
		for (int r = 0; r < rc->size; r++) {
			if (r == rc->rank || rc->peer[r] != c->ev.peer)
				continue;
			if (c->ev.type == SCTPT_EV_PEER_CLOSED)
				closed[r]++;
			if (c->ev.type == SCTPT_EV_ASSOC_DOWN) {
				lost[r]++;
				fprintf(stderr, "unexpected: %s\n", c->ev.what);
			}
		}
		break;
	}
}

static int body(struct rank_ctx *rc)
{
	if (rc->rank == 1) {
		for (int i = 0; i < N; i++) {
			size_t len = i % 5 == 4 ? (size_t)(1u << 20) + 7 : (size_t)i * 100;
			unsigned char *b = malloc(len ? len : 1);
			fill_pattern(b, len, (uint32_t)i);
			struct iovec iov = {b, len};
			int r = sctpt_send(rc->ep, rc->peer[0], 3, i, 0, &iov, 1, b);
			CHECK(r >= 0, "send %d", i);
			if (r == 1)
				free(b);
		}
		return 0; /* the harness closes the endpoint right away */
	}
	if (rc->rank == 2) {
		for (int i = 0; i < 3000 && !got_from_0; i++)
			sctpt_wait(rc->ep, 10);
		CHECK(got_from_0 == 1, "rank 2 received %d message(s) from rank 0", got_from_0);
		return 0; /* closes having sent nothing */
	}
	static char hello = 'h';
	struct iovec hi = {&hello, 1};
	CHECK(sctpt_send(rc->ep, rc->peer[2], 4, 0, 0, &hi, 1, NULL) >= 0, "send to rank 2");
	for (int i = 0; i < 3000 && !(got == N && closed[1] && (closed[2] || lost[2])); i++)
		sctpt_wait(rc->ep, 10);
	for (int i = 0; i < 50; i++) /* the ABORT after CLOSE must not read as a loss */
		sctpt_wait(rc->ep, 10);
	CHECK(got == N, "received %d of %d before the close", got, N);
	for (int r = 1; r <= 2; r++) {
		CHECK(closed[r] == 1, "PEER_CLOSED of rank %d seen %d times", r, closed[r]);
		CHECK(lost[r] == 0, "the orderly close of rank %d was reported as a loss", r);
		CHECK(sctpt_peer_state(rc->ep, rc->peer[r]) == SCTPT_PEER_CLOSED,
		      "state of rank %d", r);
	}
	char b = 0;
	struct iovec iov = {&b, 1};
	int r = sctpt_send(rc->ep, rc->peer[1], 3, 99, 0, &iov, 1, NULL);
	CHECK(r == -EPIPE, "send to a closed peer returned %d", r);
	printf("all %d messages arrived before the close; both peers closed in order; send after: "
	       "%d (%s)\n", got, r, sctpt_last_error());
	return 0;
}

int main(void)
{
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.handler.complete = on_complete;
	return harness_run(3, 60, &cfg, body);
}
