/*
 * A fake SCTP engine for unit tests of what the real one cannot steer: endpoints in one
 * process hand each other whole SCTP messages through in-memory queues, and the test decides
 * per rail whether SCTP's buffer is full, whether sends fail, whether what was sent arrives,
 * and how many bytes SCTP still holds unacknowledged. Select it with cfg.backend = "fake"
 * after fake_backend_register().
 */
#ifndef FAKE_BACKEND_H
#define FAKE_BACKEND_H

#include "sctpt_int.h"

struct fake_rail {
	int full;        /* sends get -EAGAIN */
	int fail;        /* sends get -EIO */
	int blackhole;   /* sends succeed, nothing arrives, nothing is acknowledged */
	int hold;        /* what is sent stays held (unacknowledged) until fake_ack */
	uint64_t held;   /* bytes SCTP holds */
	uint64_t sent_msgs, sent_bytes;
};

void fake_backend_register(void);
/* The state of rail i of ep's peer p (created on first use). */
struct fake_rail *fake_rail(struct sctpt_ep *ep, sctpt_peer_t p, int i);
/* Everything rail i holds is acknowledged. */
void fake_ack(struct sctpt_ep *ep, sctpt_peer_t p, int i);
/* Path i of ep's peer p goes down (0) or up (1), as the engine's probes would say. */
void fake_path(struct sctpt_ep *ep, sctpt_peer_t p, int i, int up);
/* The association(s) to p are lost, as SCTP's COMM_LOST would say. */
void fake_lose(struct sctpt_ep *ep, sctpt_peer_t p);
/* Messages waiting in ep's inbox. */
int fake_inbox(struct sctpt_ep *ep);

#endif
