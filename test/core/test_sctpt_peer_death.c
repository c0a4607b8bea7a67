/*
 * A peer killed mid-transfer gives the survivor an error, not a hang. Rank 1 streams large
 * messages to rank 0 and is SIGKILLed halfway through one; rank 0 also has sends queued to
 * rank 1. Rank 0 must see SCTPT_EV_ASSOC_DOWN naming the peer, its queued sends must fail,
 * and new sends must return -EPIPE, all within the alarm.
 */
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int got, down, send_failures;
static char down_what[512];

static void on_recv(void *arg, const struct sctpt_msg *m)
{
	(void)arg;
	(void)m;
	got++;
}

static void on_event(void *arg, const struct sctpt_event *ev)
{
	(void)arg;
	if (ev->type == SCTPT_EV_ASSOC_DOWN) {
		down++;
		snprintf(down_what, sizeof(down_what), "%s", ev->what);
	}
}

static void on_sent(void *arg, void *cookie, int status)
{
	(void)arg;
	(void)cookie;
	if (status < 0)
		send_failures++;
}

static int body(struct rank_ctx *rc)
{
	static unsigned char buf[4u << 20];
	struct iovec iov = {buf, sizeof(buf)};
	if (rc->rank == 1) {
		for (int i = 0; i < 3; i++)
			sctpt_send(rc->ep, rc->peer[0], 1, i, 0, &iov, 1, NULL);
		for (int i = 0; i < 2000; i++) {
			sctpt_wait(rc->ep, 1);
			if (i == 30)
				kill(getpid(), SIGKILL); /* mid-transfer */
		}
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 4; i++)
		sctpt_send(rc->ep, rc->peer[1], 2, i, 0, &iov, 1, NULL);
	while (!down)
		sctpt_wait(rc->ep, 10);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int r = sctpt_send(rc->ep, rc->peer[1], 2, 9, 0, &iov, 1, NULL);
	printf("survivor: '%s' after %.1f s; %d message(s) received before; queued sends failed: "
	       "%d; new send returns %d (%s)\n", down_what,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, got, send_failures, r,
	       sctpt_last_error());
	CHECK(strstr(down_what, sctpt_peer_name(rc->ep, rc->peer[1])) != NULL,
	      "the error does not name the peer: %s", down_what);
	CHECK(r == -EPIPE, "send to a dead peer returned %d", r);
	CHECK(sctpt_peer_state(rc->ep, rc->peer[1]) == SCTPT_PEER_FAILED, "peer state");
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
	harness_killed_rank = 1;
	return harness_run(2, 60, &cfg, body);
}
