/*
 * Graceful SHUTDOWN between the native engine and usrsctp (RFC 9260 9.2), each way: rank 0
 * sends messages to rank 1 on its association, then shuts that association down (the
 * native engine by sctpe_assoc_shutdown, usrsctp by a send with SCTP_EOF); the shutdown must
 * wait for every message to be acknowledged, end with SHUTDOWN ACK and SHUTDOWN COMPLETE
 * (no ABORT on the native side), and rank 1 must have every message intact before it hears
 * that the association went. Usage: test_sctpe_shutdown ENGINE_RANK0 ENGINE_RANK1
 */
#include "engine_test.h"
#include "sctpe_int.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <usrsctp.h>

#define MSGS 200

static int received, downs, down_err, bad;

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	if (c->kind == SCTPT_CQE_RECV) {
		if (c->status || c->tag != received || check_pattern(c->data, c->len, (uint32_t)c->tag))
			bad = 1;
		received++;
	} else if (c->kind == SCTPT_CQE_EVENT && c->ev.type == SCTPT_EV_ASSOC_DOWN) {
		if (received < MSGS)
			bad = 1; /* the association went before all that was sent on it arrived */
		downs++;
		down_err = c->ev.error;
	} else if (c->kind == SCTPT_CQE_SEND) {
		free(c->cookie);
	}
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Shuts our association to the peer down: 0, -EAGAIN to try again, or < 0 if it cannot. */
static int shut_down(struct pair_ctx *pc)
{
	struct sctpt_ep *ep = pc->ep;
	int rc = -1;
	pthread_mutex_lock(&ep->lock);
	struct sctpt_peer *p = sctpt_peer_get(ep, pc->peer);
	if (ep->engine) {
		struct sctpe_assoc **slot = sctpe_slot(ep->engine, p, -1, 0);
		if (slot && *slot) {
			sctpe_assoc_shutdown(*slot);
			rc = 0;
		}
	} else if (p->assoc_out) {
		struct sctp_sndinfo si = {.snd_flags = SCTP_EOF,
					  .snd_assoc_id = (sctp_assoc_t)p->assoc_out};
		static char none; /* usrsctp wants a buffer even for no data */
		rc = usrsctp_sendv(ep->s_send, &none, 0, NULL, 0, &si, sizeof(si),
				   SCTP_SENDV_SNDINFO, 0) < 0 ? -errno : 0;
		if (rc && rc != -EAGAIN)
			fprintf(stderr, "usrsctp SCTP_EOF on association %u: %s\n", p->assoc_out,
				strerror(errno));
	}
	pthread_mutex_unlock(&ep->lock);
	return rc;
}

/* The native engine's association to the peer ended in order (no ABORT either way). */
static int native_ended_in_order(struct pair_ctx *pc, int *gone)
{
	struct sctpe_ep *e = pc->ep->engine;
	pthread_mutex_lock(&pc->ep->lock);
	struct sctpe_assoc **slot = sctpe_slot(e, sctpt_peer_get(pc->ep, pc->peer), -1, 0);
	*gone = !slot || !*slot;
	int ok = e->st.aborts_in == 0 && e->st.aborts_out == 0;
	pthread_mutex_unlock(&pc->ep->lock);
	return ok;
}

static int body(struct pair_ctx *pc)
{
	double deadline = now_s() + 60;
	if (pc->rank == 1) {
		while ((received < MSGS || !downs) && !bad && now_s() < deadline)
			sctpt_wait(pc->ep, 10);
		CHECK(!bad, "rank 1 (%s): message out of order, corrupt, or lost before the end",
		      pc->engine);
		CHECK(received == MSGS && downs, "rank 1 (%s): %d of %d messages, %d ends", pc->engine,
		      received, MSGS, downs);
		printf("rank 1 (%s): %d messages intact, then the association ended (%d)\n",
		       pc->engine, received, down_err);
		pair_barrier(pc);
		return 0;
	}
	for (int i = 0; i < MSGS; i++) {
		size_t len = 1 + (size_t)i * 997 % 70000;
		unsigned char *buf = malloc(len);
		fill_pattern(buf, len, (uint32_t)i);
		struct iovec iov = {buf, len};
		int r = sctpt_send(pc->ep, pc->peer, 1, i, 0, &iov, 1, buf);
		CHECK(r >= 0, "send %d", i);
		if (r == 1)
			free(buf);
		sctpt_progress(pc->ep);
	}
	while (sctpt_pending(pc->ep, pc->peer) && now_s() < deadline)
		sctpt_wait(pc->ep, 10);
	/* the shutdown itself waits for what is unacknowledged; usrsctp refuses SCTP_EOF with
	 * EAGAIN while its send buffer is full */
	int shut;
	while ((shut = shut_down(pc)) == -EAGAIN && now_s() < deadline)
		sctpt_wait(pc->ep, 10);
	CHECK(shut == 0, "rank 0 (%s): no association to shut down", pc->engine);
	if (pc->ep->engine) {
		int gone = 0, ok = 1;
		while (!gone && now_s() < deadline) {
			sctpt_wait(pc->ep, 10);
			ok = native_ended_in_order(pc, &gone);
		}
		CHECK(gone && ok, "rank 0 (native): the association %s", gone ? "was aborted" :
		      "did not end");
	} else {
		while (!downs && now_s() < deadline)
			sctpt_wait(pc->ep, 10);
	}
	printf("rank 0 (%s): %d messages sent, association shut down\n", pc->engine, MSGS);
	pair_barrier(pc);
	return 0;
}

int main(int argc, char **argv)
{
	const char *engines[2] = {argc > 1 ? argv[1] : "native", argc > 2 ? argv[2] : "usrsctp"};
	struct sctpt_config cfg;
	engine_config(&cfg);
	cfg.handler.complete = on_complete;
	return pair_run(engines, 90, &cfg, body);
}
