/*
 * sm_bytes.h - fixed-width integers to and from byte buffers, whatever the host's order
 * or the buffer's alignment.
 *
 *   sm_put_be16/32/64(p, v), sm_get_be16/32/64(p)   big-endian (network order)
 *   sm_put_le16/32/64(p, v), sm_get_le16/32/64(p)   little-endian
 *   sm_put_le(p, v, n), sm_get_le(p, n)             little-endian, n = 1..8 bytes
 */
#ifndef SM_BYTES_H
#define SM_BYTES_H

#include <stdint.h>

static inline void sm_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void sm_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void sm_put_be64(uint8_t *p, uint64_t v)
{
	sm_put_be32(p, (uint32_t)(v >> 32));
	sm_put_be32(p + 4, (uint32_t)v);
}

static inline uint16_t sm_get_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t sm_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t sm_get_be64(const uint8_t *p)
{
	return (uint64_t)sm_get_be32(p) << 32 | sm_get_be32(p + 4);
}

static inline void sm_put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t sm_get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline void sm_put_le16(uint8_t *p, uint16_t v)
{
	sm_put_le(p, v, 2);
}

static inline void sm_put_le32(uint8_t *p, uint32_t v)
{
	sm_put_le(p, v, 4);
}

static inline void sm_put_le64(uint8_t *p, uint64_t v)
{
	sm_put_le(p, v, 8);
}

static inline uint16_t sm_get_le16(const uint8_t *p)
{
	return (uint16_t)sm_get_le(p, 2);
}

static inline uint32_t sm_get_le32(const uint8_t *p)
{
	return (uint32_t)sm_get_le(p, 4);
}

static inline uint64_t sm_get_le64(const uint8_t *p)
{
	return sm_get_le(p, 8);
}

#endif
