/* Internals of the SCTP transport core, shared by its files; not for plugins. */
#ifndef SCTPT_INT_H
#define SCTPT_INT_H

#include "sctpt.h"
#include "sctpt_order.h"
#include "sctpt_proto.h"
#include "sctpt_shm.h"

#include <netinet/in.h>
#include <pthread.h>
#include <sys/queue.h>
#include <stdatomic.h>
#include <stdint.h>

#define SCTPT_CARD_MAX_LEN SCTPT_CARD_MAX
#define SCTPT_CQE_INLINE 256 /* received messages up to this size are copied into their entry */

/* Records a message for sctpt_last_error() and returns code. */
int sctpt_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Paths. usrsctp 0.9.5 cannot connectx() AF_CONN addresses, so an association has a single
 * AF_CONN address: a selector (below). The selector picks the physical path, one (local UDP
 * socket, remote UDP address) pair: SCTP's own failure detection (ADDR_UNREACHABLE), send
 * errors and our per-path probes move it to a path that is up. The selector of the
 * association we initiated stays on its path; the mirror of the peer's association answers on
 * the path the peer's last packet came in on.
 */
enum { SCTPT_SEL_OUT = 0x4f55, SCTPT_SEL_MIRROR = 0x4d49 };

struct sctpt_peer;

struct sctpt_path {
	struct sctpt_peer *peer;
	int index;
	int local;                 /* index into ep->udp */
	struct sockaddr_in remote; /* UDP address of the peer's NIC */
	_Atomic int up;
	int reported_up;           /* what the event callback was last told */
	int primary;
	uint64_t probe_sent_ms, last_rx_ms;
	int probes_unanswered;
	_Atomic uint64_t pkts_out, bytes_out, pkts_in, bytes_in;
	_Atomic int send_errno;    /* last sendto error */
};

struct sctpt_sel {
	int kind;                  /* SCTPT_SEL_OUT or SCTPT_SEL_MIRROR: first member */
	struct sctpt_peer *peer;
	int rail;                  /* >= 0: a rail's address, pinned to path cur; -1: not */
	_Atomic int cur;           /* path in use */
	_Atomic unsigned rr;       /* spraying cursor (cmt) */
};

struct sctpt_txmsg {
	STAILQ_ENTRY(sctpt_txmsg) link;
	struct sctpt_hdr hdr;
	uint16_t stream;
	int iovcnt, iov_idx;
	size_t iov_off;            /* within iov[iov_idx] */
	struct iovec *iov;
	struct iovec iov_inline[4];
	void *cookie;
	struct sctpt_cqent *done;  /* its completion, taken when it was queued (NULL: ours) */
};

STAILQ_HEAD(sctpt_txq, sctpt_txmsg);

/* A copy of one fragment (envelope + payload) given to a rail, kept until SCTP has it
 * acknowledged, or waiting to be re-sent after its rail failed. Fixed-size (ep->buf_len of
 * data), from the endpoint's free list. */
struct sctpt_rfrag {
	STAILQ_ENTRY(sctpt_rfrag) link;
	uint16_t stream;
	size_t len;
	uint8_t data[];
};
STAILQ_HEAD(sctpt_rfragq, sctpt_rfrag);

/* A receive staging buffer (envelope + one fragment: ep->buf_len bytes), from the endpoint's
 * pool: a message read whole into it is handed on with it, not copied out. */
struct sctpt_rxbuf {
	void *pool_link; /* room for the free list's link while it is free */
	uint8_t data[];
};

/*
 * One rail of a striped peer: its own association each way, on AF_CONN addresses pinned to
 * path `index` (rail i is path i). Copies of the fragments sent on it, oldest first, are
 * released as SCTP reports fewer bytes held: rail associations send first come first
 * served, so what SCTP still holds is always the newest of them.
 */
