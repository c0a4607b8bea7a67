/*
 * Internals of the native SCTP engine, shared by its files (sctpe_ep.c: the engine endpoint,
 * demultiplexing and events; sctpe_assoc.c: the association's state machine and control
 * chunks; sctpe_stream.c: what arrives, reassembly, delivery; sctpe_out.c: what leaves,
 * SACKs, retransmission). Everything runs under the core endpoint's lock.
 */
#ifndef SCTPE_INT_H
#define SCTPE_INT_H

#include "sctpt_int.h"
#include "sctpe_cc.h"
#include "sctpe_packet.h"
#include "sctpe_timer.h"
#include "sctpe_tsn.h"

#include <stddef.h>
#include <stdio.h>
#include <sys/queue.h>

#define sctpe_container(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* Association states (RFC 9260 4). */
enum sctpe_state {
	SCTPE_CLOSED,
	SCTPE_COOKIE_WAIT,
	SCTPE_COOKIE_ECHOED,
	SCTPE_ESTABLISHED,
	SCTPE_SHUTDOWN_PENDING,
	SCTPE_SHUTDOWN_SENT,
	SCTPE_SHUTDOWN_RECEIVED,
	SCTPE_SHUTDOWN_ACK_SENT,
	SCTPE_NSTATES
};

/* Protocol parameters (RFC 9260 16) the core's configuration does not set. */
#define SCTPE_VALID_COOKIE_LIFE_MS 60000
#define SCTPE_MAX_INIT_RETRANS 4       /* as the usrsctp engine is configured */
#define SCTPE_SPORT 5000               /* SCTP ports: we send from 5000, receive on 5001 */
#define SCTPE_RPORT 5001
#define SCTPE_MAX_BURST 64             /* packets per flush of one association */

/* Buffer size classes: chunks and messages take the smallest that holds them. */
#define SCTPE_NCLASS 4
#define SCTPE_MAX_MSG (65536 + 256)    /* the largest class: no message above it */
extern const uint32_t sctpe_class_size[SCTPE_NCLASS];

/* ---- what arrives ---- */

/* One received DATA or I-DATA chunk's payload; the first of a complete message heads it. */
struct sctpe_rchunk {
	struct sctpe_rchunk *next, *prev; /* reassembly list; then the message's fragments */
	struct sctpe_rchunk *hnext;       /* complete messages held for order */
	TAILQ_ENTRY(sctpe_rchunk) dlink;  /* the endpoint's delivery queue (message heads) */
	struct sctpe_assoc *a;
	uint64_t msg_len;                 /* heads of complete messages */
	uint32_t tsn, mid, fsn, ppid, len;
	uint16_t sid;
	uint8_t flags, cls;
	uint8_t data[];
};
TAILQ_HEAD(sctpe_rchunkq, sctpe_rchunk);

struct sctpe_instream {
	struct sctpe_rchunk *head, *tail;   /* fragments: DATA by TSN, I-DATA by (MID, FSN) */
	struct sctpe_rchunk *uhead, *utail; /* I-DATA unordered fragments */
	struct sctpe_rchunk *held;          /* complete ordered messages waiting, by MID */
	uint32_t next_mid;                  /* the next SSN (DATA) or MID (I-DATA) in order */
	uint32_t queued;                    /* its messages in the delivery queue, unread */
	/* message next_mid handed to the core chunk by chunk (sctpt_rx_place_*) */
	int placing;
	uint32_t pl_next;                   /* the chunk that continues it: TSN or FSN */
	struct sctpt_rxcur pl;
};

/* ---- what leaves ---- */

/* One message given to the engine (a copy), from a buffer pool. */
struct sctpe_omsg {
	STAILQ_ENTRY(sctpe_omsg) link;
	uint32_t len, off;        /* bytes; off: how many are in chunks already */
	uint32_t mid, fsn, ppid;  /* MID (SSN for DATA) once its first chunk left */
	uint16_t sid;
	uint8_t flags;            /* SCTPE_DATA_U */
	uint8_t cls;
	int refs;                 /* chunks in flight, + 1 while queued */
	uint8_t data[];
};
STAILQ_HEAD(sctpe_omsgq, sctpe_omsg);

struct sctpe_ostream {
	struct sctpe_omsgq q;
	TAILQ_ENTRY(sctpe_ostream) alink; /* in the association's round-robin */
	int active;
	uint32_t next_ssn, next_umid;
};
TAILQ_HEAD(sctpe_ostreamq, sctpe_ostream);

enum { SCTPE_TC_SENT = 1, SCTPE_TC_GAP, SCTPE_TC_RTX };

