/* nvm_seg.c - shared segments: allocation and reference counting. */
#include "nvm_seg.h"

#include <stdlib.h>

struct nvm_seg *nvm_seg_new(uint32_t id, size_t len, uint32_t rights)
{
	if (len == 0)
		return NULL;
	struct nvm_seg *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->base = calloc(1, len);
	if (!s->base) {
		free(s);
		return NULL;
	}
	s->id = id;
	s->len = len;
	s->rights = rights;
	atomic_init(&s->lock, 0);
	atomic_init(&s->flag, 0);
	atomic_init(&s->refs, 1);
	return s;
}

void nvm_seg_get(struct nvm_seg *s)
{
	atomic_fetch_add(&s->refs, 1);
}

void nvm_seg_put(struct nvm_seg *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
		free(s->base);
		free(s);
	}
}