struct sctpt_rail_st {
	struct sctpt_sel out, mirror;
	int index;
	uint32_t assoc_out, assoc_in;
	int live;                  /* assoc_out connecting or up, not failed */
	int ever_up;
	uint64_t down_ms;          /* when it last failed (reconnects wait a little) */
	struct sctpt_rfragq copies;
	uint64_t held;             /* bytes of the copies */
	uint64_t released;         /* bytes released since the last rate sample */
	uint64_t rate;             /* bytes/s, 0: unknown */
	uint64_t rate_ms, info_ms;
	uint32_t srtt_us, cwnd;
	uint64_t frags_out, frag_bytes_out;
	/* stall detection: what SCTP held at the last look, when it last moved data, since
	 * when it has had copies to move, and whether it is stalled (copies handed to the
	 * other rails, no new fragments until SCTP moves data again) */
	uint64_t sctp_held, moved_ms, busy_ms;
	int stalled;
};

/* Ids of unordered messages from a striped peer that have been delivered: all below low,
 * and the sorted ids[] above it. */
struct sctpt_seen {
	uint32_t low;
	uint32_t *ids;
	uint32_t n, cap;
};

/* A message being reassembled from fragments (one per stream at a time), or held early. */
struct sctpt_rxmsg {
	struct sctpt_order_item order; /* first: the order table links through it */
	struct sctpt_hdr hdr;          /* of the first fragment */
	uint16_t stream;
	int handler;                   /* whose context it is */
	uint8_t *buf;
	uint8_t *buf2;                 /* placed by its handler in two pieces: bytes from len0 on */
	uint64_t len0;
	size_t got;
	void *owned;                   /* buf's allocation, ours to free (or NULL) */
	struct sctpt_rxbuf *rxb;       /* ... or the staging buffer it was read into */
	void *cookie;                  /* from recv_buf or place: buf is the handler's */
	int placed;                    /* by its handler's place hook */
	/* striped peers: messages being reassembled, and the byte ranges that arrived (sorted,
	 * adjacent ones merged; an overlap is refused, so the message is whole when the
	 * ranges add up to its length) */
	LIST_ENTRY(sctpt_rxmsg) rlink;
	struct sctpt_span {
		uint64_t lo, hi;
	} *spans;
	uint32_t nspans, cap_spans;
};
LIST_HEAD(sctpt_rxlist, sctpt_rxmsg);

struct sctpt_peer {
	struct sctpt_ep *ep;
	sctpt_peer_t id;
	int anonymous;             /* known only from its packets, no card yet */
	char card[SCTPT_CARD_MAX];
	struct sctpt_card_info info;
	int state;                 /* enum sctpt_peer_state */
	int error;                 /* why it failed */
	int registered;            /* AF_CONN addresses registered with usrsctp */
	uint32_t assoc_out;        /* sctp_assoc_t of the association we initiated */
	uint32_t assoc_in;         /* ... and of the one the peer initiated (0: none) */
	int npaths;
	struct sctpt_path *paths[SCTPT_MAX_ADDRS];
	struct sctpt_sel sel_out;   /* AF_CONN address of our association */
	struct sctpt_sel mirror;    /* AF_CONN address of the peer's association */
	int primary_reported;
	struct sctpt_txq *txq;     /* per stream */
	int tx_queued;
	uint16_t rr_next;          /* round-robin cursor over streams */
	struct sctpt_rxmsg **rx;   /* per stream: message being reassembled */
	struct sctpt_order order;
	uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv, held_for_order, sctp_msgs_in;
	uint64_t *stream_msgs_sent;
	/* striping (nrails > 0): rails, fragments to re-send, reassembly, duplicates */
	int nrails;
	struct sctpt_rail_st *rails;
	struct sctpt_rfragq resend;
	uint32_t unord_id;          /* last id given to an unordered message */
	struct sctpt_rxlist rxlist;
	struct sctpt_seen seen;
	uint64_t all_down_ms;       /* since when no rail has been live (0: one is) */
	int close_sent;             /* our CLOSE is queued: the peer's ABORT ends it */
	uint64_t rail_failures, rail_reconnects, frags_resent, dup_frags, rail_stalls;
	uint64_t unclaimed;
	struct sctpt_shm_peer *shm; /* a same-host peer (sctpt_shm.c), else NULL */
};

struct sctpt_udp {
	int fd;
	struct sockaddr_in addr;
	uint32_t mask;             /* network byte order */
	int mtu;
	_Atomic int gso;           /* the kernel takes UDP_SEGMENT sends on this socket */
	/* sctpt_udp_backlogged: what the kernel still held of our sends (SIOCOUTQ) when last
	 * asked, bytes_out then, and when (us) */
	_Atomic uint64_t outq, outq_sent, outq_us, bytes_out;
};

