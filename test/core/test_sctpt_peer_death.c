/*
 * A peer killed mid-transfer gives the survivor an error, not a hang. Rank 1 streams large
 * messages to rank 0 and is SIGKILLed halfway through one; rank 0 has a backlog of sends
 * queued to rank 1 that it cannot take in before it dies, and queues more once rank 1 is
 * gone. Rank 0 must see SCTPT_EV_ASSOC_DOWN naming the peer; every send that was queued
 * (returned 0) must get exactly one completion, -EPIPE if it was still queued at the death
 * (every one queued after it), never success after the loss; new sends must return -EPIPE;
 * all within the alarm.
 */
#include "harness.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MSG (4u << 20)
#define BACKLOG 32 /* 128 MiB: far more than rank 1 can take in before it dies */
#define LATE 2     /* sent once rank 1 is gone: rank 0's SCTP send buffer is full by then */
#define NSENDS (BACKLOG + LATE)

/* One per send of rank 0 (its cookie). */
struct send_rec {
	int rc;          /* what sctpt_send returned */
	int completions;
	int status;      /* of the first completion */
	int after_down;  /* a completion came after ASSOC_DOWN */
};

static struct send_rec sends[NSENDS];
static int got, down, stray;
static char down_what[512];
static int *rank1_dying; /* shared memory: set by rank 1 just before it kills itself */

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	switch (c->kind) {
	case SCTPT_CQE_RECV:
		got += c->status == 0;
		break;
	case SCTPT_CQE_SEND: {
		struct send_rec *s = c->cookie;
		if (s < sends || s >= sends + NSENDS) {
			stray++;
			break;
		}
		if (s->completions++ == 0)
			s->status = c->status;
		s->after_down |= down;
		break;
	}
	case SCTPT_CQE_EVENT:
		if (c->ev.type == SCTPT_EV_ASSOC_DOWN) {
			down++;
			snprintf(down_what, sizeof(down_what), "%s", c->ev.what);
		}
		break;
	}
}

static int queue_send(struct rank_ctx *rc, int i, const struct iovec *iov)
{
	sends[i].rc = sctpt_send(rc->ep, rc->peer[1], 2, i, 0, iov, 1, &sends[i]);
	return sends[i].rc;
}

static int body(struct rank_ctx *rc)
{
	static unsigned char buf[MSG];
	struct iovec iov = {buf, sizeof(buf)};
	if (rc->rank == 1) {
		for (int i = 0; i < 3; i++)
			sctpt_send(rc->ep, rc->peer[0], 1, i, 0, &iov, 1, NULL);
		for (int i = 0; i < 2000; i++) {
			sctpt_wait(rc->ep, 1);
			if (i == 30) { /* mid-transfer */
				__atomic_store_n(rank1_dying, 1, __ATOMIC_RELEASE);
				kill(getpid(), SIGKILL);
			}
		}
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < BACKLOG; i++)
		CHECK(queue_send(rc, i, &iov) >= 0, "send %d: %d", i, sends[i].rc);
	int late_queued = 0;
	while (!down) {
		sctpt_wait(rc->ep, 10);
		if (!late_queued && __atomic_load_n(rank1_dying, __ATOMIC_ACQUIRE)) {
			/* the peer takes nothing more; the core does not know yet */
			for (int i = BACKLOG; i < NSENDS; i++)
				CHECK(queue_send(rc, i, &iov) == 0,
				      "send %d to the killed peer returned %d, not queued", i,
				      sends[i].rc);
			late_queued = 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(late_queued, "the loss was reported before rank 1 was killed");
	for (int i = 0; i < 50; i++) /* anything completed twice or late would show now */
		sctpt_wait(rc->ep, 10);
	int r = sctpt_send(rc->ep, rc->peer[1], 2, 9, 0, &iov, 1, NULL);
	int queued = 0, failed = 0, ok = 0;
	for (int i = 0; i < NSENDS; i++) {
		struct send_rec *s = &sends[i];
		if (s->rc != 0) {
			CHECK(s->completions == 0, "send %d returned %d, completed %d time(s)",
			      i, s->rc, s->completions);
			continue;
		}
		queued++;
		CHECK(s->completions == 1, "queued send %d completed %d times", i, s->completions);
		CHECK(s->status == 0 || s->status == -EPIPE, "queued send %d completed with %d", i,
		      s->status);
		CHECK(!(s->after_down && s->status == 0),
		      "queued send %d succeeded after the loss was reported", i);
		CHECK(i < BACKLOG || s->status == -EPIPE,
		      "send %d, queued after the peer was killed, completed with %d", i, s->status);
		failed += s->status < 0;
		ok += s->status == 0;
	}
	char name[SCTPT_CARD_MAX];
	printf("survivor: '%s' after %.1f s; %d message(s) received before; queued sends %d: "
	       "%d completed, %d failed; new send returns %d (%s)\n", down_what,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, got, queued, ok,
	       failed, r, sctpt_last_error());
	CHECK(stray == 0, "%d send completion(s) with a cookie never given", stray);
	CHECK(down == 1, "ASSOC_DOWN reported %d times", down);
	CHECK(strstr(down_what, sctpt_peer_name(rc->ep, rc->peer[1], name, sizeof(name))) != NULL,
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
	cfg.shm = 0; /* SCTP's loss detection, which takes seconds: test_sctpt_shm has the ring's */
	cfg.handler.complete = on_complete;
	rank1_dying = mmap(NULL, sizeof(*rank1_dying), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rank1_dying == MAP_FAILED)
		return 1;
	harness_killed_rank = 1;
	return harness_run(2, 60, &cfg, body);
}
