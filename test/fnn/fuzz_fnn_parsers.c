/*
 * Fuzz target: the translators' parsers.  The first byte picks one: address map, basic
 * routes (for 8 PCs), advanced tuples; whatever parses must print and parse back equal.
 */
#include "routing/fnn/fnn.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *printed(int (*fn)(const void *, FILE *), const void *obj, size_t *len)
{
	char *buf;
	FILE *f = open_memstream(&buf, len);
	if (!f || fn(obj, f))
		abort();
	fclose(f);
	return buf;
}

static int pr_addr(const void *o, FILE *f) { return fnn_addrmap_print(o, f); }
static int pr_routes(const void *o, FILE *f) { return fnn_routes_print(o, f); }
static int pr_adv(const void *o, FILE *f) { return fnn_advanced_print(o, f); }

static void addrmap(const char *s, size_t n)
{
	struct fnn_addrmap m, m2;
	char err[256], *buf;
	size_t len;
	if (fnn_addrmap_parse(&m, s, n, err, sizeof(err)))
		return;
	buf = printed(pr_addr, &m, &len);
	if (fnn_addrmap_parse(&m2, buf, len, err, sizeof(err)) || m2.npcs > m.npcs)
		abort();
	for (int pc = 0; pc < m.npcs; pc++)
		for (int k = 0; k < m.maxnics; k++) {
			const struct fnn_nic_addr *a = fnn_addr(&m, pc, k), *b = fnn_addr(&m2, pc, k);
			if (!a != !b || (a && strcmp(a->ip, b->ip)))
				abort();
		}
	fnn_addrmap_free(&m2);
	fnn_addrmap_free(&m);
	free(buf);
}

static void routes(const char *s, size_t n)
{
	struct fnn_routes r, r2;
	char err[256], *buf;
	size_t len;
	if (fnn_routes_parse(&r, 8, s, n, err, sizeof(err)))
		return;
	buf = printed(pr_routes, &r, &len);
	if (fnn_routes_parse(&r2, 8, buf, len, err, sizeof(err)))
		abort();
	for (int a = 0; a < 8; a++)
		for (int b = a + 1; b < 8; b++)
			if (fnn_route(&r, a, b)->sw != fnn_route(&r2, a, b)->sw)
				abort();
	fnn_routes_free(&r2);
	fnn_routes_free(&r);
	free(buf);
}

static void advanced(const char *s, size_t n)
{
	struct fnn_advanced t, t2;
	char err[256], *buf;
	size_t len;
	/* a header may ask for 4096 PCs (a 128 MB table); keep fuzz inputs small */
	char head[64] = "";
	int pcs = 0;
	memcpy(head, s, n < sizeof(head) - 1 ? n : sizeof(head) - 1);
	if (sscanf(head, "# fnn-advanced pcs %d", &pcs) == 1 && pcs > 64)
		return;
	if (fnn_advanced_parse(&t, s, n, err, sizeof(err)))
		return;
	buf = printed(pr_adv, &t, &len);
	if (fnn_advanced_parse(&t2, buf, len, err, sizeof(err)) ||
	    memcmp(t.tuple, t2.tuple, sizeof(uint64_t) * t.npcs * t.npcs))
		abort();
	fnn_advanced_free(&t2);
	fnn_advanced_free(&t);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *s = (const char *)data + 1;
	switch (data[0] % 3) {
	case 0: addrmap(s, size - 1); break;
	case 1: routes(s, size - 1); break;
	default: advanced(s, size - 1); break;
	}
	return 0;
}
