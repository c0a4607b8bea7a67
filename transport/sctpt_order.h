/*
 * Per-(peer, context) message ordering: the sender stamps sequence numbers, the receiver
 * releases messages in that order and holds the ones that complete early (they travelled on a
 * less busy stream). This is what keeps MPI_ANY_TAG receives correct while streams run freely.
 * Sequence 0 is never used (it marks unordered messages); numbers wrap past 2^32-1 to 1.
 */
#ifndef SCTPT_ORDER_H
#define SCTPT_ORDER_H

#include <stdint.h>

/* Embed in whatever is held; the order table links items through it. */
struct sctpt_order_item {
	struct sctpt_order_item *next;
	uint32_t seq;
};

struct sctpt_order_ctx {
	uint32_t context;
	uint32_t send_seq;  /* last stamped */
	uint32_t recv_seq;  /* next to release */
	uint32_t nheld;
	struct sctpt_order_item *held; /* sorted by seq */
	int used;
};

struct sctpt_order {
	struct sctpt_order_ctx *slots; /* open addressing, power-of-two capacity */
	uint32_t cap, count;
};

void sctpt_order_init(struct sctpt_order *o);
/* Calls release(item) for every held item, then frees the table. */
void sctpt_order_fini(struct sctpt_order *o, void (*release)(struct sctpt_order_item *));
/* The context's state, created on first use; NULL only when out of memory. */
struct sctpt_order_ctx *sctpt_order_get(struct sctpt_order *o, uint32_t context);
uint32_t sctpt_order_stamp(struct sctpt_order_ctx *c);

enum sctpt_order_verdict { SCTPT_ORDER_NOW, SCTPT_ORDER_HOLD, SCTPT_ORDER_BAD };
/* Where an arriving seq stands: release now, hold for later, or bad (already released,
 * duplicate, or more than 2^31 ahead). */
enum sctpt_order_verdict sctpt_order_classify(const struct sctpt_order_ctx *c, uint32_t seq);
void sctpt_order_hold(struct sctpt_order_ctx *c, struct sctpt_order_item *it);
/* After releasing recv_seq: advances, and returns the held item that is now next, if any
 * (the caller releases it and calls again). */
struct sctpt_order_item *sctpt_order_advance(struct sctpt_order_ctx *c);

#endif
