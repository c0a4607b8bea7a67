/* The timer wheel (sctpe_timer.h). */
#include "sctpe_timer.h"

#include <string.h>

void sctpe_wheel_init(struct sctpe_wheel *w, uint64_t now)
{
	memset(w, 0, sizeof(*w));
	w->now = now;
}

void sctpe_timer_init(struct sctpe_timer *t, sctpe_timer_fn fn)
{
	t->next = NULL;
	t->pprev = NULL;
	t->expire = 0;
	t->fn = fn;
}

static void link_in(struct sctpe_wheel *w, struct sctpe_timer *t)
{
	/* a time already passed goes to the next slot a run will visit */
	uint64_t at = t->expire > w->now ? t->expire : w->now + 1;
	struct sctpe_timer **head = &w->slot[at % SCTPE_WHEEL_SLOTS];
	t->next = *head;
	if (*head)
		(*head)->pprev = &t->next;
	*head = t;
	t->pprev = head;
}

static void unlink_t(struct sctpe_timer *t)
{
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	t->next = NULL;
	t->pprev = NULL;
}

void sctpe_timer_arm(struct sctpe_wheel *w, struct sctpe_timer *t, uint64_t expire)
{
	if (t->pprev)
		unlink_t(t);
	else
		w->armed++;
	t->expire = expire;
	link_in(w, t);
}

void sctpe_timer_stop(struct sctpe_wheel *w, struct sctpe_timer *t)
{
	if (!t->pprev)
		return;
	unlink_t(t);
	w->armed--;
}

int sctpe_wheel_run(struct sctpe_wheel *w, uint64_t now)
{
	if (now <= w->now)
		return 0;
	uint64_t ticks = now - w->now, from = w->now + 1;
	int fired = 0;
	if (ticks > SCTPE_WHEEL_SLOTS)
		ticks = SCTPE_WHEEL_SLOTS; /* every slot once */
	w->now = now; /* what callbacks arm goes after this run */
	for (uint64_t k = 0; k < ticks && w->armed; k++) {
		struct sctpe_timer **head = &w->slot[(from + k) % SCTPE_WHEEL_SLOTS];
		struct sctpe_timer *list = *head, *t;
		*head = NULL;
		if (list)
			list->pprev = &list;
		while ((t = list)) {
			unlink_t(t);
			if (t->expire <= now) {
				w->armed--;
				t->fn(t);
				fired++;
			} else {
				link_in(w, t); /* a later round */
			}
		}
	}
	return fired;
}
