/*
 * A timer wheel: one slot per millisecond, 512 slots; a timer further away waits in its slot
 * until its time comes round. Arming, re-arming and stopping are O(1); a run costs the slots
 * it passes plus the timers in them. Timers are embedded in their owners.
 */
#ifndef SCTPE_TIMER_H
#define SCTPE_TIMER_H

#include <stdint.h>

#define SCTPE_WHEEL_SLOTS 512u

struct sctpe_timer;
typedef void (*sctpe_timer_fn)(struct sctpe_timer *t);

struct sctpe_timer {
	struct sctpe_timer *next, **pprev; /* pprev NULL: not armed */
	uint64_t expire;                   /* ms */
	sctpe_timer_fn fn;
};

struct sctpe_wheel {
	uint64_t now;                      /* ms: time of the last run */
	unsigned armed;
	struct sctpe_timer *slot[SCTPE_WHEEL_SLOTS];
};

void sctpe_wheel_init(struct sctpe_wheel *w, uint64_t now);
void sctpe_timer_init(struct sctpe_timer *t, sctpe_timer_fn fn);
/* Arms (or moves) t to fire at expire (ms; one in the past fires at the next run). */
void sctpe_timer_arm(struct sctpe_wheel *w, struct sctpe_timer *t, uint64_t expire);
void sctpe_timer_stop(struct sctpe_wheel *w, struct sctpe_timer *t);
static inline int sctpe_timer_armed(const struct sctpe_timer *t)
{
	return t->pprev != 0;
}
/* Fires every timer due by now (each is disarmed before its function runs, which may arm
 * it again); returns how many fired. */
int sctpe_wheel_run(struct sctpe_wheel *w, uint64_t now);

#endif