#define SCTPT_TX_SEGS 64           /* datagrams per batched send: Linux's UDP_MAX_SEGMENTS */

/* Partial read state of the receive socket: usrsctp hands a message in pieces. */
struct sctpt_rxcur {
	int active;
	struct sctpt_peer *peer;
	uint16_t stream;
	struct sctpt_hdr hdr;
	uint8_t *dst;              /* where the next bytes go */
	size_t cap;                /* room left at dst */
	uint8_t *dst2;             /* placed by its handler: the second piece, once dst is full */
	size_t cap2;
	size_t got;                /* payload bytes of this SCTP message so far */
	int in_stage;              /* single message being read whole into ep->stage */
	int discard;               /* a bad message being drained */
	struct sctpt_rxmsg *frag;  /* reassembly target */
	int whole;                 /* placed: frag is a whole message in its own staging buffer */
	LIST_ENTRY(sctpt_rxcur) plink; /* placed: in ep->placing while the engine holds it */
};
LIST_HEAD(sctpt_rxcurs, sctpt_rxcur);

/* A completion entry: what the user sees (c) and what the core frees on release. */
struct sctpt_cqent {
	STAILQ_ENTRY(sctpt_cqent) link;
	struct sctpt_cqe c;
	int handler;
	struct sctpt_rxbuf *rxb;   /* data lives in this staging buffer, or */
	void *owned;               /* ... in this allocation, or */
	struct sctpt_loan *loan;   /* ... in a same-host peer's ring, or inline below */
	int unseen;                /* a message its handler has not seen (counted in its slot) */
	char what[SCTPT_CARD_MAX + 96];
	uint8_t inline_data[SCTPT_CQE_INLINE];
};
STAILQ_HEAD(sctpt_cqq, sctpt_cqent);

#define SCTPT_MAX_HANDLERS 16 /* [0] is cfg.handler */
#define SCTPT_DISPATCH_BATCH 32 /* entries handed out per lock hold */
struct sctpt_hslot {
	int used;
	struct sctpt_handler h;
	struct sctpt_cqq polled;   /* entries waiting for sctpt_cq_read (no complete function) */
	int unseen;                /* messages queued for it that it did not place itself */
};

/* A free list of objects of one size: what is put back is kept (up to keep) for the next
 * get; a free object's first bytes link it. */
struct sctpt_pool {
	void *free;
	size_t size;
	int n, keep;
};
void sctpt_pool_init(struct sctpt_pool *pool, size_t size, int keep);
void *sctpt_pool_get(struct sctpt_pool *pool);
void sctpt_pool_put(struct sctpt_pool *pool, void *obj);
void sctpt_pool_fini(struct sctpt_pool *pool);

struct sctpt_backend;

