/* CRC32c: hardware instruction or slicing-by-8 table, chosen once at first use. */
#include "sctpe_crc32c.h"

#include "sctpe_proto.h"

#include <string.h>
#include <sys/uio.h>

#include "common/sm_bytes.h"

#define POLY 0x82f63b78u /* Castagnoli, reflected */

static uint32_t g_table[8][256];
static int g_ready; /* 1: tables built; bit 2: hardware */

static void tables_build(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		g_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			g_table[t][i] = (g_table[t - 1][i] >> 8) ^ g_table[0][g_table[t - 1][i] & 0xff];
}

/* Raw update (no inversion) by table, eight bytes at a time. */
static uint32_t sw_update(uint32_t c, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		c = g_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
		len--;
	}
	while (len >= 8) {
		uint32_t lo = c ^ sm_get_le32(p), hi = sm_get_le32(p + 4);
		c = g_table[7][lo & 0xff] ^ g_table[6][(lo >> 8) & 0xff] ^
		    g_table[5][(lo >> 16) & 0xff] ^ g_table[4][lo >> 24] ^
		    g_table[3][hi & 0xff] ^ g_table[2][(hi >> 8) & 0xff] ^
		    g_table[1][(hi >> 16) & 0xff] ^ g_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = g_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__)
/*
 * The crc32 instruction takes three cycles but can start one per cycle: three streams over
 * adjacent blocks keep it busy, and their registers are joined by shifting over a block of
 * zeros (the CRC is linear: crc(a || b) = shift(crc(a), |b|) ^ crc(b), from 0), a table
 * lookup per byte of the register. Two block sizes: packets of one Ethernet MTU get the
 * short one.
 */
#define LONG_BLOCK 1024
#define SHORT_BLOCK 128
static uint32_t g_shift_long[4][256], g_shift_short[4][256];

static uint32_t shift(const uint32_t t[4][256], uint32_t c)
{
	return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

/* t[k][i]: the register i << 8k after len zero bytes, built from the 32 single bits */
static void shift_build(uint32_t t[4][256], size_t len)
{
	uint32_t bit[32];
	for (int b = 0; b < 32; b++) {
		uint32_t c = 1u << b;
		for (size_t n = 0; n < len; n++)
			for (int k = 0; k < 8; k++)
				c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		bit[b] = c;
	}
	for (int k = 0; k < 4; k++)
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = 0;
			for (int b = 0; b < 8; b++)
				if (i & (1u << b))
					c ^= bit[8 * k + b];
			t[k][i] = c;
		}
}

__attribute__((target("sse4.2"))) static uint64_t hw_blocks(uint64_t c0, const uint8_t **pp,
							     size_t *lenp, size_t block,
							     const uint32_t t[4][256])
{
	const uint8_t *p = *pp;
	size_t len = *lenp;
	while (len >= 3 * block) {
		uint64_t c1 = 0, c2 = 0;
		for (size_t i = 0; i < block; i += 8) {
			uint64_t v0, v1, v2;
			memcpy(&v0, p + i, 8);
			memcpy(&v1, p + block + i, 8);
			memcpy(&v2, p + 2 * block + i, 8);
			c0 = __builtin_ia32_crc32di(c0, v0);
			c1 = __builtin_ia32_crc32di(c1, v1);
			c2 = __builtin_ia32_crc32di(c2, v2);
		}
		c0 = shift(t, shift(t, (uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
		p += 3 * block;
		len -= 3 * block;
	}
	*pp = p;
	*lenp = len;
	return c0;
}

__attribute__((target("sse4.2"))) static uint32_t hw_update(uint32_t c, const uint8_t *p,
							     size_t len)
{
	uint64_t c64 = c;
	while (len && ((uintptr_t)p & 7)) {
		c64 = __builtin_ia32_crc32qi((uint32_t)c64, *p++);
		len--;
	}
	c64 = hw_blocks(c64, &p, &len, LONG_BLOCK, g_shift_long);
	c64 = hw_blocks(c64, &p, &len, SHORT_BLOCK, g_shift_short);
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c64 = __builtin_ia32_crc32di(c64, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c64 = __builtin_ia32_crc32qi((uint32_t)c64, *p++);
	return (uint32_t)c64;
}
#endif

static int setup(void)
{
	int r = __atomic_load_n(&g_ready, __ATOMIC_ACQUIRE);
	if (r)
		return r;
	tables_build();
	r = 1;
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2")) {
		shift_build(g_shift_long, LONG_BLOCK);
		shift_build(g_shift_short, SHORT_BLOCK);
		r |= 2;
	}
#endif
	__atomic_store_n(&g_ready, r, __ATOMIC_RELEASE);
	return r;
}

static uint32_t update(uint32_t c, const uint8_t *p, size_t len)
{
#if defined(__x86_64__)
	if (setup() & 2)
		return hw_update(c, p, len);
#else
	setup();
#endif
	return sw_update(c, p, len);
}

uint32_t sctpe_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	setup();
	return ~sw_update(~crc, buf, len);
}

uint32_t sctpe_crc32c_extend(uint32_t crc, const void *buf, size_t len)
{
	return ~update(~crc, buf, len);
}

uint32_t sctpe_crc32c(const void *buf, size_t len)
{
	return sctpe_crc32c_extend(0, buf, len);
}

int sctpe_crc32c_hw(void)
{
	return (setup() & 2) != 0;
}

uint32_t sctpe_crc32c_packet(const uint8_t *pkt, size_t len)
{
	static const uint8_t zero[4];
	if (len < SCTPE_COMMON_LEN)
		return 0;
	uint32_t c = update(~0u, pkt, SCTPE_OFF_CSUM);
	c = update(c, zero, 4);
	c = update(c, pkt + SCTPE_COMMON_LEN, len - SCTPE_COMMON_LEN);
	return ~c;
}

uint32_t sctpe_crc32c_packetv(const struct iovec *iov, int n)
{
	static const uint8_t zero[4];
	const uint8_t *p = iov[0].iov_base;
	uint32_t c = update(~0u, p, SCTPE_OFF_CSUM);
	c = update(c, zero, 4);
	c = update(c, p + SCTPE_COMMON_LEN, iov[0].iov_len - SCTPE_COMMON_LEN);
	for (int i = 1; i < n; i++)
		c = update(c, iov[i].iov_base, iov[i].iov_len);
	return ~c;
}

void sctpe_crc32c_set(uint8_t *pkt, size_t len)
{
	sm_put_le32(pkt + SCTPE_OFF_CSUM, sctpe_crc32c_packet(pkt, len));
}

int sctpe_crc32c_check(const uint8_t *pkt, size_t len)
{
	if (len < SCTPE_COMMON_LEN)
		return -1;
	return sm_get_le32(pkt + SCTPE_OFF_CSUM) == sctpe_crc32c_packet(pkt, len) ? 0 : -1;
}