/* A DATA chunk sent and not yet cumulatively acknowledged, at ring[tsn % cap]. */
struct sctpe_tchunk {
	struct sctpe_omsg *m;
	uint32_t off, len;        /* payload within m */
	uint32_t mid, fsn;
	uint16_t sid;
	uint8_t flags;            /* B, E, U */
	uint8_t state;            /* SCTPE_TC_* */
	uint8_t ntx, miss, fast_done;
	uint64_t sent_us;
};

/* ---- the association ---- */

enum { SCTPE_EV_UP = 1, SCTPE_EV_DOWN = 2, SCTPE_EV_RESTART = 4 };

struct sctpe_ep;

struct sctpe_assoc {
	struct sctpe_ep *e;
	struct sctpt_peer *peer;
	struct sctpt_sel *sel;       /* where its packets go */
	int rail;                    /* the rail it carries, or -1 */
	int in;                      /* the peer initiated it (our receive port) */
	uint32_t id;                 /* its id in the core (assoc_in / assoc_out) */
	int state;
	uint16_t lport, rport;
	uint32_t my_vtag, peer_vtag;
	int idata;                   /* I-DATA in use (both sides listed it) */
	uint16_t os, mis;            /* streams out and in */
	int fcfs;                    /* send messages first come first served (rails) */
	/* handshake */
	uint8_t *cookie;             /* the peer's, echoed until COOKIE ACK */
	uint16_t cookie_len;
	int init_tries;
	uint32_t my_itsn;
	struct sctpe_timer t1, t2, t3, tsack, thb, t5;
	int shutdown_tries;
	/* inbound */
	struct sctpe_tsnmap tsn;
	struct sctpe_instream *ins;
	uint64_t rx_bytes;           /* buffer taken by what arrived and was not read */
	uint32_t adv_rwnd;           /* the window the last SACK advertised */
	int sack_pkts;               /* packets with DATA since the last SACK */
	int sack_due;                /* a SACK goes with the next flush */
	int sack_fresh;              /* ... made due by this turn's input: it may wait a batch */
	int sack_deferred;           /* ... and waited one already: the next flush sends it */
	unsigned flush_gen;          /* the flush that last sent its data */
	int rx_queued;               /* complete messages in the delivery queue */
	/* outbound */
	struct sctpe_ostream *outs;
	struct sctpe_ostreamq active;
	struct sctpe_omsg *cur;      /* DATA: the message being cut (fragments are consecutive) */
	struct sctpe_omsg *staged;   /* handed to the core to build the next message in */
	size_t staged_cap;
	struct sctpe_tchunk *ring;
	uint32_t ring_cap;
	uint32_t next_tsn;           /* the TSN the next new chunk gets */
	uint32_t cum;                /* the peer's cumulative TSN ack */
	uint64_t queued_bytes;       /* of messages, not yet in chunks */
	uint64_t held_bytes;         /* queued, or in chunks not yet acknowledged */
	uint32_t queued_msgs;
	uint32_t rtx_chunks;         /* marked for retransmission */
	uint32_t peer_rwnd;
	int cwnd_full;               /* sending stopped at cwnd since the last SACK */
	/* the last T3-rtx episode: its congestion state comes back if the peer reports every
	 * chunk it resent as a duplicate (RFC 3708: the originals had arrived; the SACKs were
	 * late, as when the peer's process did not run for an RTO) */
	struct {
		int on;
		uint32_t cwnd, ssthresh, rto_ms;
		uint32_t lo, hi;         /* the TSNs out when it began */
		uint32_t close;          /* the episode ends when this is acknowledged (0: not set) */
		uint32_t resent, dups;   /* chunks of it resent; reported twice by the peer */
	} undo;
	int rtt_on;                  /* a chunk is being timed (Karn) */
	uint32_t rtt_tsn;
	uint64_t last_data_ms;       /* when data was last sent */
	struct sctpe_cc cc;
	/* what to hold for sending: a few bandwidth-delay products, from the delivery rate
	 * (bytes acknowledged per RTT) and the least RTT seen */
	uint64_t rate;               /* bytes/s */
	uint64_t rate_t0_us, rate_bytes;
	uint32_t min_rtt_us;
	int path_errors, errors;     /* consecutive timeouts: path's, association's */
	int hb_out;                  /* a HEARTBEAT is unanswered */
	uint64_t hb_nonce;
	int peer_shutdown;           /* SHUTDOWN received: send nothing new */
	int want_shutdown;           /* shut down once everything is acknowledged */
	/* the endpoint's lists */
	TAILQ_ENTRY(sctpe_assoc) link;  /* all */
	TAILQ_ENTRY(sctpe_assoc) flink; /* waiting to transmit */
	TAILQ_ENTRY(sctpe_assoc) elink; /* events to report */
	int on_flush, on_events, dead;
	int events, down_err;
};
TAILQ_HEAD(sctpe_assocq, sctpe_assoc);

