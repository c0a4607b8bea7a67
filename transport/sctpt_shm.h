/*
 * The core's path to same-host peers (sctpt_shm.c): message rings in shared memory, large
 * messages read by the receiver straight from the sender's buffer, and tripwires that let a
 * waiter sleep until a peer writes. A peer whose card names this host (and another process)
 * gets it; everything above -- ordering, contexts, tags, streams, completions, events -- is
 * the core's own, so a plugin cannot tell such a peer from an SCTP one.
 *
 * All functions run under ep->lock unless they say otherwise.
 */
#ifndef SCTPT_SHM_H
#define SCTPT_SHM_H

#include <stddef.h>
#include <stdint.h>

struct sctpt_ep;
struct sctpt_peer;
struct sctpt_txmsg;
struct sctpt_card_info;
struct sctpt_peer_stats;

struct sctpt_shm;       /* the endpoint's: its socket, eventfd, control page, inbound rings */
struct sctpt_shm_peer;  /* one same-host peer: the ring to it, the ring from it */

/* With cfg.shm: the unix socket peers connect to, the eventfd and the control page; sets
 * ep->shm and ep->wait_fd. Without shared memory (cfg.shm 0, or the kernel refuses) ep->shm
 * stays NULL and every peer uses SCTP. Called once the engine is open. */
void sctpt_shm_open(struct sctpt_ep *ep);
/* After the peers are freed. */
void sctpt_shm_fini(struct sctpt_ep *ep);
/* What this endpoint adds to its card ("<host>.<pid>.<nonce>"), or NULL. */
const char *sctpt_shm_token(struct sctpt_ep *ep);

/* A card of this host, other process: the peer gets the shared-memory path. */
int sctpt_shm_is_local(struct sctpt_ep *ep, const struct sctpt_card_info *ci);
/* Called for every new peer; gives local ones their state (-ENOMEM). */
int sctpt_shm_peer_init(struct sctpt_ep *ep, struct sctpt_peer *p);
/* The peer failed or closed: its pulls in flight fail, its rings go. */
void sctpt_shm_peer_down(struct sctpt_ep *ep, struct sctpt_peer *p);
void sctpt_shm_peer_free(struct sctpt_ep *ep, struct sctpt_peer *p);

/* Sends to p go to its ring (or wait for it): not through the engine. */
int sctpt_shm_routes(const struct sctpt_peer *p);
/* First send to a local peer: starts setting up its ring. 0: under way (sends wait in their
 * queues), 1: use SCTP for this peer. */
int sctpt_shm_connect(struct sctpt_ep *ep, struct sctpt_peer *p);

enum {
	SCTPT_SHM_FULL = 0,   /* no room (or ring not up yet): try again later */
	SCTPT_SHM_WROTE = 1,  /* one record of *n payload bytes */
	SCTPT_SHM_PULLED = 2, /* the whole message is the receiver's to read: m is ours until
			       * its completion */
	SCTPT_SHM_SCTP = 3,   /* this peer is reached through SCTP */
};
/* The head of stream s's queue to p: one record, or a pull, or nothing; < 0: the peer is
 * broken. */
int sctpt_shm_push(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t s, struct sctpt_txmsg *m,
		   size_t *n);

/* A whole message (h, its length in h->msg_len, at iov) as one record now, copied from iov:
 * 1 written (h stamped with oc's next sequence unless oc is NULL, FIRST|LAST set), 0 not now
 * (ring not up or full, or a message for a pull or for fragments: queue it), < 0 the peer
 * failed. For a peer with nothing queued (or the ring would reorder its stream). */
struct sctpt_hdr;
struct sctpt_order_ctx;
struct iovec;
int sctpt_shm_send(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t s, struct sctpt_hdr *h,
		   struct sctpt_order_ctx *oc, const struct iovec *iov, int iovcnt);

/* A send sctpt_shm_push made a pull, out of its queue now: the shared-memory path keeps it
 * until the receiver has read it. */
void sctpt_shm_pulled(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_txmsg *m);

/* Rings in, pulls finished, peers connecting or gone; returns how many things it handled. */
int sctpt_shm_progress(struct sctpt_ep *ep);
/* Without the lock: one whole small message from a ring straight to its handler, when it is
 * plainly the next thing to hand out: 1 if so, 0 if a whole progress is needed (sctpt_progress
 * then makes one). */
__attribute__((visibility("hidden"))) int sctpt_shm_express(struct sctpt_ep *ep);
/* Without the lock: 1 if surely nothing is there for sctpt_shm_progress nor due for the
 * engine (no record at any ring's head, nothing under way); 0 now and then regardless, so
 * that the sockets and the clock are looked at. */
__attribute__((visibility("hidden"))) int sctpt_shm_quiet(struct sctpt_ep *ep);
/* The engine's sockets need reading now (else they are read every millisecond only: while
 * every peer that talks is a local one). */
int sctpt_shm_engine_due(struct sctpt_ep *ep);
/* Pulls still to be read by their receivers (sctpt_close waits for them). */
int sctpt_shm_unacked(struct sctpt_ep *ep);

/* Without the lock. Before sctpt_wait sleeps: polls the rings for up to cfg.shm_spin_us, then
 * arms the tripwires; returns 1 if something came meanwhile (do not sleep). After the sleep,
 * sctpt_shm_awake disarms them. */
int sctpt_shm_idle(struct sctpt_ep *ep, int timeout_ms);
void sctpt_shm_awake(struct sctpt_ep *ep);

/* The pid whose memory sctpt_peer_read/write may reach for p, or -ENOTSUP. */
int sctpt_shm_pid(struct sctpt_ep *ep, struct sctpt_peer *p);

/* Fuzz hook (takes the lock): the receiving side of a ring of peer, whose records are data
 * (at most 1 MiB is used, zero-filled to a power of two of at least 4 KiB) and whose sender
 * claims to have written up to write_pos; then the peer is as before (its ring gone, its
 * failure undone). 0, or -EINVAL for a peer without shared memory. */
int sctpt_shm_fuzz_ring(struct sctpt_ep *ep, sctpt_peer_t peer, const uint8_t *data, size_t len,
			uint64_t write_pos);

void sctpt_shm_stats(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_peer_stats *st);

/* A completion that pointed into a ring was released: its record's room goes back to the
 * sender (the ring's mapping goes with the last one once its peer is gone). */
struct sctpt_loan;
void sctpt_shm_loan_end(struct sctpt_ep *ep, struct sctpt_loan *loan);

#endif
