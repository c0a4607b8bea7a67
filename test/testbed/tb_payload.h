/* Payloads the testbed's traffic programs send and check: deterministic per (src, dst, round).
 * Both work a 64-bit word at a time: byte-wise, making and checking payloads cost the
 * benchmarks more CPU than usrsctp itself (perf: 25% against 9% at 4 rails). */
#ifndef TB_PAYLOAD_H
#define TB_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* FNV-1a over 64-bit words (then the tail bytes): a check sum, not the standard FNV. */
static inline uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = UINT64_C(14695981039346656037), w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * UINT64_C(1099511628211);
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * UINT64_C(1099511628211);
	return h;
}

/* The payload of message (src -> dst, round): an xorshift stream seeded from the three. */
static inline void fill(unsigned char *p, size_t n, uint32_t src, uint32_t dst, uint32_t round)
{
	uint64_t x = (uint64_t)src << 40 ^ (uint64_t)dst << 20 ^ round ^ UINT64_C(0x9e3779b97f4a7c15);

	for (size_t i = 0; i < n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, n - i < 8 ? n - i : 8);
	}
}

#endif