/* What the engine counts: hostile or broken input among it. */
struct sctpe_stats {
	uint64_t pkts_in, pkts_out, bad_csum, bad_vtag, ootb, malformed, bad_cookie, stale_cookie,
		unknown_chunks, aborts_in, aborts_out, rtx_t3, rtx_fast, sacks_in, sacks_out,
		dup_tsns, dropped_window, bad_sacks, placed, rtx_undone;
	/* why new data stopped going out: flushes that ran into cwnd, the peer's window, the
	 * local queue limit; messages the send limit turned away (the core keeps them) */
	uint64_t stop_cwnd, stop_rwnd, stop_localq, stop_limit;
};

/* The association slots of a core peer: its own and, striped, its rails'. */
struct sctpe_pslot {
	struct sctpe_assoc *out, *in;
	struct sctpe_assoc *rout[SCTPT_MAX_RAILS], *rin[SCTPT_MAX_RAILS];
};

typedef void (*sctpe_tap_fn)(void *arg, struct sctpt_sel *sel, const uint8_t *pkt, size_t len);

struct sctpe_ep {
	struct sctpt_ep *ep;
	struct sctpe_wheel wheel;
	uint8_t secret[32];          /* signs state cookies */
	uint64_t rng;
	uint32_t next_id;
	struct sctpe_pslot *ps;
	int nps;
	struct sctpe_assocq all, flush, events;
	struct sctpe_rchunkq fifo;   /* complete messages for the core, in order of completion */
	struct sctpe_rchunk *rd;     /* read cursor: the chunk of the fifo's head being read */
	uint32_t rd_off;
	struct sctpt_pool rpool[SCTPE_NCLASS], opool[SCTPE_NCLASS];
	int tx_depth;
	int in_input;                /* packets of the peers are being handled */
	int defer_sacks;             /* fresh SACKs wait for the next batch (flush_all) */
	size_t localq;               /* SCTPE_LOCALQ: fixed local queue limit, 0: by rate */
	unsigned flush_gen;          /* flush_all calls */
	int crc;                     /* compute and check CRC32c */
	int debug;                   /* SCTPE_DEBUG: say why associations end */
	int place;                   /* in-order chunks go straight to the core's buffers */
	uint32_t cookie_life_ms;     /* Valid.Cookie.Life */
	uint64_t now_us;             /* of the current input or flush */
	struct sctpe_stats st;
	sctpe_tap_fn tap;            /* tests: where packets go instead of the UDP layer */
	void *tap_arg;
	uint8_t pkt[SCTPE_MAX_PACKET + 64]; /* the packet being built */
};

/* ---- sctpe_ep.c ---- */
/* The engine's share of the backend operations (sctpt_native.c adapts them). */
int sctpe_ep_open(struct sctpt_ep *ep);
void sctpe_ep_close(struct sctpt_ep *ep);
int sctpe_ep_input(struct sctpt_ep *ep);
int sctpe_ep_events(struct sctpt_ep *ep);
void sctpe_ep_tx_begin(struct sctpt_ep *ep);
void sctpe_ep_tx_end(struct sctpt_ep *ep);
int sctpe_ep_wait(struct sctpt_ep *ep, int timeout_ms);
int sctpe_ep_keep(struct sctpt_ep *ep);
void sctpe_stats_print(const struct sctpe_ep *e, FILE *f);
void sctpe_assoc_print(const struct sctpe_assoc *a, FILE *f);
/* Test and fuzz hooks: a packet handed to the engine as if it came from path `path` of the
 * peer; and where the engine's packets go instead of the UDP layer (fn NULL: the UDP layer). */
int sctpe_inject(struct sctpt_ep *ep, sctpt_peer_t peer, int path, const uint8_t *pkt,
		 size_t len);
void sctpe_set_tap(struct sctpt_ep *ep, sctpe_tap_fn fn, void *arg);

uint64_t sctpe_clock_us(void);
uint32_t sctpe_random32(struct sctpe_ep *e);
struct sctpe_assoc **sctpe_slot(struct sctpe_ep *e, struct sctpt_peer *p, int rail, int in);
/* A packet to the path sel stands for; one of a's. */
void sctpe_send(struct sctpe_ep *e, struct sctpt_sel *sel, const uint8_t *pkt, size_t len);
void sctpe_output(struct sctpe_assoc *a, const uint8_t *pkt, size_t len);
/* a has something to transmit at the end of the current batch (at once outside one). */
void sctpe_want_flush(struct sctpe_assoc *a);
void sctpe_want_event(struct sctpe_assoc *a, int ev, int err);
int sctpe_class_of(size_t len);
void *sctpe_buf_get(struct sctpt_pool *pools, size_t len, uint8_t *cls);
void sctpe_buf_put(struct sctpt_pool *pools, void *b, uint8_t cls);

