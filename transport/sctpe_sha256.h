/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104): the state cookie's signature. */
#ifndef SCTPE_SHA256_H
#define SCTPE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SCTPE_SHA256_LEN 32

struct sctpe_sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t nbuf;
};

void sctpe_sha256_init(struct sctpe_sha256 *s);
void sctpe_sha256_update(struct sctpe_sha256 *s, const void *data, size_t len);
void sctpe_sha256_final(struct sctpe_sha256 *s, uint8_t out[SCTPE_SHA256_LEN]);
void sctpe_hmac_sha256(const uint8_t *key, size_t klen, const void *data, size_t len,
		       uint8_t out[SCTPE_SHA256_LEN]);

#endif
