/*
 * SCTP packets: a bounds-checked parser (common header, chunks, parameters and error causes,
 * the fixed fields of each chunk the engine handles) and a builder that appends padded
 * chunks into a caller's buffer and sets the checksum. No allocation; a parser never reads
 * past the length it was given, whatever the lengths inside claim.
 */
#ifndef SCTPE_PACKET_H
#define SCTPE_PACKET_H

#include "sctpe_proto.h"

#include <stddef.h>
#include <stdint.h>

/* ---- parsing ---- */

struct sctpe_hdr {
	uint16_t sport, dport;
	uint32_t vtag;
};

/* A view of chunks (or parameters, or error causes: the same type-length-value layout). */
struct sctpe_iter {
	const uint8_t *p;
	size_t len, off;
};

struct sctpe_chunk {
	uint8_t type, flags;
	uint16_t len;         /* header included, padding not */
	const uint8_t *p;     /* the chunk header; p[0..len) is inside the packet */
};

struct sctpe_tlv {
	uint16_t type, len;   /* parameter type or cause code; len: header included */
	const uint8_t *val;   /* the value: len - 4 bytes */
	size_t vlen;
};

/* The common header of a packet of len bytes, and an iterator over its chunks: 0, or
 * -EMSGSIZE (shorter than a common header or longer than SCTPE_MAX_PACKET). The checksum is
 * the caller's to check (sctpe_crc32c_check), as whether to check it is. */
int sctpe_packet_parse(const uint8_t *buf, size_t len, struct sctpe_hdr *h,
		       struct sctpe_iter *chunks);
/* The next chunk: 1, 0 at the end, -EBADMSG if a length is under the header's or runs past
 * the packet (what follows cannot be found: the rest is unusable). */
int sctpe_chunk_next(struct sctpe_iter *it, struct sctpe_chunk *c);
/* Parameters or causes from val[0..len): the same conventions. */
void sctpe_tlv_iter(struct sctpe_iter *it, const uint8_t *val, size_t len);
int sctpe_tlv_next(struct sctpe_iter *it, struct sctpe_tlv *t);

/* DATA or I-DATA, decoded alike: for DATA mid is the SSN and fsn is 0. */
struct sctpe_data {
	uint8_t flags;        /* SCTPE_DATA_{I,U,B,E} */
	uint8_t idata;        /* 1: an I-DATA chunk */
	uint16_t sid;
	uint32_t tsn, mid, fsn, ppid;
	const uint8_t *payload;
	size_t len;
};
/* 0, or -EBADMSG (shorter than its fixed part). An empty payload is the caller's to refuse
 * (No User Data). */
int sctpe_data_decode(const struct sctpe_chunk *c, struct sctpe_data *d);

struct sctpe_init {
	uint32_t itag, arwnd, itsn;
	uint16_t os, mis;
	const uint8_t *params;
	size_t plen;
};
int sctpe_init_decode(const struct sctpe_chunk *c, struct sctpe_init *in);

struct sctpe_sack {
	uint32_t cum, arwnd;
	uint16_t ngaps, ndups;
	const uint8_t *gaps;  /* ngaps x (start, end), offsets from cum */
	const uint8_t *dups;  /* ndups x TSN */
};
/* -EBADMSG also when the counts claim more blocks than the chunk holds. */
int sctpe_sack_decode(const struct sctpe_chunk *c, struct sctpe_sack *s);
static inline uint16_t sctpe_sack_gap_start(const struct sctpe_sack *s, int i)
{
	return (uint16_t)(s->gaps[4 * i] << 8 | s->gaps[4 * i + 1]);
}
static inline uint16_t sctpe_sack_gap_end(const struct sctpe_sack *s, int i)
{
	return (uint16_t)(s->gaps[4 * i + 2] << 8 | s->gaps[4 * i + 3]);
}

/* SHUTDOWN's cumulative TSN ack; -EBADMSG if short. */
int sctpe_shutdown_decode(const struct sctpe_chunk *c, uint32_t *cum);
/* The Heartbeat Info parameter of a HEARTBEAT or HEARTBEAT ACK. */
int sctpe_heartbeat_decode(const struct sctpe_chunk *c, struct sctpe_tlv *info);

/* ---- building ---- */

struct sctpe_pb {
	uint8_t *buf;
	size_t cap, len;
	size_t end;           /* the last element's end before its padding */
};

/* Starts a packet in buf[0..cap) with its common header. */
void sctpe_pb_init(struct sctpe_pb *b, uint8_t *buf, size_t cap, uint16_t sport, uint16_t dport,
		   uint32_t vtag);
/* Room for a chunk of len bytes (padded) still? */
static inline int sctpe_pb_fits(const struct sctpe_pb *b, size_t len)
{
	return b->len + SCTPE_PAD4(len) <= b->cap;
}
/* Appends a chunk of len bytes (header included), its header written and its padding
 * zeroed (its value is for the caller to write); returns its start, or NULL if it does not
 * fit. */
uint8_t *sctpe_pb_chunk(struct sctpe_pb *b, uint8_t type, uint8_t flags, size_t len);
/* A chunk whose length is not known yet: open it, append parameters or bytes, close it. */
uint8_t *sctpe_pb_open(struct sctpe_pb *b, uint8_t type, uint8_t flags, size_t fixed);
int sctpe_pb_param(struct sctpe_pb *b, uint16_t type, const void *val, size_t vlen);
int sctpe_pb_put(struct sctpe_pb *b, const void *val, size_t vlen);
void sctpe_pb_close(struct sctpe_pb *b, uint8_t *chunk);
/* Drops the chunks after len bytes (an open chunk that did not fit). */
void sctpe_pb_trim(struct sctpe_pb *b, size_t len);
/* Sets the checksum (crc: CRC32c, else 0) and returns the packet's length. */
size_t sctpe_pb_finish(struct sctpe_pb *b, int crc);

/* A DATA or I-DATA chunk header (d's fields, not payload/len) for a payload of len bytes;
 * returns where the payload goes, or NULL if it does not fit. */
uint8_t *sctpe_pb_data(struct sctpe_pb *b, const struct sctpe_data *d, size_t len);

#endif
