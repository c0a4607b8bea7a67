#include "sctpt_order.h"

#include <stdlib.h>

static uint32_t next_seq(uint32_t s)
{
	return s == UINT32_MAX ? 1 : s + 1;
}

/* Serial-number distance from a to b, as a signed value (RFC 1982 style; 0 is skipped). */
static int64_t seq_dist(uint32_t a, uint32_t b)
{
	int64_t d = (int64_t)b - (int64_t)a;
	if (d > INT32_MAX)
		d -= (int64_t)UINT32_MAX; /* the ring has UINT32_MAX members: 1..UINT32_MAX */
	else if (d < -(int64_t)INT32_MAX)
		d += (int64_t)UINT32_MAX;
	return d;
}

void sctpt_order_init(struct sctpt_order *o)
{
	o->slots = NULL;
	o->cap = o->count = 0;
}

void sctpt_order_fini(struct sctpt_order *o, void (*release)(struct sctpt_order_item *))
{
	for (uint32_t i = 0; i < o->cap; i++) {
		struct sctpt_order_item *it = o->slots[i].held, *n;
		for (; it; it = n) {
			n = it->next;
			if (release)
				release(it);
		}
	}
	free(o->slots);
	sctpt_order_init(o);
}

static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	return x ^ (x >> 16);
}

static struct sctpt_order_ctx *find_slot(struct sctpt_order_ctx *slots, uint32_t cap,
					 uint32_t context)
{
	uint32_t i = hash32(context) & (cap - 1);
	while (slots[i].used && slots[i].context != context)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct sctpt_order *o)
{
	uint32_t cap = o->cap ? o->cap * 2 : 8;
	struct sctpt_order_ctx *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (uint32_t i = 0; i < o->cap; i++)
		if (o->slots[i].used)
			*find_slot(slots, cap, o->slots[i].context) = o->slots[i];
	free(o->slots);
	o->slots = slots;
	o->cap = cap;
	return 0;
}

struct sctpt_order_ctx *sctpt_order_get(struct sctpt_order *o, uint32_t context)
{
	if ((o->count + 1) * 4 > o->cap * 3 && grow(o) != 0)
		return NULL;
	struct sctpt_order_ctx *c = find_slot(o->slots, o->cap, context);
	if (!c->used) {
		c->used = 1;
		c->context = context;
		c->send_seq = 0;
		c->recv_seq = 1;
		c->held = NULL;
		c->nheld = 0;
		o->count++;
	}
	return c;
}

uint32_t sctpt_order_stamp(struct sctpt_order_ctx *c)
{
	c->send_seq = next_seq(c->send_seq);
	return c->send_seq;
}

enum sctpt_order_verdict sctpt_order_classify(const struct sctpt_order_ctx *c, uint32_t seq)
{
	if (seq == 0)
		return SCTPT_ORDER_BAD;
	int64_t d = seq_dist(c->recv_seq, seq);
	if (d == 0)
		return SCTPT_ORDER_NOW;
	if (d < 0)
		return SCTPT_ORDER_BAD;
	for (const struct sctpt_order_item *it = c->held; it; it = it->next)
		if (it->seq == seq)
			return SCTPT_ORDER_BAD;
	return SCTPT_ORDER_HOLD;
}

void sctpt_order_hold(struct sctpt_order_ctx *c, struct sctpt_order_item *it)
{
	struct sctpt_order_item **pp = &c->held;
	while (*pp && seq_dist(c->recv_seq, (*pp)->seq) < seq_dist(c->recv_seq, it->seq))
		pp = &(*pp)->next;
	it->next = *pp;
	*pp = it;
	c->nheld++;
}

struct sctpt_order_item *sctpt_order_advance(struct sctpt_order_ctx *c)
{
	c->recv_seq = next_seq(c->recv_seq);
	struct sctpt_order_item *it = c->held;
	if (it && it->seq == c->recv_seq) {
		c->held = it->next;
		c->nheld--;
		return it;
	}
	return NULL;
}