/* ---- sctpe_assoc.c ---- */
struct sctpe_assoc *sctpe_assoc_new(struct sctpe_ep *e, struct sctpt_peer *p, int rail, int in);
/* Starts the handshake: INIT, T1-init. */
int sctpe_assoc_connect(struct sctpe_assoc *a);
/* A packet of this association (its tag checked against the chunks' rules here). */
void sctpe_assoc_input(struct sctpe_assoc *a, const struct sctpe_hdr *h, const uint8_t *pkt,
		       size_t len);
/* A packet for the receive port or the send port with no association: INIT, COOKIE ECHO,
 * or out of the blue (8.4). */
void sctpe_ep_input_noassoc(struct sctpe_ep *e, struct sctpt_peer *p, int rail, int in,
			    const struct sctpe_hdr *h, const uint8_t *pkt, size_t len);
/* Sends ABORT (cause, with text) and ends the association, reporting err. */
void sctpe_assoc_abort(struct sctpe_assoc *a, uint16_t cause, const char *text, int err);
/* Ends the association without a word to the peer, reporting err (0: nothing to report). */
void sctpe_assoc_end(struct sctpe_assoc *a, int err);
/* Frees an ended association whose delivered messages were all read. */
void sctpe_assoc_free(struct sctpe_assoc *a);
/* Begins a graceful shutdown (SHUTDOWN once everything sent is acknowledged). */
void sctpe_assoc_shutdown(struct sctpe_assoc *a);
/* A consecutive timeout (T3-rtx or heartbeat): path failover, or the association is lost. */
int sctpe_assoc_timeout(struct sctpe_assoc *a);
/* Sends one control chunk now, in a packet of its own. */
void sctpe_ctrl(struct sctpe_assoc *a, uint8_t type, uint8_t flags, const void *body,
		size_t len);
/* Everything sent was acknowledged: a pending shutdown may proceed. */
void sctpe_assoc_drained(struct sctpe_assoc *a);

/* ---- sctpe_stream.c: inbound ---- */
int sctpe_in_init(struct sctpe_assoc *a, uint32_t peer_itsn);
void sctpe_in_fini(struct sctpe_assoc *a);
/* A DATA or I-DATA chunk: 0, or a negative code after which the association is aborted
 * (cause in *cause). */
int sctpe_in_data(struct sctpe_assoc *a, const struct sctpe_data *d, uint16_t *cause);
/* The packet's DATA is processed: SACK now or arm the delayed SACK timer. */
void sctpe_in_packet_done(struct sctpe_assoc *a, int immediate);
/* Appends a SACK chunk (and clears the duplicates and the SACK's due state). */
int sctpe_in_sack(struct sctpe_assoc *a, struct sctpe_pb *b);
uint32_t sctpe_in_rwnd(const struct sctpe_assoc *a);
/* The delivery queue: the core reads from its head. */
int sctpe_recv(struct sctpe_ep *e, void *buf, size_t len, struct sctpt_peer **peer,
	       uint16_t *stream, int *eor);
/* Drops a's messages from the delivery queue. */
void sctpe_fifo_drop(struct sctpe_ep *e, struct sctpe_assoc *a);
void sctpe_rchunk_free(struct sctpe_ep *e, struct sctpe_rchunk *c);

/* ---- sctpe_out.c: outbound ---- */
int sctpe_out_init(struct sctpe_assoc *a);
void sctpe_out_fini(struct sctpe_assoc *a);
/* A buffer for the next message of len bytes, built in place by the core and then queued by
 * sctpe_out_queue without a copy; NULL if the send buffer is full. */
void *sctpe_out_stage(struct sctpe_assoc *a, size_t len, int *full);
/* Bytes the association holds for sending at most (see sctpe_out.c). */
size_t sctpe_out_limit(const struct sctpe_assoc *a);
/* One message: 0, -EAGAIN (the send buffer is full), < 0. */
int sctpe_out_queue(struct sctpe_assoc *a, uint16_t sid, const void *buf, size_t len);
/* A SACK: 0, or < 0 if it acknowledges what was never sent (the caller aborts). */
int sctpe_out_sack(struct sctpe_assoc *a, const struct sctpe_sack *s);
/* Transmits what the windows allow (control, retransmissions, new data). */
void sctpe_out_flush(struct sctpe_assoc *a);
/* DATA chunks sent and unacknowledged, and queued. */
static inline int sctpe_out_idle(const struct sctpe_assoc *a)
{
	return a->held_bytes == 0;
}
uint32_t sctpe_out_inflight(const struct sctpe_assoc *a);

#endif
