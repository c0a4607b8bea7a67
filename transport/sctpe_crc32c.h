/*
 * CRC32c (Castagnoli), SCTP's checksum: the SSE4.2 crc32 instruction where the CPU has it,
 * else a slicing-by-8 table. Both are checked against RFC 3720's test vectors.
 */
#ifndef SCTPE_CRC32C_H
#define SCTPE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC32c of buf (initial value all ones, result inverted). */
uint32_t sctpe_crc32c(const void *buf, size_t len);
/* The same, continued: crc is a previous result (0 to start). */
uint32_t sctpe_crc32c_extend(uint32_t crc, const void *buf, size_t len);
/* The table implementation alone (for tests and CPUs without SSE4.2). */
uint32_t sctpe_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* 1 if the hardware instruction is used. */
int sctpe_crc32c_hw(void);

/* An SCTP packet's checksum: over the packet with its checksum field taken as zero. */
uint32_t sctpe_crc32c_packet(const uint8_t *pkt, size_t len);
/* The same for a packet in pieces: iov[0] starts with the common header (12 bytes at least). */
struct iovec;
uint32_t sctpe_crc32c_packetv(const struct iovec *iov, int n);
/* Writes it into the packet's checksum field; checks it (0 ok, -1 bad). */
void sctpe_crc32c_set(uint8_t *pkt, size_t len);
int sctpe_crc32c_check(const uint8_t *pkt, size_t len);

#endif
