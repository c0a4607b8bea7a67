/*
 * sctpt: the SCTP transport core every plugin of this project stands on.
 *
 * One endpoint (struct sctpt_ep) per process and interface set. Peers are named by a printable
 * business card (sctpt_card) that the MPI layers exchange through their own modex/PMI.
 * Messages carry a (context, tag) envelope; they are mapped to SCTP streams by (context, tag) so
 * unrelated traffic never waits behind a large message, and are released in send order per
 * (peer, context) -- MPI_ANY_TAG/MPI_ANY_SOURCE ordering holds -- unless sent with
 * SCTPT_SEND_UNORDERED (for layers such as Open MPI's ob1 that reorder by themselves).
 *
 * Completions. Everything the core has for its user -- a received message, a finished send, a
 * receive buffer handed back, an event -- is a completion entry (struct sctpt_cqe), delivered
 * exactly once to the handler that owns the message's context: layers share one endpoint by
 * registering handlers for disjoint context ranges (sctpt_handler_add); cfg.handler takes the
 * contexts nobody claimed. A handler with a complete() function is called from sctpt_progress
 * and sctpt_wait with no core lock held (it may send, add peers, even progress: a nested
 * progress does not dispatch), one entry at a time and in order, by one thread at a time per
 * endpoint. A handler without one has its entries polled with sctpt_cq_read, as fi_cq_read.
 *
 * The engine beneath (usrsctp, with AF_CONN over our own UDP sockets) is driven only from the
 * caller's progress loop: no hidden threads of ours.
 *
 * Threading: every call may be made from any thread (MPI_THREAD_MULTIPLE). Only recv_buf,
 * stream_map and rails run with the core's lock held: they must not call the core.
 *
 * Errors are negative errno values; sctpt_last_error() gives a message naming the peer.
 */
#ifndef SCTPT_H
#define SCTPT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sctpt_ep;
typedef int32_t sctpt_peer_t; /* index into the endpoint's peer table; < 0 is an error */

#define SCTPT_CARD_MAX 512    /* a business card fits in this many bytes, NUL included */
#define SCTPT_MAX_ADDRS 8     /* local or remote addresses (NICs) per endpoint */
#define SCTPT_MAX_STREAMS 256
#define SCTPT_MIN_FRAG 512        /* cfg.frag_size bounds, the envelope included */
#define SCTPT_MAX_FRAG (1u << 20)
#define SCTPT_MAX_RAILS SCTPT_MAX_ADDRS /* striped rails per peer */
#define SCTPT_PLACE_HEAD 64       /* first bytes a handler's place hook sees at least */

enum sctpt_event_type {
	SCTPT_EV_ASSOC_UP = 1,  /* an association with the peer is established */
	SCTPT_EV_ASSOC_DOWN,    /* the peer is lost: pending sends fail, error says why */
	SCTPT_EV_ASSOC_RESTART, /* the peer restarted (new process on the same card) */
	SCTPT_EV_PATH_UP,       /* a (local, remote) address pair became reachable */
	SCTPT_EV_PATH_DOWN,     /* ... unreachable; traffic moves to the other paths */
	SCTPT_EV_PATH_PRIMARY,  /* SCTP chose this path as the primary one */
	SCTPT_EV_PEER_CLOSED,   /* the peer closed its endpoint in order (sctpt_close): all it
				 * sent has arrived; sends to it now fail with -EPIPE */
};

struct sctpt_event {
	enum sctpt_event_type type;
	sctpt_peer_t peer;
	int error;        /* negative errno for ASSOC_DOWN, else 0 */
	int path;         /* path index for PATH_* events, else -1 */
	const char *what; /* printable description: peer card, path addresses */
};

/* One rail of a striped peer: this host's NIC and the peer's NIC it talks to (IPv4, network
 * byte order, as in struct in_addr). */
struct sctpt_rail {
	uint32_t local, remote;
};

/* What a completion entry reports. */
enum sctpt_cqe_kind {
	SCTPT_CQE_RECV = 1, /* a message: status 0, data/len; or status < 0: the recv_buf
			     * buffer in cookie comes back unfilled (its message was abandoned:
			     * peer lost, protocol error, endpoint closed) */
	SCTPT_CQE_SEND,     /* a send that returned 0 (queued) finished: status 0, or -EPIPE (peer
			     * lost or closed), -ECANCELED (endpoint closed) */
	SCTPT_CQE_EVENT,    /* ev; every handler that asked for events gets each one */
};

