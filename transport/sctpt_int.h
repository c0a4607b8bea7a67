/* Internals of the SCTP transport core, shared by its files; not for plugins. */
#ifndef SCTPT_INT_H
#define SCTPT_INT_H

#include "sctpt.h"
#include "sctpt_order.h"
#include "sctpt_proto.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define SCTPT_CARD_MAX_LEN SCTPT_CARD_MAX

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
	struct sctpt_txmsg *next;
	struct sctpt_hdr hdr;
	uint16_t stream;
	int iovcnt, iov_idx;
	size_t iov_off;            /* within iov[iov_idx] */
	struct iovec *iov;
	struct iovec iov_inline[4];
	void *cookie;
	int internal;              /* ours (CLOSE): no send_done */
};

struct sctpt_txq {
	struct sctpt_txmsg *head, *tail;
};

/* A copy of one fragment (envelope + payload) given to a rail, kept until SCTP has it
 * acknowledged, or waiting to be re-sent after its rail failed. */
struct sctpt_rfrag {
	struct sctpt_rfrag *next;
	uint16_t stream;
	size_t len;
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
	struct sctpt_rfrag *head, *tail;
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
	uint8_t *buf;
	size_t got;
	int owned;                     /* buf is ours to free */
	void *cookie;                  /* from recv_buf */
	/* striped peers: messages being reassembled, and which fragments arrived (bit
	 * offset / 512: fragments are at least 512 bytes) */
	struct sctpt_rxmsg *rnext;
	uint8_t *bits;
};

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
	struct sctpt_rfrag *resend_head, *resend_tail;
	uint32_t unord_id;          /* last id given to an unordered message */
	struct sctpt_rxmsg *rxlist;
	struct sctpt_seen seen;
	uint64_t all_down_ms;       /* since when no rail has been live (0: one is) */
	int close_sent;             /* our CLOSE is queued: the peer's ABORT ends it */
	uint64_t rail_failures, rail_reconnects, frags_resent, dup_frags, rail_stalls;
};

struct sctpt_udp {
	int fd;
	struct sockaddr_in addr;
	uint32_t mask;             /* network byte order */
	int mtu;
	_Atomic int gso;           /* the kernel takes UDP_SEGMENT sends on this socket */
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
	size_t got;                /* payload bytes of this SCTP message so far */
	int in_stage;              /* single message being read whole into ep->stage */
	int discard;               /* a bad message being drained */
	struct sctpt_rxmsg *frag;  /* reassembly target */
};

struct sctpt_ep {
	pthread_mutex_t lock;
	struct sctpt_config cfg;
	int nudp;
	struct sctpt_udp udp[SCTPT_MAX_ADDRS];
	uint16_t udp_port;
	uint16_t sport, rport;     /* SCTP ports of our send and receive sockets */
	struct socket *s_send, *s_recv;
	uint32_t mtu;
	struct sctpt_peer **peers;
	int npeers, cap_peers;
	int tx_peers;              /* peers with queued sends */
	uint8_t *stage;            /* receive staging buffer */
	size_t stage_len;
	uint8_t *txbuf;            /* envelope + fragment, contiguous for usrsctp_sendv */
	struct sctpt_rxcur cur;
	char card[SCTPT_CARD_MAX];
	int nosock;                /* test endpoint: no sockets, no usrsctp */
	int rail_peers;            /* peers with rails */
};

/* Socket layer: all usrsctp calls live in sctpt_usrsctp.c behind these; a kernel-SCTP
 * backend would provide the same functions. */
int sctpt_sock_open(struct sctpt_ep *ep);
void sctpt_sock_close(struct sctpt_ep *ep);
int sctpt_sock_connect(struct sctpt_ep *ep, struct sctpt_peer *p);
void sctpt_sock_forget(struct sctpt_ep *ep, struct sctpt_peer *p);
/* One SCTP message on the peer's outgoing association: 0, -EAGAIN (buffer full), < 0. */
int sctpt_sock_send(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t stream, const void *buf,
		    size_t len);
/* Brackets (nesting) around calls into usrsctp that may send in bursts: the packets are
 * batched per destination and sent with UDP GSO at the outermost end. Per thread. */
void sctpt_sock_tx_begin(void);
void sctpt_sock_tx_end(void);
/* Reads UDP datagrams into usrsctp and runs its timers; returns datagrams handled. */
int sctpt_sock_input(struct sctpt_ep *ep);
/* Reads from the receive socket: bytes, -EAGAIN, or < 0. *eor when the message ended. */
int sctpt_sock_recv(struct sctpt_ep *ep, void *buf, size_t len, struct sctpt_peer **peer,
		    uint16_t *stream, int *eor);
/* Handles pending notifications on the send socket; returns how many. */
int sctpt_sock_events(struct sctpt_ep *ep);
int sctpt_sock_peer_stats(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_peer_stats *st);
int sctpt_sock_wait(struct sctpt_ep *ep, int timeout_ms); /* poll the UDP sockets */
/* Data chunks SCTP still holds for our peers (queued or sent but not acknowledged). */
int sctpt_sock_unacked(struct sctpt_ep *ep);

/* Rails of striped peers. connect: a new association on the rail's pinned address; send:
 * like sctpt_sock_send on the rail's association; held: the bytes SCTP holds for it (queued
 * or unacknowledged), < 0 if it cannot tell; info: srtt and cwnd of its path. */
int sctpt_sock_rail_connect(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r);
int sctpt_sock_rail_send(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r,
			 uint16_t stream, const void *buf, size_t len);
int64_t sctpt_sock_rail_held(struct sctpt_ep *ep, struct sctpt_rail_st *r);
void sctpt_sock_rail_info(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r);
uint64_t sctpt_now_ms(void);

/* Called by the socket layer. */
struct sctpt_peer *sctpt_peer_by_udp(struct sctpt_ep *ep, const struct sockaddr_in *from,
				     int *path);
void sctpt_on_assoc(struct sctpt_ep *ep, struct sctpt_peer *p, enum sctpt_event_type t, int err);
void sctpt_on_path(struct sctpt_ep *ep, struct sctpt_path *path, enum sctpt_event_type t);
void sctpt_on_send_failed(struct sctpt_ep *ep, struct sctpt_peer *p, int err);
/* An association of a rail came up (t ASSOC_UP) or failed (ASSOC_DOWN); in: the peer's. */
void sctpt_on_rail(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r, int in,
		   enum sctpt_event_type t);

/* Test and fuzz hooks: an endpoint without sockets (it can only receive what is injected),
 * and one received SCTP message handed to the receive path as if read from the socket. */
int sctpt_open_nosock(const struct sctpt_config *cfg, struct sctpt_ep **ep);
int sctpt_rx_inject(struct sctpt_ep *ep, sctpt_peer_t peer, uint16_t stream, const uint8_t *buf,
		    size_t len);

/* Addresses of this host: from cfg.addrs, the config file, or the interfaces. */
int sctpt_local_addrs(const struct sctpt_config *cfg, struct sctpt_udp *out, int max);
int sctpt_config_file_addrs(const char *file, const char *host, uint32_t *addrs, int max);

#endif
