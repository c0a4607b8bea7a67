/*
 * Orderly close: rank 1 sends messages (small and multi-fragment) and closes its endpoint at
 * once. Rank 0 must receive every message intact, then see SCTPT_EV_PEER_CLOSED and never
 * SCTPT_EV_ASSOC_DOWN (the abort that follows CLOSE is not a loss); a later send to the
 * closed peer fails with -EPIPE.
 */
#include "harness.h"

#include <errno.h>
#include <string.h>

#define N 20
static int got, closed, lost;

static void on_recv(void *arg, const struct sctpt_msg *m)
{
	(void)arg;
	CHECK(m->tag == got, "message %d arrived as number %d", m->tag, got);
	CHECK(check_pattern(m->data, m->len, (uint32_t)m->tag) == 0, "payload of %d", m->tag);
	got++;
}

static void on_event(void *arg, const struct sctpt_event *ev)
{
	(void)arg;
	if (ev->type == SCTPT_EV_PEER_CLOSED)
		closed++;
	if (ev->type == SCTPT_EV_ASSOC_DOWN) {
		lost++;
		fprintf(stderr, "unexpected: %s\n", ev->what);
	}
}

static void on_sent(void *arg, void *cookie, int status)
{
	(void)arg;
	CHECK(status == 0, "send failed: %d", status);
	free(cookie);
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
	for (int i = 0; i < 3000 && !(got == N && closed); i++)
		sctpt_wait(rc->ep, 10);
	for (int i = 0; i < 50; i++) /* the ABORT after CLOSE must not read as a loss */
		sctpt_wait(rc->ep, 10);
	CHECK(got == N, "received %d of %d before the close", got, N);
	CHECK(closed == 1, "PEER_CLOSED seen %d times", closed);
	CHECK(lost == 0, "the orderly close was reported as a loss");
	CHECK(sctpt_peer_state(rc->ep, rc->peer[1]) == SCTPT_PEER_CLOSED, "state");
	char b = 0;
	struct iovec iov = {&b, 1};
	int r = sctpt_send(rc->ep, rc->peer[1], 3, 99, 0, &iov, 1, NULL);
	CHECK(r == -EPIPE, "send to a closed peer returned %d", r);
	printf("all %d messages arrived before the close; peer closed in order; send after: %d (%s)\n",
	       got, r, sctpt_last_error());
	return 0;
}

int main(void)
{
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.ops.recv = on_recv;
	cfg.ops.event = on_event;
	cfg.ops.send_done = on_sent;
	return harness_run(2, 60, &cfg, body);
}