struct sctpt_cqe {
	enum sctpt_cqe_kind kind;
	int status;
	sctpt_peer_t peer;
	uint32_t context;
	int32_t tag;
	uint16_t stream;
	const void *data;   /* RECV: the message; valid until the entry is released */
	size_t len;
	void *cookie;       /* SEND: sctpt_send's cookie; RECV: what recv_buf or place gave, or
			     * NULL */
	struct sctpt_event ev; /* EVENT (ev.what valid until the entry is released) */
	void *entry_;       /* the core's */
};

/*
 * A layer's share of an endpoint: contexts lo..hi (inclusive), disjoint from every other
 * handler's. All functions optional.
 */
struct sctpt_handler {
	uint32_t lo, hi;
	/* Each completion for these contexts, outside the core's lock; the entry is released
	 * when it returns (copy what must outlive it). NULL: sctpt_cq_read polls them. */
	void (*complete)(void *arg, const struct sctpt_cqe *c);
	/* Where to reassemble a message of len bytes that arrives in fragments; return a buffer
	 * of at least len bytes (and a cookie that comes back in the RECV entry), or NULL to let
	 * the core allocate. Runs with the core's lock held: allocate, nothing more. */
	void *(*recv_buf)(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
			  void **cookie);
	/*
	 * Direct placement: where a message (larger than the few hundred bytes the core copies
	 * into an entry) goes, chosen from its first bytes -- a layer's own header, which names
	 * the posted receive it matches. Called as the message begins to arrive over SCTP from
	 * a non-striped peer, when every earlier message of its (peer, context) has been handed
	 * to this handler (read with sctpt_cq_read, passed to complete, or placed), so that the
	 * layer may match it there and then; head is its first head_len bytes (head_len >=
	 * min(len, SCTPT_PLACE_HEAD); less than len when the rest is on its way). Fill iov[0],
	 * iov[1] (a header of the layer's own, then the user's buffer) with room for exactly
	 * len bytes and return how many pieces (1 or 2), and a cookie; or 0: the core keeps
	 * the message as usual. The RECV entry then carries the cookie and data =
	 * iov[0].iov_base; if the message is abandoned, the entry has status < 0 and the
	 * pieces may hold part of it. Runs with the core's lock held, as recv_buf.
	 */
	int (*place)(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		     const void *head, size_t head_len, struct iovec iov[2], void **cookie);
	/* 1: place needs no earlier message handed over first (its messages name their own
	 * destination, as RDMA segments do): the hook is asked even while some are queued for
	 * this handler or being passed to complete. */
	int place_anytime;
	int events;         /* 1: this handler also gets the endpoint's events */
	void *arg;
};

/* Endpoint-wide hooks; they run with the core's lock held and must not call the core. */
struct sctpt_ops {
	/* Replaces the (context, tag) -> stream mapping; must return 1..nstreams-1 (0 is control). */
	uint16_t (*stream_map)(void *arg, uint32_t context, int32_t tag, uint16_t nstreams);
	/*
	 * Striping: called once by sctpt_peer_add with the peer's card and NIC addresses and
	 * this endpoint's own; fills out[0..max) with the rails to this peer, best first, and
	 * returns how many (0: the peer is not striped and gets the one multihomed association).
	 * Each rail is its own association pinned to its (local NIC, remote NIC) pair; the core
	 * stripes over them (see "Striping" below). Both ends must stripe to each other. For a
	 * Flat Neighborhood Network, routing/fnn's fnn_stripe_addrs fills it in one call
	 * (fnn_stripe_pairs by addresses). The local addresses must be among the endpoint's own.
	 */
	int (*rails)(void *arg, const char *card, const uint32_t *peer_addrs, int npeer,
		     const uint32_t *my_addrs, int nmine, struct sctpt_rail *out, int max);
	void *arg;
};

