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

/* A message being reassembled from fragments (one per stream at a time), or held early. */
struct sctpt_rxmsg {
	struct sctpt_order_item order; /* first: the order table links through it */
	struct sctpt_hdr hdr;          /* of the first fragment */
	uint16_t stream;
	uint8_t *buf;
	size_t got;
	int owned;                     /* buf is ours to free */
	void *cookie;                  /* from recv_buf */
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
};

struct sctpt_udp {
	int fd;
	struct sockaddr_in addr;
	uint32_t mask;             /* network byte order */
	int mtu;
};

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

/* Called by the socket layer. */
struct sctpt_peer *sctpt_peer_by_udp(struct sctpt_ep *ep, const struct sockaddr_in *from,
				     int *path);
void sctpt_on_assoc(struct sctpt_ep *ep, struct sctpt_peer *p, enum sctpt_event_type t, int err);
void sctpt_on_path(struct sctpt_ep *ep, struct sctpt_path *path, enum sctpt_event_type t);
void sctpt_on_send_failed(struct sctpt_ep *ep, struct sctpt_peer *p, int err);

/* Test and fuzz hooks: an endpoint without sockets (it can only receive what is injected),
 * and one received SCTP message handed to the receive path as if read from the socket. */
int sctpt_open_nosock(const struct sctpt_config *cfg, struct sctpt_ep **ep);
int sctpt_rx_inject(struct sctpt_ep *ep, sctpt_peer_t peer, uint16_t stream, const uint8_t *buf,
		    size_t len);

/* Addresses of this host: from cfg.addrs, the config file, or the interfaces. */
int sctpt_local_addrs(const struct sctpt_config *cfg, struct sctpt_udp *out, int max);
int sctpt_config_file_addrs(const char *file, const char *host, uint32_t *addrs, int max);

#endif
