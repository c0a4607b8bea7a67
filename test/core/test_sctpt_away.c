/*
 * A rank away from the endpoint: rank 0 sends rank 1 small messages and one larger than rank
 * 1's receive window; rank 1 makes no call into its endpoint for several times the time in
 * which a peer gives up on unanswered retransmissions (rto_max x assoc_max_retrans), then
 * receives. Rank 1's keeper thread must keep the association: every message arrives intact,
 * neither side sees the other lost. Run with and without cfg.single_thread (the keeper's two
 * ways of keeping the application out). Then once without the keeper, where rank 0 must
 * declare rank 1 lost: the away time is long enough to matter.
 */
#include "harness.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define N 16
#define BIG (8u << 20)
#define AWAY_S 4

static int got, sent, failed, lost, acked, done;
static unsigned char *big;

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	struct rank_ctx *rc = arg;
	switch (c->kind) {
	case SCTPT_CQE_RECV:
		CHECK(c->status == 0, "receive failed: %d", c->status);
		if (rc->rank == 0) {
			acked++;
			break;
		}
		CHECK(c->tag == got, "message %d arrived as number %d", c->tag, got);
		CHECK(c->len == (c->tag == N - 1 ? BIG : (size_t)c->tag * 64), "length of %d",
		      c->tag);
		CHECK(check_pattern(c->data, c->len, (uint32_t)c->tag) == 0, "payload of %d",
		      c->tag);
		got++;
		break;
	case SCTPT_CQE_SEND:
		if (c->status == 0)
			sent++;
		else
			failed++;
		break;
	case SCTPT_CQE_EVENT:
		if (c->ev.type == SCTPT_EV_ASSOC_DOWN && !done) { /* not in the closes after */
			lost++;
			fprintf(stderr, "rank %d: peer lost: %s\n", rc->rank, c->ev.what);
		}
		break;
	}
}

static int keeper_on;

static int body(struct rank_ctx *rc)
{
	if (rc->rank == 1) {
		/* the association is up before we go: rank 0's hello, our answer */
		for (int i = 0; i < 1000 && !got && !lost; i++)
			sctpt_wait(rc->ep, 10);
		CHECK(got == 1, "the first message did not come");
		char g = 'g';
		struct iovec gi = {&g, 1};
		CHECK(sctpt_send(rc->ep, rc->peer[0], 1, 0, 0, &gi, 1, NULL) == 1, "answer");
		sleep(AWAY_S);
		for (int i = 0; i < 3000 && got < N && !lost; i++)
			sctpt_wait(rc->ep, 10);
		if (!keeper_on)
			return done = 1, 0; /* lost or not: rank 0 tells */
		CHECK(got == N && !lost, "received %d of %d after the break (lost: %d)", got, N,
		      lost);
		char b = 'k';
		struct iovec iov = {&b, 1};
		CHECK(sctpt_send(rc->ep, rc->peer[0], 1, 0, 0, &iov, 1, NULL) >= 0, "ack");
		for (int i = 0; i < 3000 && sctpt_peer_state(rc->ep, rc->peer[0]) ==
		     SCTPT_PEER_UP; i++)
			sctpt_wait(rc->ep, 10); /* until rank 0 closes */
		done = 1;
		return 0;
	}
	big = malloc(BIG);
	static unsigned char small[N][N * 64];
	for (int i = 0; i < N && !lost; i++) {
		size_t len = i == N - 1 ? BIG : (size_t)i * 64;
		unsigned char *b = i == N - 1 ? big : small[i];
		fill_pattern(b, len, (uint32_t)i);
		struct iovec iov = {b, len};
		int r = sctpt_send(rc->ep, rc->peer[1], 1, i, 0, &iov, 1, NULL);
		CHECK(r >= 0 || (!keeper_on && r == -EPIPE), "send %d", i);
		sent += r == 1;
		if (i == 0) /* the others once rank 1 is away */
			for (int k = 0; k < 1000 && !acked && !lost; k++)
				sctpt_wait(rc->ep, 10);
	}
	/* rank 1 comes back after AWAY_S; a peer that gives up does so well before */
	for (int i = 0; i < 3000 && acked < 2 && !lost && !failed; i++)
		sctpt_wait(rc->ep, 10);
	free(big);
	if (!keeper_on) {
		CHECK(lost || failed, "rank 1 away with no keeper was not declared lost");
		printf("without the keeper: rank 1 declared lost (%d send(s) failed)\n", failed);
		done = 1;
		return 0;
	}
	CHECK(acked == 2 && !lost && !failed && sent == N, "rank 1 away %d s: acked %d, lost %d, "
	      "sends done %d failed %d", AWAY_S, acked, lost, sent, failed);
	printf("rank 1 away %d s: %d messages arrived, association kept\n", AWAY_S, N);
	done = 1;
	return 0;
}

static int run(int single_thread, int keeper_ms)
{
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.shm = 0;
	cfg.handler.complete = on_complete;
	cfg.rto_max_ms = 250; /* a peer gives up after about a second */
	cfg.assoc_max_retrans = 6;
	cfg.hb_interval_ms = 200;
	cfg.single_thread = single_thread;
	cfg.keeper_ms = keeper_ms;
	keeper_on = keeper_ms > 0;
	printf("single_thread %d, keeper %d ms\n", single_thread, keeper_ms);
	fflush(stdout);
	return harness_run(2, 60, &cfg, body);
}

int main(void)
{
	if (run(0, 50) || run(1, 50))
		return 1;
	return run(1, 0);
}