struct sctpt_ep {
	pthread_mutex_t lock;
	struct sctpt_config cfg;
	const struct sctpt_backend *be;
	int nudp;
	struct sctpt_udp udp[SCTPT_MAX_ADDRS];
	uint16_t udp_port;
	uint16_t sport, rport;     /* SCTP ports of our send and receive sockets */
	struct socket *s_send, *s_recv;
	uint32_t mtu;
	struct sctpt_peer **peers;
	int npeers, cap_peers;
	int tx_peers;              /* peers with queued sends */
	size_t buf_len;            /* envelope + one fragment */
	size_t tx_frag;            /* payload of the fragments of messages above cfg.frag_size:
				    * that, or less, to fill whole packets */
	struct sctpt_rxbuf *stage; /* receive staging buffer */
	uint8_t *txbuf;            /* envelope + fragment, contiguous for the engine's send */
	uint8_t *rx_dgrams;        /* the UDP layer's receive batch */
	struct sctpt_rxcur cur;
	struct sctpt_rxcurs placing; /* cursors of messages the engine places as they arrive */
	char card[SCTPT_CARD_MAX];
	int rail_peers;            /* peers with rails */
	struct sctpt_hslot handlers[SCTPT_MAX_HANDLERS];
	int handlers_end;          /* 1 + the highest id of a handler added (1: cfg.handler only) */
	uint32_t handlers_lo;      /* the lowest context an added handler claims (none: above
				    * every context), so that most messages skip the search */
	struct sctpt_cqq done;     /* entries for handlers with a complete function, in order */
	int ndone, npolled;
	/* one thread hands out completions at a time: it sets dispatching under the lock and
	 * clears it when done; the entries it handed out last (spent) are released by the next */
	_Atomic int dispatching;
	int nspent;
	struct sctpt_cqent *spent[SCTPT_DISPATCH_BATCH];
	/* free lists: no allocation per message, per fragment or per completion */
	struct sctpt_pool tx_pool, buf_pool, frag_pool, cq_pool;
	struct sctpt_msgbuf *msgbufs; /* sctpt_msgbuf_get's, kept: how many, how many bytes */
	int nmsgbufs;
	size_t msgbuf_bytes;
	/* same-host peers (NULL: none); the engine's wait also wakes when wait_fd (>= 0) is
	 * readable; cur_parked is the engine's receive state while another source uses cur */
	struct sctpt_shm *shm;
	int wait_fd;
	struct sctpt_rxcur *cur_parked;
	struct sctpt_loan *lent;   /* sctpt_rx_lent: the message being received lies in a ring */
	void *engine;              /* the engine's own state (NULL for usrsctp) */
	/* sctpt_keeper.c: a thread that answers the peers while the application is away */
	struct sctpt_keeper *keeper;
	unsigned app_calls;        /* progress calls, to tell that the application is away */
	int app_in, keeper_in;     /* cfg.single_thread: who is in the endpoint */
	int app_fence;             /* no membarrier: app_in is stored with a full barrier */
};

/* ---- sctpt_keeper.c ---- */
int sctpt_keeper_start(struct sctpt_ep *ep); /* unless cfg.keeper_ms is 0 or be->keep NULL */
void sctpt_keeper_stop(struct sctpt_ep *ep);
void sctpt_keeper_wait(struct sctpt_ep *ep); /* sctpt_lock found the keeper in */

/*
 * The core's lock, unless the caller promised one thread at a time (cfg.single_thread):
 * then only the keeper thread is kept out, by a flag the keeper looks at after a barrier
 * of its own (sctpt_keeper.c).
 */