struct sctpt_config {
	const char *addrs;       /* comma-separated local IPv4 addresses to bind; NULL: see
				  * config_file, else every up non-loopback IPv4 interface
				  * address, else 127.0.0.1 */
	const char *config_file; /* thesis-style multihoming file: "host addr addr ..." per line;
				  * the line for this host (config_host or gethostname) is bound */
	const char *config_host;
	uint16_t udp_port;       /* local UDP encapsulation port; 0: pick a free one */
	uint16_t udp_port_min;   /* with udp_port 0: pick within [min, max] (0, 0: any) */
	uint16_t udp_port_max;
	uint16_t streams;        /* SCTP streams per association, stream 0 for control (16) */
	size_t frag_size;        /* messages above this travel as fragments (64 KiB) */
	uint64_t max_msg_size;   /* larger incoming messages are a protocol error (4 GiB): a
				  * message's buffer is allocated when its first fragment arrives */
	uint32_t path_mtu;       /* 0: from the interface MTU (loopback: 64000) */
	int cmt;                 /* usrsctp concurrent multipath transfer (off); with usrsctp,
				  * cmt, crc32c and streams are per process: an endpoint that
				  * asks for other values than one already open is refused */
	int crc32c;              /* compute/verify SCTP CRC32c; off: the UDP checksum covers the
				  * packet (all peers must agree) */
	int rto_min_ms, rto_max_ms, rto_initial_ms; /* retransmission timeouts (20, 1000, 200) */
	int hb_interval_ms;      /* heartbeat per path (1000) */
	int path_max_retrans;    /* failed sends before a path is declared down (3) */
	int assoc_max_retrans;   /* ... before the peer is declared lost (8) */
	size_t sndbuf, rcvbuf;   /* socket buffers (4 MiB each) */
	int sack_delay_ms;       /* delayed SACK timer (10); each direction has its own
				  * association, so SACKs never ride on reverse data */
	int sack_freq;           /* SACK every this many packets (2), else after sack_delay_ms */
	int accept_unknown;      /* accept associations from peers whose card was never added
				  * (off: MPI layers add every card from their modex); such a peer
				  * gets the card "sctpt1 <udp port> <sctp port> <source ip>" */
	size_t stripe_small;     /* striped peers: messages up to this size travel whole on the
				  * live rail with the lowest RTT; larger ones are split by
				  * fragment across the live rails in proportion to their rates
				  * (16 KiB) */
	const char *backend;     /* the SCTP engine: "usrsctp" or "native" (our own, RFC 9260;
				  * sctpt_native.c); NULL: SCTPT_BACKEND if set, else native */
	/* Same-host peers (another process whose card names this host) through shared memory:
	 * a ring per ordered pair in the receiver's memory, large messages read straight from
	 * the sender's buffer, tripwires to sleep on. Semantics and completions are the SCTP
	 * peers' own. */
	int shm;                 /* 1 after sctpt_config_init; 0: SCTP for every peer */
	size_t shm_ring;         /* bytes of each ring (128 KiB; a power of two, 4 KiB..64 MiB) */
	size_t shm_pull_min;     /* messages from this size on are read by the receiver from the
				  * sender's buffer (process_vm_readv) where the kernel lets it
				  * (16 KiB); 0: everything is copied through the ring */
	int shm_spin_us;         /* sctpt_wait polls the rings this long before sleeping (20) */
	int shm_lend;            /* 1: a whole message from a ring reaches a handler with a
				  * complete function where it lies, no copy (0: copied out) */
	int single_thread;       /* 1: the caller never calls into the endpoint from two threads
				  * at once (MPI_THREAD_SINGLE, FUNNELED, SERIALIZED): the core
				  * takes no lock of its own (0) */
	int keeper_ms;           /* a thread of the endpoint wakes this often and, when no
				  * progress call came meanwhile, answers the peers (SACKs,
				  * heartbeats, timers) until one does: an application may compute
				  * for as long as it likes without its peers declaring it lost
				  * (50; 0: no thread; SCTPT_KEEPER_MS sets it) */
	struct sctpt_handler handler; /* contexts no sctpt_handler_add claimed (lo/hi unused;
				       * events 1 after sctpt_config_init) */
	struct sctpt_ops ops;
};

/*
 * Striping. With ops.rails a peer gets one association per rail (each bound to, and sending
 * from, its rail's two addresses only: no failover beneath SCTP). Each message, or each
 * fragment of a large one, goes to one rail: up to stripe_small bytes on the live rail with
 * the lowest RTT, larger ones fragment by fragment to the rail that would finish it first
 * (bytes it holds unacknowledged / its measured rate; equal while rates are unknown). The
 * receiver reassembles by the envelope's (context, seq, offset), whatever rail each
 * fragment took, and drops duplicates. The sender keeps a copy of each fragment until
 * SCTP has it acknowledged; a rail whose path probes go unanswered, or whose association
 * fails, is dropped and its unacknowledged fragments are re-sent on the other rails; once
 * its path answers again it is used again (its association if that outlived the outage,
 * else a new one). The peer is lost once no rail has worked for
 * rto_max_ms * assoc_max_retrans.
 * Why a callback and not FNN file names in the config: the core stays independent of
 * routing/fnn (and of FNNs: any rail list works), and the plugin that has the files decides
 * how to name hosts. Why own copies and not SCTP_SEND_FAILED_EVENT's data: an ABORTed or
 * lost association hands back only what it never sent, not what was sent and lost with it.
 */

