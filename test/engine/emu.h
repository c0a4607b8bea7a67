/*
 * A peer emulated packet by packet in front of one native endpoint (tests and fuzz targets):
 * what the test builds is handed to the engine as if it came from the peer; what the engine
 * sends is captured instead of going out. The endpoint knows the emulated peer by a card; its
 * association to us is the engine's "in" association (to our receive port 5001), ours to it
 * the "out" one.
 */
#ifndef EMU_H
#define EMU_H

#include "sctpe_int.h"

#define EMU_CAP 256

struct emu_pkt {
	int in;          /* sent on the peer's association (to its port 5000) */
	size_t len;
	uint8_t *data;
};

struct emu {
	struct sctpt_ep *ep;
	struct sctpe_ep *e;
	sctpt_peer_t peer;
	struct emu_pkt pkts[EMU_CAP]; /* captured, oldest first */
	int npkts, dropped;
	/* the emulated peer's association to the endpoint */
	uint32_t tag;        /* its own tag (the endpoint puts it on what it sends) */
	uint32_t peer_tag;   /* the endpoint's tag (what we put on our packets) */
	uint32_t tsn;        /* the next TSN we send */
	uint8_t cookie[256];
	size_t cookie_len;
	int echo_delay_ms;   /* emu_handshake waits this long before echoing the cookie */
	/* what the endpoint's handler saw */
	int recvs, events, downs, ups;
	size_t recv_bytes;
	uint8_t last[4096];
	size_t last_len;
	int32_t tags[64];    /* of the first messages received, in order */
	int last_down_err;
};

/* Opens the endpoint (crc: CRC32c on) and adds the emulated peer. 0 or < 0. */
int emu_open(struct emu *m, int crc, uint16_t streams);
void emu_close(struct emu *m);
/* A packet of chunks (already laid out, padded) from the peer, to our receive port (in) or
 * our send port; vtag as given. */
void emu_inject(struct emu *m, int in, uint32_t vtag, const uint8_t *chunks, size_t len);
/* The same with the common header's checksum made right (CRC32c) or left as given. */
void emu_inject_raw(struct emu *m, const uint8_t *pkt, size_t len);
/* Progress the endpoint (receive, events, completions). */
void emu_progress(struct emu *m);
/* The newest captured chunk of this type (and its packet's vtag), or NULL. */
const uint8_t *emu_chunk(struct emu *m, uint8_t type, uint16_t *len, uint32_t *vtag);
void emu_clear(struct emu *m);
/* INIT, INIT ACK, COOKIE ECHO, COOKIE ACK for the peer's association; idata: list I-DATA. 0 if
 * the endpoint took it up. */
int emu_handshake(struct emu *m, int idata);
/* A core message (envelope, then n bytes of 'x'): context 1, this tag, unordered for the
 * core (SCTP's own order is what tests look at). Returns its length. */
size_t emu_message(uint8_t *out, int32_t tag, size_t n);
/* One DATA (or I-DATA) chunk, laid out into out; returns its padded length. */
size_t emu_data(uint8_t *out, int idata, uint8_t flags, uint32_t tsn, uint16_t sid,
		uint32_t mid, uint32_t fsn, const void *payload, size_t len);

#endif