static inline void sctpt_lock(struct sctpt_ep *ep)
{
	if (!ep->cfg.single_thread) {
		pthread_mutex_lock(&ep->lock);
		return;
	}
	if (!ep->keeper)
		return;
	if (ep->app_fence) {
		__atomic_store_n(&ep->app_in, 1, __ATOMIC_SEQ_CST);
	} else {
		__atomic_store_n(&ep->app_in, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	if (__atomic_load_n(&ep->keeper_in, __ATOMIC_ACQUIRE))
		sctpt_keeper_wait(ep);
}

static inline void sctpt_unlock(struct sctpt_ep *ep)
{
	if (!ep->cfg.single_thread)
		pthread_mutex_unlock(&ep->lock);
	else if (ep->keeper)
		__atomic_store_n(&ep->app_in, 0, __ATOMIC_RELEASE);
}

/* ---- sctpt_cq.c: completions and handlers (all under ep->lock but dispatch) ---- */
/* The handler of a context (0: cfg.handler); in line for contexts below every added
 * handler's range (the default handler's: BTL tags, MPI contexts). */
int sctpt_handler_find(struct sctpt_ep *ep, uint32_t context);
static inline int sctpt_handler_of(struct sctpt_ep *ep, uint32_t context)
{
	return context < ep->handlers_lo ? 0 : sctpt_handler_find(ep, context);
}
/* A RECV entry for a whole message of at most SCTPT_CQE_INLINE bytes, copied into it: what
 * sctpt_cq_recv does for such a message, with nothing else to decide. */
void sctpt_cq_recv_small(struct sctpt_ep *ep, int hid, struct sctpt_peer *p,
			 const struct sctpt_hdr *h, uint16_t stream, const uint8_t *data, size_t len);
/* Queues a RECV entry for handler hid; the data moves with rxb, owned or loan (one of them,
 * or none: copied, or the handler's own recv_buf buffer). placed: the handler placed the
 * message itself (its place hook), so it has seen it already. */
void sctpt_cq_recv(struct sctpt_ep *ep, int hid, struct sctpt_peer *p, const struct sctpt_hdr *h,
		   uint16_t stream, const uint8_t *data, size_t len, void *cookie,
		   struct sctpt_rxbuf *rxb, void *owned, struct sctpt_loan *loan, int status,
		   int placed);
/* A send's completion entry is taken when the send is queued, so that it cannot fail to
 * complete later for want of memory; sctpt_cq_send queues it, sctpt_cq_drop returns it. */
struct sctpt_cqent *sctpt_cq_reserve(struct sctpt_ep *ep);
void sctpt_cq_send(struct sctpt_ep *ep, struct sctpt_cqent *e, uint32_t context, void *cookie,
		   int status);
void sctpt_cq_drop(struct sctpt_ep *ep, struct sctpt_cqent *e);
void sctpt_cq_event(struct sctpt_ep *ep, enum sctpt_event_type t, struct sctpt_peer *p, int err,
		    int path, const char *what);
/* Hands queued entries to their handlers; called without the lock. */
int sctpt_cq_dispatch(struct sctpt_ep *ep);
/* The same in two halves, so that a progress takes its batch in the lock hold it already has:
 * take (lock held) makes this thread the dispatcher if none is and there is anything, and
 * gives it the first batch (how many; 0: not the dispatcher); run (no lock) hands that batch
 * and the rest out and ends dispatching. */
struct sctpt_cqbatch {
	int n;
	struct sctpt_cqent *e[SCTPT_DISPATCH_BATCH];
	void (*complete[SCTPT_DISPATCH_BATCH])(void *arg, const struct sctpt_cqe *c);
	void *arg[SCTPT_DISPATCH_BATCH];
};
int sctpt_cq_take(struct sctpt_ep *ep, struct sctpt_cqbatch *b);
int sctpt_cq_run(struct sctpt_ep *ep, struct sctpt_cqbatch *b);
void sctpt_cq_fini(struct sctpt_ep *ep);
/* Express dispatch of one RECV completion without an entry (lock held): if handler hid has a
 * complete function, nothing is queued for the handlers and nobody dispatches, this thread
 * becomes the dispatcher: 1 and what to call, after unlocking, with a completion of the
 * caller's; then sctpt_cq_express_end (no lock). 0: queue it as usual. */
typedef void (*sctpt_complete_fn)(void *arg, const struct sctpt_cqe *c);
int sctpt_cq_express(struct sctpt_ep *ep, int hid, sctpt_complete_fn *fn, void **arg);
void sctpt_cq_express_end(struct sctpt_ep *ep);

/* ---- sctpt_ep.c: free lists (under the lock) ---- */
struct sctpt_txmsg *sctpt_txmsg_get(struct sctpt_ep *ep);
void sctpt_txmsg_put(struct sctpt_ep *ep, struct sctpt_txmsg *m);
struct sctpt_rxbuf *sctpt_rxbuf_get(struct sctpt_ep *ep);
void sctpt_rxbuf_put(struct sctpt_ep *ep, struct sctpt_rxbuf *b);
/* A buffer of len bytes for a message kept outside the staging buffers (reassembled from
 * fragments, or copied), and its return; NULL out of memory. */
void *sctpt_msgbuf_get(struct sctpt_ep *ep, size_t len);
void sctpt_msgbuf_put(struct sctpt_ep *ep, void *buf);
struct sctpt_rfrag *sctpt_rfrag_get(struct sctpt_ep *ep);
void sctpt_rfrags_put(struct sctpt_ep *ep, struct sctpt_rfragq *q);

/* ---- sctpt_peer.c ---- */
static inline struct sctpt_peer *sctpt_peer_get(struct sctpt_ep *ep, sctpt_peer_t id)
{
	return id >= 0 && id < ep->npeers ? ep->peers[id] : NULL;
}
void sctpt_peer_fail(struct sctpt_ep *ep, struct sctpt_peer *p, int err);
void sctpt_peer_closed(struct sctpt_ep *ep, struct sctpt_peer *p);
void sctpt_peer_free(struct sctpt_ep *ep, struct sctpt_peer *p);
void sctpt_report_paths(struct sctpt_ep *ep);

/* ---- sctpt_send.c ---- */
/* Fragments of stream heads to SCTP until its buffer is full: how many, or < 0 (failed). */
int sctpt_push_peer(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_txmsg *inline_msg,
		    int *inline_done);
/* A send that left its queue (handed to the shared-memory path) is done: its completion. */
void sctpt_tx_finish(struct sctpt_ep *ep, struct sctpt_txmsg *m, int status);
/* Fails every queued send of p with status: one completion each. */
void sctpt_tx_fail_all(struct sctpt_ep *ep, struct sctpt_peer *p, int status);
void sctpt_send_close(struct sctpt_ep *ep);

/* ---- sctpt_recv.c ---- */
int sctpt_receive(struct sctpt_ep *ep);
/* Messages from another source than the engine (the shared-memory path), through ep->cur as
 * the engine's are: the envelope and n - 32 payload bytes are in the staging buffer; then
 * what follows goes to cur.dst (account it), or nowhere (to_scratch); end when it is all. */
void sctpt_rx_begin(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream, size_t n);
void sctpt_rx_account(struct sctpt_ep *ep, int to_scratch, size_t n);
void sctpt_rx_end(struct sctpt_ep *ep);
/*
 * Placement: an engine that reassembles in order may hand the SCTP message it is receiving on
 * one stream to the core chunk by chunk as the chunks arrive, so that the bytes are copied
 * once, from the packet to the message's buffer. c is the engine's (one per stream it
 * places on); data/n the message's first bytes, the envelope whole among them. begin: 1 if
 * the core took the message (the rest through place_more, then place_end), 0 if the engine
 * must queue it and let the core read it as usual (nothing changed). cancel: the engine lets
 * go of c before its end (the association is gone).
 */
int sctpt_rx_place_begin(struct sctpt_ep *ep, struct sctpt_rxcur *c, struct sctpt_peer *p,
			 uint16_t stream, const uint8_t *data, size_t n);
void sctpt_rx_place_more(struct sctpt_ep *ep, struct sctpt_rxcur *c, const uint8_t *data,
			 size_t n);
void sctpt_rx_place_end(struct sctpt_ep *ep, struct sctpt_rxcur *c);
void sctpt_rx_place_cancel(struct sctpt_ep *ep, struct sctpt_rxcur *c);
/* A whole message h (its len bytes at data) that stays where it lies, in a same-host peer's
 * ring, until its entry is released (sctpt_shm_loan_end): 1 if taken (delivered, held for
 * order as a copy, or dropped; loan is ended here unless an entry has it), 0 if it is not
 * one to lend (the caller reads it through rx_begin as any other). */
int sctpt_rx_lent(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream,
		  const struct sctpt_hdr *h, const uint8_t *data, size_t len,
		  struct sctpt_loan *loan);
/* A whole message of at most SCTPT_CQE_INLINE bytes from a same-host peer's ring: its
 * envelope at env, its len bytes right after it. 1 if taken (delivered, held for order or
 * dropped: copied either way, the ring's bytes are free again), 0 if not one of those (the
 * caller reads it through rx_begin, which reports what is wrong with it). */
int sctpt_rx_small(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream,
		   const uint8_t *env, size_t len);
/* The same message for express dispatch (sctpt_shm_express): 1 if it is handed out now, its
 * delivery counted and its order advanced, *c the completion (its data copied to buf) for
 * *fn(*arg, c) once the lock is released, then sctpt_cq_express_end; 0 if it goes the usual
 * way (nothing changed). */
int sctpt_rx_express(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream,
		     const uint8_t *env, size_t len, uint8_t *buf, struct sctpt_cqe *c,
		     sctpt_complete_fn *fn, void **arg);
/* Gives back what p has half-received (recv_buf buffers come back with status) and what is
 * held for order. */
void sctpt_rx_abandon(struct sctpt_ep *ep, struct sctpt_peer *p, int status);

/* ---- sctpt_rail.c: striping ---- */
int sctpt_rail_place(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rfrag *f);
/* Copies of failed or stalled rails onto the others: how many, until one cannot be placed. */
int sctpt_rail_resend(struct sctpt_ep *ep, struct sctpt_peer *p);
void sctpt_rails_tend(struct sctpt_ep *ep, struct sctpt_peer *p);
/* An association of a rail came up (t ASSOC_UP) or failed (ASSOC_DOWN); in: the peer's. */
void sctpt_on_rail(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r, int in,
		   enum sctpt_event_type t);
int sctpt_rail_dup(struct sctpt_peer *p, const struct sctpt_hdr *h);
int sctpt_seen_add(struct sctpt_seen *s, uint32_t id);

/*
 * The SCTP engine beneath the core, behind an ops table: usrsctp today; a second engine or a
 * fake one for unit tests sits beside it. Everything runs under ep->lock. Peers' paths and
 * rails are the core's; the engine owns associations and reports what happens to them
 * through sctpt_on_* (below).
 */
struct sctpt_backend {
	const char *name;
	/* The largest message send takes, envelope included (0: no bound of its own). */
	size_t max_msg;
	/* What a full packet carries besides message bytes (0: not known): the core cuts
	 * fragments that fill whole packets, rather than a full one and a sliver. */
	uint32_t pkt_overhead;
	/* Sockets and engine; sets ep->udp_port and ep->rport (the card's ports). */
	int (*open)(struct sctpt_ep *ep);
	void (*close)(struct sctpt_ep *ep);
	/* Starts the peer's outgoing association (p->assoc_out), or rail r's (r->assoc_out;
	 * r->live once under way). */
	int (*connect)(struct sctpt_ep *ep, struct sctpt_peer *p);
	int (*rail_connect)(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r);
	void (*forget)(struct sctpt_ep *ep, struct sctpt_peer *p);
	/* Optional: where the core builds the next message (len bytes) for send on p's
	 * association: an engine's buffer that send then takes as it is, without a copy; NULL
	 * (or no such op): ep->txbuf, copied by send; *full set when send would say -EAGAIN
	 * (the message is not built, to be built again later). */
	void *(*send_buf)(struct sctpt_ep *ep, struct sctpt_peer *p, size_t len, int *full);
	/* One SCTP message on p's association (r NULL) or rail r's: 0, -EAGAIN (full), < 0. */
	int (*send)(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r,
		    uint16_t stream, const void *buf, size_t len);
	/* Brackets (nesting, per thread) around bursts of sends: packets leave in batches. */
	void (*tx_begin)(struct sctpt_ep *ep);
	void (*tx_end)(struct sctpt_ep *ep);
	/* Packets in and timers; returns how many things it handled. */
	int (*input)(struct sctpt_ep *ep);
	/* Association notifications, once what arrived with them is read (a peer's CLOSE
	 * before the ABORT that ends its association); returns how many. */
	int (*events)(struct sctpt_ep *ep);
	/* Reads received messages: bytes, -EAGAIN, or < 0; *eor when the message ended. */
	int (*recv)(struct sctpt_ep *ep, void *buf, size_t len, struct sctpt_peer **peer,
		    uint16_t *stream, int *eor);
	/* Bytes SCTP holds for rail r (queued or unacknowledged), < 0 if it cannot tell; and
	 * its path's srtt and cwnd into r. */
	int64_t (*rail_held)(struct sctpt_ep *ep, struct sctpt_rail_st *r);
	void (*rail_info)(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r);
	/* Data chunks SCTP still holds for peers that may take them. */
	int (*unacked)(struct sctpt_ep *ep);
	int (*peer_stats)(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_peer_stats *st);
	/* Sleeps until input may be there (or ep->wait_fd, if >= 0, is readable), at most
	 * timeout_ms. */
	int (*wait)(struct sctpt_ep *ep, int timeout_ms);
	/* Optional, for an engine that moves only inside progress: packets in, acknowledged and
	 * answered, and timers, for an application that is away (the keeper thread): it hands
	 * nothing to handlers nor asks them for buffers. */
	int (*keep)(struct sctpt_ep *ep);
};

/* ---- sctpt_udp.c: the UDP datagram layer beneath the engines ---- */
int sctpt_udp_open(struct sctpt_ep *ep);   /* binds ep->udp[], sets ep->udp_port */
void sctpt_udp_close(struct sctpt_ep *ep);
/* Brackets (nesting, per thread) inside which packets are batched per (selector, path) and
 * sent with UDP GSO at the outermost end; flush sends what is batched now. */
void sctpt_udp_tx_begin(void);
void sctpt_udp_tx_end(void);
void sctpt_udp_tx_flush(void);
/* One packet of the engine on the path selector sel stands for. */
void sctpt_udp_output(struct sctpt_sel *sel, const void *buf, size_t len);
/* Room in the current batch for the next packet of sel's, of at most max bytes, to build it
 * in place (no copy); then sctpt_udp_commit its length, before any other output of this
 * thread. NULL: no batch, or a packet this large goes by itself: sctpt_udp_output it. */
void *sctpt_udp_reserve(struct sctpt_sel *sel, size_t max);
void sctpt_udp_commit(struct sctpt_sel *sel, size_t len);
/* Commits a packet of head bytes built where sctpt_udp_reserve said, then plen bytes at
 * payload, left where they are until the batch goes (no copy), then zeros zero bytes. */
void sctpt_udp_commitv(struct sctpt_sel *sel, size_t head, const void *payload, size_t plen,
		       size_t zeros);
/* Whether the kernel holds more than limit bytes (in its buffer terms) of the sends of sel's
 * socket not yet gone (in a qdisc or the device): asked only when what went since the last
 * answer could have taken it past limit, and then at most every few microseconds (now_us: a
 * CLOCK_MONOTONIC reading the caller has). */
int sctpt_udp_backlogged(struct sctpt_sel *sel, size_t limit, uint64_t now_us);
/* Sends now the batches that point at payloads outside them: before their memory is reused. */
void sctpt_udp_tx_unref(void);
/* A packet gathered from pieces (a large payload left where it is), sent by itself after
 * what is batched for its path. */
void sctpt_udp_outputv(struct sctpt_sel *sel, const struct iovec *iov, int n);
/* Reads datagrams (and probes the paths): probes are answered here, SCTP packets go to
 * deliver with their peer and path. Returns the datagrams handled. */
typedef void (*sctpt_udp_deliver_fn)(struct sctpt_ep *ep, struct sctpt_peer *p, int path,
				     const uint8_t *pkt, size_t len);
int sctpt_udp_input(struct sctpt_ep *ep, sctpt_udp_deliver_fn deliver);
int sctpt_udp_wait(struct sctpt_ep *ep, int timeout_ms);
/* The next path of p after from that is up, else simply the next one. */
int sctpt_path_next(struct sctpt_peer *p, int from);

extern const struct sctpt_backend sctpt_backend_usrsctp;
extern const struct sctpt_backend sctpt_backend_native; /* sctpt_native.c */
/* Makes a backend selectable by name through cfg.backend (tests register their fake one). */
int sctpt_backend_register(const struct sctpt_backend *be);

uint64_t sctpt_now_ms(void);

/* Called by the socket layer. */
struct sctpt_peer *sctpt_peer_by_udp(struct sctpt_ep *ep, const struct sockaddr_in *from,
				     int *path);
void sctpt_on_assoc(struct sctpt_ep *ep, struct sctpt_peer *p, enum sctpt_event_type t, int err);
void sctpt_on_path(struct sctpt_ep *ep, struct sctpt_path *path, enum sctpt_event_type t);
void sctpt_on_send_failed(struct sctpt_ep *ep, struct sctpt_peer *p, int err);
/* A peer known only from its packets (cfg.accept_unknown), by the card they imply. */
struct sctpt_peer *sctpt_peer_adopt(struct sctpt_ep *ep, const char *card);

/* Test and fuzz hooks: an endpoint without sockets (it can only receive what is injected),
 * and one received SCTP message handed to the receive path as if read from the socket. */
int sctpt_open_nosock(const struct sctpt_config *cfg, struct sctpt_ep **ep);
int sctpt_rx_inject(struct sctpt_ep *ep, sctpt_peer_t peer, uint16_t stream, const uint8_t *buf,
		    size_t len);

/* Addresses of this host: from cfg.addrs, the config file, or the interfaces. */
int sctpt_local_addrs(const struct sctpt_config *cfg, struct sctpt_udp *out, int max);
int sctpt_config_file_addrs(const char *file, const char *host, uint32_t *addrs, int max);

#endif