/* Flags for sctpt_send. */
#define SCTPT_SEND_UNORDERED 0x1u /* no per-(peer, context) ordering for this message */
/* Only if it leaves at once (copied out of iov before sctpt_send returns 1): else -EAGAIN,
 * with nothing sent or queued. For a layer that would otherwise copy a small message into a
 * buffer of its own first; today only a same-host peer with nothing queued takes it. */
#define SCTPT_SEND_NOW 0x2u

struct sctpt_path_stats {
	char local[48], remote[48]; /* "ip:port" */
	int up;
	int primary;
	uint32_t rtt_us;            /* SCTP's smoothed RTT estimate for the path */
	uint32_t cwnd;
	uint64_t packets_out, bytes_out; /* UDP datagrams/bytes we sent on this path */
	uint64_t packets_in, bytes_in;
	/* striped peers: fragments (and their bytes, envelopes included) the core gave this
	 * rail, and the bytes it holds until SCTP has them acknowledged */
	uint64_t frags_out, frag_bytes_out;
	uint64_t unacked_bytes;
	uint64_t rate_bps;          /* the rail's delivery rate estimate, bytes/s (0: unknown) */
};

struct sctpt_peer_stats {
	int state;                  /* enum sctpt_peer_state */
	int npaths;
	struct sctpt_path_stats paths[SCTPT_MAX_ADDRS * SCTPT_MAX_ADDRS];
	uint64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv;
	uint64_t held_for_order;    /* messages that completed early and waited for their turn */
	uint32_t held_now;          /* complete messages waiting for an earlier one */
	uint32_t reassembling;      /* streams with a message partly received */
	uint64_t sctp_msgs_in;      /* SCTP messages (fragments) read from the socket */
	/* SCTP's view of our outgoing association (SCTP_STATUS), 0 before it exists */
	int32_t sctp_state;
	uint32_t sctp_rwnd, sctp_unacked, sctp_pending, sctp_rto_ms, sctp_cwnd;
	/* ... and of the peer's association (the one we receive on) */
	uint32_t sctp_in_rwnd, sctp_in_unacked, sctp_in_pending;
	uint64_t stream_msgs_sent[SCTPT_MAX_STREAMS];
	/* striped peers: rails (then paths[i] is rail i), rail failures seen, rails connected
	 * again after a failure, fragments re-sent on other rails after a failure, and duplicate
	 * fragments dropped on receipt */
	int nrails;
	uint64_t rail_failures, rail_reconnects, frags_resent, dup_frags_dropped;
	uint64_t rail_stalls;       /* times a live rail stopped moving data and its
				     * unacknowledged fragments were re-sent on the others */
	uint64_t unclaimed;         /* messages dropped: no handler for their context */
	/* same-host peers: 1 if our messages to it went through its ring, 2 if its messages came
	 * through ours, 3 both (also after it closed); messages it read from our buffer; times its ring was full; times
	 * we woke it; its messages we delivered where they lay in our ring (cfg.shm_lend) */
	int shm;
	uint64_t shm_pulls, shm_ring_full, shm_wakeups, shm_lent;
	uint64_t shm_express;       /* its small messages handed from our ring straight to the
				     * handler, without a completion entry (sctpt_progress) */
};

enum sctpt_peer_state {
	SCTPT_PEER_IDLE,
	SCTPT_PEER_CONNECTING,
	SCTPT_PEER_UP,
	SCTPT_PEER_FAILED, /* lost: crashed, unreachable or misbehaving */
	SCTPT_PEER_CLOSED, /* closed its endpoint in order */
};

void sctpt_config_init(struct sctpt_config *cfg);
int sctpt_open(const struct sctpt_config *cfg, struct sctpt_ep **ep);
/* Flushes queued sends and waits until SCTP has them acknowledged, for at most 2 s, then
 * aborts the associations. Sends still queued complete with -ECANCELED and recv_buf buffers
 * of unfinished messages come back (status -ECANCELED): to the handlers with a complete
 * function before it returns; entries of polled handlers are released unread. */
void sctpt_close(struct sctpt_ep *ep);

/* This endpoint's business card: "sctpt1 <udp port> <sctp port> <ip> [<ip> ...]", and
 * " shm=<token>" when same-host peers may reach it through shared memory. */
int sctpt_card(struct sctpt_ep *ep, char *buf, size_t len);
/* Adds (or finds) the peer with this card; returns its id. No traffic until the first send. */
sctpt_peer_t sctpt_peer_add(struct sctpt_ep *ep, const char *card);

/*
 * Sends iov as one message. Returns 1 if the data was handed to SCTP already (iov reusable,
 * no completion), 0 if queued (iov must stay valid until its one SCTPT_CQE_SEND entry, which
 * goes to the handler of `context`), < 0 on error, with no completion (-EPIPE: the peer is
 * lost; -EINVAL: bad arguments).
 */
int sctpt_send(struct sctpt_ep *ep, sctpt_peer_t peer, uint32_t context, int32_t tag,
	       unsigned flags, const struct iovec *iov, int iovcnt, void *cookie);

/*
 * One-sided access to a same-host peer's memory (CLAN's RDMA cookies), for layers that pass
 * buffer addresses to each other, as ob1's RGET does: copies len bytes between local and the
 * peer's virtual address remote, now, with one copy (process_vm_readv/writev). 0; -ENOTSUP
 * when the peer is not one whose messages travel through shared memory, or the kernel does
 * not let us at its memory (ptrace rules, cfg.shm_pull_min 0): use the layer's own path;
 * -EFAULT if the peer has no such memory; -EPIPE if it is gone.
 */
int sctpt_peer_read(struct sctpt_ep *ep, sctpt_peer_t peer, void *local, uint64_t remote,
		    size_t len);
int sctpt_peer_write(struct sctpt_ep *ep, sctpt_peer_t peer, const void *local, uint64_t remote,
		     size_t len);
/* What sctpt_peer_read/write can do with peer now: SCTPT_MEM_READ (we may read and write its
 * memory), SCTPT_MEM_PEER_READS (it may read and write ours: worth handing it an address), or
 * 0 (an SCTP peer, the kernel forbids it, or no message has travelled that way yet: each end
 * learns when the other's first message sets the path up). */
enum { SCTPT_MEM_READ = 1, SCTPT_MEM_PEER_READS = 2 };
int sctpt_peer_mem(struct sctpt_ep *ep, sctpt_peer_t peer);

/* Claims contexts h->lo..h->hi for a layer: returns the handler's id (> 0), -EEXIST if the
 * range overlaps another handler's, -EINVAL if it is empty. */
int sctpt_handler_add(struct sctpt_ep *ep, const struct sctpt_handler *h);
/* Gives the range back; entries still queued for it are released unread (sends queued on its
 * contexts complete into nothing: remove a handler once its sends are done). */
void sctpt_handler_remove(struct sctpt_ep *ep, int id);
/* Up to max entries of handler id (0: cfg.handler) that has no complete function, oldest
 * first; each must be given back with sctpt_cq_release. Does not progress. */
int sctpt_cq_read(struct sctpt_ep *ep, int id, struct sctpt_cqe *out, int max);
void sctpt_cq_release(struct sctpt_ep *ep, struct sctpt_cqe *c, int n);

/* Non-blocking: moves packets, timers and sends, then hands completions to the handlers with a
 * complete function; returns how many things it handled (completions queued for
 * sctpt_cq_read count too). */
int sctpt_progress(struct sctpt_ep *ep);
/* Blocks until something was handled or timeout_ms passed (-1: forever); returns the count. */
int sctpt_wait(struct sctpt_ep *ep, int timeout_ms);
/* True while sends are queued (to any peer, or to this one when peer >= 0). */
int sctpt_pending(struct sctpt_ep *ep, sctpt_peer_t peer);

int sctpt_peer_state(struct sctpt_ep *ep, sctpt_peer_t peer);
/* Its card, into buf; returns buf, or "(no such peer)". */
const char *sctpt_peer_name(struct sctpt_ep *ep, sctpt_peer_t peer, char *buf, size_t len);
int sctpt_peer_stats(struct sctpt_ep *ep, sctpt_peer_t peer, struct sctpt_peer_stats *st);
uint16_t sctpt_streams(struct sctpt_ep *ep);
/* The last error message of the calling thread, naming the peer or file involved. */
const char *sctpt_last_error(void);

/* The default (context, tag) -> stream mapping: 1 + a hash modulo nstreams - 1. */
uint16_t sctpt_stream_default(uint32_t context, int32_t tag, uint16_t nstreams);

#ifdef __cplusplus
}
#endif
#endif /* SCTPT_H */
