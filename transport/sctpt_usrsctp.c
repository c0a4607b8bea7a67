/*
 * The usrsctp engine (struct sctpt_backend): AF_CONN associations whose packets travel through
 * the UDP layer (sctpt_udp.c), driven from the caller's progress loop. No usrsctp thread runs
 * (usrsctp_init_nothreads), timers are driven by usrsctp_handle_timers, and conn_output only
 * hands packets to the UDP layer.
 */
#include "sctpt_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <usrsctp.h>

#ifndef SCTP_CMT_ON_OFF
#define SCTP_CMT_ON_OFF 0x00001200 /* handled by usrsctp, missing from usrsctp.h */
#endif

/* usrsctp's read-only SCTP_GET_SNDBUF_USE (sctp_uio.h, not in usrsctp.h): the bytes an
 * association holds for sending (queued or unacknowledged) and received but unread. */
#define SCTPT_GET_SNDBUF_USE 0x00001101
struct sctpt_sockstat {
	sctp_assoc_t ss_assoc_id;
	uint32_t ss_total_sndbuf;
	uint32_t ss_total_recv_buf;
};

/* usrsctp is one instance per process, shared by all endpoints. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_refs;
static int g_next_port = 5000;
static uint64_t g_last_tick_ms;

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * usrsctp's output hook: addr is a peer's selector. Only sending happens here; path state
 * changes are picked up and reported by the progress loop, never from inside usrsctp.
 */
static int conn_output(void *addr, void *buf, size_t len, uint8_t tos, uint8_t set_df)
{
	(void)tos;
	(void)set_df;
	sctpt_udp_output(addr, buf, len);
	return 0;
}

static void tx_begin(struct sctpt_ep *ep)
{
	(void)ep;
	sctpt_udp_tx_begin();
}

static void tx_end(struct sctpt_ep *ep)
{
	(void)ep;
	sctpt_udp_tx_end();
}

/* The settings usrsctp has once per process, as the first open endpoint asked for them. */
static struct {
	int crc32c, cmt;
	uint16_t streams;
} g_set;

static int global_init(const struct sctpt_config *cfg)
{
	int rc = 0;
	pthread_mutex_lock(&g_lock);
	if (g_refs == 0) {
		usrsctp_init_nothreads(0, conn_output, NULL);
		usrsctp_sysctl_set_sctp_ecn_enable(1);
		usrsctp_sysctl_set_sctp_nr_outgoing_streams_default(cfg->streams);
		if (cfg->crc32c)
			usrsctp_disable_crc32c_offload();
		else
			usrsctp_enable_crc32c_offload();
		usrsctp_sysctl_set_sctp_cmt_on_off(cfg->cmt ? SCTP_CMT_RPV2 : 0);
		g_set.crc32c = !!cfg->crc32c;
		g_set.cmt = !!cfg->cmt;
		g_set.streams = cfg->streams;
		g_last_tick_ms = now_ms();
	} else if (g_set.crc32c != !!cfg->crc32c || g_set.cmt != !!cfg->cmt ||
		   g_set.streams != cfg->streams) {
		rc = sctpt_err(-EINVAL, "usrsctp takes crc32c, cmt and streams once per process: an "
			       "endpoint is open with crc32c %d, cmt %d, %u streams; this one asks "
			       "for %d, %d, %u", g_set.crc32c, g_set.cmt, g_set.streams,
			       !!cfg->crc32c, !!cfg->cmt, cfg->streams);
	}
	if (rc == 0)
		g_refs++;
	pthread_mutex_unlock(&g_lock);
	return rc;
}

static void global_fini(void)
{
	pthread_mutex_lock(&g_lock);
	if (--g_refs == 0) {
		/* usrsctp_finish fails while sockets linger in TIME_WAIT-like states; retry briefly. */
		for (int i = 0; i < 50 && usrsctp_finish() != 0; i++) {
			usrsctp_handle_timers(100);
			usleep(1000);
		}
	}
	pthread_mutex_unlock(&g_lock);
}

static void run_timers(void)
{
	if (pthread_mutex_trylock(&g_lock) != 0)
		return; /* another thread is on it */
	uint64_t t = now_ms();
	if (t > g_last_tick_ms) {
		uint32_t dt = (uint32_t)(t - g_last_tick_ms);
		g_last_tick_ms = t;
		usrsctp_handle_timers(dt);
		/* timers send for every endpoint: out before another thread may close one */
		sctpt_udp_tx_flush();
	}
	pthread_mutex_unlock(&g_lock);
}

static int set_opt(struct socket *so, int level, int name, const void *v, socklen_t len,
		   const char *what)
{
	if (usrsctp_setsockopt(so, level, name, v, len) != 0)
		return sctpt_err(-errno, "usrsctp setsockopt %s: %s", what, strerror(errno));
	return 0;
}

static int configure_socket(struct sctpt_ep *ep, struct socket *so)
{
	const struct sctpt_config *c = &ep->cfg;
	int one = 1, zero = 0, rc = 0;
	int sndbuf = (int)c->sndbuf, rcvbuf = (int)c->rcvbuf;
	uint32_t pdp = (uint32_t)(c->frag_size + SCTPT_HDR_LEN + 1024);
	struct sctp_initmsg init = {
		.sinit_num_ostreams = c->streams,
		.sinit_max_instreams = c->streams,
		.sinit_max_attempts = 4,
		.sinit_max_init_timeo = (uint16_t)c->rto_max_ms,
	};
	struct sctp_rtoinfo rto = {
		.srto_assoc_id = SCTP_FUTURE_ASSOC,
		.srto_initial = (uint32_t)c->rto_initial_ms,
		.srto_max = (uint32_t)c->rto_max_ms,
		.srto_min = (uint32_t)c->rto_min_ms,
	};
	struct sctp_assocparams ap = {
		.sasoc_assoc_id = SCTP_FUTURE_ASSOC,
		.sasoc_asocmaxrxt = (uint16_t)c->assoc_max_retrans,
	};
	struct sctp_paddrparams pp = {
		.spp_assoc_id = SCTP_FUTURE_ASSOC,
		.spp_hbinterval = (uint32_t)c->hb_interval_ms,
		.spp_pathmaxrxt = (uint16_t)c->path_max_retrans,
		.spp_flags = SPP_HB_ENABLE,
	};
	struct sctp_assoc_value ss = {.assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = SCTP_SS_ROUND_ROBIN};
	/* SACKs cannot ride on reverse data (each direction has its own association): keep the
	 * delay short so senders free their buffers and close() is not held up for 200 ms. */
	struct sctp_sack_info sack = {.sack_assoc_id = SCTP_FUTURE_ASSOC,
				      .sack_delay = (uint32_t)c->sack_delay_ms,
				      .sack_freq = (uint32_t)c->sack_freq};
	uint16_t ev_types[] = {SCTP_ASSOC_CHANGE, SCTP_PEER_ADDR_CHANGE, SCTP_SEND_FAILED_EVENT,
			       SCTP_REMOTE_ERROR, SCTP_SHUTDOWN_EVENT};

	usrsctp_set_non_blocking(so, 1);
	rc = rc ? rc : set_opt(so, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf), "SO_SNDBUF");
	rc = rc ? rc : set_opt(so, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf), "SO_RCVBUF");
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_NODELAY, &one, sizeof(one), "SCTP_NODELAY");
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_INITMSG, &init, sizeof(init), "SCTP_INITMSG");
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_RTOINFO, &rto, sizeof(rto), "SCTP_RTOINFO");
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_ASSOCINFO, &ap, sizeof(ap), "SCTP_ASSOCINFO");
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp),
			       "SCTP_PEER_ADDR_PARAMS");
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_RECVRCVINFO, &one, sizeof(one),
			       "SCTP_RECVRCVINFO");
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_FRAGMENT_INTERLEAVE, &zero, sizeof(zero),
			       "SCTP_FRAGMENT_INTERLEAVE");
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_PARTIAL_DELIVERY_POINT, &pdp, sizeof(pdp),
			       "SCTP_PARTIAL_DELIVERY_POINT");
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_PLUGGABLE_SS, &ss, sizeof(ss),
			       "SCTP_PLUGGABLE_SS");
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_DELAYED_SACK, &sack, sizeof(sack),
			       "SCTP_DELAYED_SACK");
	/* The default burst of 4 packets per SACK caps a 64000-byte-MTU path at ~256 MB/s. */
	struct sctp_assoc_value burst = {.assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = 64};
	rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_MAX_BURST, &burst, sizeof(burst),
			       "SCTP_MAX_BURST");
	if (c->cmt) {
		struct sctp_assoc_value cmt = {.assoc_id = SCTP_FUTURE_ASSOC, .assoc_value = SCTP_CMT_RPV2};
		rc = rc ? rc : set_opt(so, IPPROTO_SCTP, SCTP_CMT_ON_OFF, &cmt, sizeof(cmt),
				       "SCTP_CMT_ON_OFF");
	}
	for (size_t i = 0; i < sizeof(ev_types) / sizeof(ev_types[0]) && !rc; i++) {
		struct sctp_event ev = {.se_assoc_id = SCTP_FUTURE_ASSOC, .se_on = 1, .se_type = ev_types[i]};
		rc = set_opt(so, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof(ev), "SCTP_EVENT");
	}
	return rc;
}

static struct socket *open_sctp(struct sctpt_ep *ep, uint16_t port, int listen)
{
	struct socket *so = usrsctp_socket(AF_CONN, SOCK_SEQPACKET, IPPROTO_SCTP, NULL, NULL, 0, NULL);
	if (!so) {
		sctpt_err(-errno, "usrsctp_socket: %s", strerror(errno));
		return NULL;
	}
	struct sockaddr_conn sc = {.sconn_family = AF_CONN, .sconn_port = htons(port)};
	if (configure_socket(ep, so) != 0)
		goto fail;
	if (usrsctp_bind(so, (struct sockaddr *)&sc, sizeof(sc)) != 0) {
		sctpt_err(-errno, "usrsctp_bind SCTP port %u: %s", port, strerror(errno));
		goto fail;
	}
	if (listen && usrsctp_listen(so, 1) != 0) {
		sctpt_err(-errno, "usrsctp_listen: %s", strerror(errno));
		goto fail;
	}
	return so;
fail:
	usrsctp_close(so);
	return NULL;
}

static void us_close(struct sctpt_ep *ep);

static int us_open(struct sctpt_ep *ep)
{
	for (int i = 0; i < SCTPT_MAX_ADDRS; i++)
		ep->udp[i].fd = -1;
	int rc = global_init(&ep->cfg);
	if (rc)
		return rc;
	if ((rc = sctpt_udp_open(ep)) != 0) {
		sctpt_udp_close(ep);
		global_fini();
		return rc;
	}
	pthread_mutex_lock(&g_lock);
	ep->sport = (uint16_t)g_next_port;
	ep->rport = (uint16_t)(g_next_port + 1);
	g_next_port += 2;
	pthread_mutex_unlock(&g_lock);
	ep->s_send = open_sctp(ep, ep->sport, 0);
	ep->s_recv = ep->s_send ? open_sctp(ep, ep->rport, 1) : NULL;
	if (!ep->s_recv) {
		rc = sctpt_err(-EIO, "%s", sctpt_last_error());
		us_close(ep);
		return rc;
	}
	return 0;
}

static void abort_close(struct socket *so)
{
	/* Abort rather than shut down gracefully: a SHUTDOWN's timers would call conn_output
	 * with the selectors of peers that are about to be freed. The caller has flushed. */
	struct linger l = {.l_onoff = 1, .l_linger = 0};
	usrsctp_setsockopt(so, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	usrsctp_close(so);
}

static void us_forget(struct sctpt_ep *ep, struct sctpt_peer *p);

static void us_close(struct sctpt_ep *ep)
{
	if (ep->s_send)
		abort_close(ep->s_send);
	if (ep->s_recv)
		abort_close(ep->s_recv);
	ep->s_send = ep->s_recv = NULL;
	for (int i = 0; i < ep->npeers; i++)
		us_forget(ep, ep->peers[i]);
	/* Let usrsctp send the ABORTs for what was just closed before the sockets go. */
	run_timers();
	sctpt_udp_close(ep);
	global_fini();
}

static void register_peer(struct sctpt_peer *p)
{
	if (p->registered)
		return;
	usrsctp_register_address(&p->mirror);
	usrsctp_register_address(&p->sel_out);
	for (int i = 0; i < p->nrails; i++) {
		usrsctp_register_address(&p->rails[i].mirror);
		usrsctp_register_address(&p->rails[i].out);
	}
	p->registered = 1;
}

static void us_forget(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	(void)ep;
	if (!p->registered)
		return;
	usrsctp_deregister_address(&p->mirror);
	usrsctp_deregister_address(&p->sel_out);
	for (int i = 0; i < p->nrails; i++) {
		usrsctp_deregister_address(&p->rails[i].mirror);
		usrsctp_deregister_address(&p->rails[i].out);
	}
	p->registered = 0;
}

/* The path MTU can only be set once the association exists; addr is its AF_CONN address. */
static int set_path_mtu(struct sctpt_ep *ep, struct socket *so, sctp_assoc_t id, void *addr,
			uint16_t port)
{
	struct sctp_paddrparams pp = {
		.spp_assoc_id = id,
		.spp_hbinterval = (uint32_t)ep->cfg.hb_interval_ms,
		.spp_pathmaxrxt = (uint16_t)ep->cfg.path_max_retrans,
		.spp_pathmtu = ep->mtu,
		.spp_flags = SPP_PMTUD_DISABLE | SPP_HB_ENABLE,
	};
	struct sockaddr_conn sc = {.sconn_family = AF_CONN, .sconn_port = htons(port), .sconn_addr = addr};
	memcpy(&pp.spp_address, &sc, sizeof(sc));
	return set_opt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp), "path MTU");
}

/* Connects the send socket to the peer's AF_CONN address sel; *id: the association. */
static int connect_sel(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_sel *sel,
		       sctp_assoc_t *idp)
{
	struct sockaddr_conn sc;
	socklen_t l;
	memset(&sc, 0, sizeof(sc));
	sc.sconn_family = AF_CONN;
	sc.sconn_port = htons(p->info.sctp_port);
	sc.sconn_addr = sel;
	if (usrsctp_connect(ep->s_send, (struct sockaddr *)&sc, sizeof(sc)) != 0 &&
	    errno != EINPROGRESS)
		return sctpt_err(-errno, "peer %s: connect: %s", p->card, strerror(errno));
	/* the association id of a one-to-many socket is looked up by the peer's address */
	struct sctp_paddrinfo pi;
	memset(&pi, 0, sizeof(pi));
	memcpy(&pi.spinfo_address, &sc, sizeof(sc));
	l = sizeof(pi);
	if (usrsctp_getsockopt(ep->s_send, IPPROTO_SCTP, SCTP_GET_PEER_ADDR_INFO, &pi, &l) != 0)
		return sctpt_err(-errno, "peer %s: no association after connect: %s", p->card,
				 strerror(errno));
	*idp = pi.spinfo_assoc_id;
	set_path_mtu(ep, ep->s_send, *idp, sel, p->info.sctp_port);
	return 0;
}

static int us_rail_connect(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	sctp_assoc_t id = 0;
	register_peer(p);
	int rc = connect_sel(ep, p, &r->out, &id);
	if (rc)
		return rc;
	r->assoc_out = (uint32_t)id;
	r->live = 1;
	/* first come first served: SCTP then holds the newest of the rail's fragments only */
	struct sctp_assoc_value ss = {.assoc_id = id, .assoc_value = SCTP_SS_FIRST_COME};
	return set_opt(ep->s_send, IPPROTO_SCTP, SCTP_PLUGGABLE_SS, &ss, sizeof(ss),
		       "SCTP_PLUGGABLE_SS on a rail");
}

static int us_connect(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	sctp_assoc_t id = 0;
	if (p->anonymous || p->npaths == 0)
		return sctpt_err(-EHOSTUNREACH, "peer %s: no business card, cannot connect to it",
				 p->card);
	register_peer(p);
	if (p->nrails) {
		int ok = 0, rc = 0;
		for (int i = 0; i < p->nrails; i++) {
			int e = us_rail_connect(ep, p, &p->rails[i]);
			ok += e == 0;
			rc = e ? e : rc;
		}
		return ok ? 0 : rc;
	}
	/* start on the path the peer was last heard on, if it has talked to us */
	if (p->assoc_in)
		atomic_store(&p->sel_out.cur, atomic_load(&p->mirror.cur));
	int rc = connect_sel(ep, p, &p->sel_out, &id);
	if (rc)
		return rc;
	p->assoc_out = (uint32_t)id;
	return 0;
}

static int us_send(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r,
		   uint16_t stream, const void *buf, size_t len)
{
	struct sctp_sndinfo si = {
		.snd_sid = stream,
		.snd_ppid = htonl(SCTPT_PPID),
		.snd_assoc_id = (sctp_assoc_t)(r ? r->assoc_out : p->assoc_out),
	};
	if (usrsctp_sendv(ep->s_send, buf, len, NULL, 0, &si, sizeof(si), SCTP_SENDV_SNDINFO, 0) >= 0)
		return 0;
	if (errno == EWOULDBLOCK || errno == EAGAIN)
		return -EAGAIN;
	if (r)
		return sctpt_err(-errno, "peer %s: send on rail %d stream %u: %s", p->card, r->index,
				 stream, strerror(errno));
	return sctpt_err(-errno, "peer %s: send on stream %u: %s", p->card, stream, strerror(errno));
}

static int64_t us_rail_held(struct sctpt_ep *ep, struct sctpt_rail_st *r)
{
	struct sctpt_sockstat ss = {.ss_assoc_id = (sctp_assoc_t)r->assoc_out};
	socklen_t l = sizeof(ss);
	if (!r->assoc_out ||
	    usrsctp_getsockopt(ep->s_send, IPPROTO_SCTP, SCTPT_GET_SNDBUF_USE, &ss, &l) != 0)
		return -1;
	return ss.ss_total_sndbuf;
}

static void us_rail_info(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_rail_st *r)
{
	struct sctp_paddrinfo pi;
	struct sockaddr_conn *sc = (struct sockaddr_conn *)&pi.spinfo_address;
	socklen_t l = sizeof(pi);
	memset(&pi, 0, sizeof(pi));
	pi.spinfo_assoc_id = (sctp_assoc_t)r->assoc_out;
	sc->sconn_family = AF_CONN;
	sc->sconn_port = htons(p->info.sctp_port);
	sc->sconn_addr = &r->out;
	if (r->assoc_out &&
	    usrsctp_getsockopt(ep->s_send, IPPROTO_SCTP, SCTP_GET_PEER_ADDR_INFO, &pi, &l) == 0) {
		r->srtt_us = pi.spinfo_srtt * 1000u;
		r->cwnd = pi.spinfo_cwnd;
	}
}

/* The peer whose association (ours: in 0, its: in 1) has this id; *rail: its rail, or -1. */
static struct sctpt_peer *peer_by_assoc_rail(struct sctpt_ep *ep, uint32_t id, int in, int *rail)
{
	*rail = -1;
	for (int i = 0; i < ep->npeers && id; i++) {
		struct sctpt_peer *p = ep->peers[i];
		if ((in ? p->assoc_in : p->assoc_out) == id)
			return p;
		for (int k = 0; k < p->nrails; k++) {
			if ((in ? p->rails[k].assoc_in : p->rails[k].assoc_out) == id) {
				*rail = k;
				return p;
			}
		}
	}
	return NULL;
}

static struct sctpt_peer *peer_by_assoc(struct sctpt_ep *ep, uint32_t id, int in)
{
	int rail;
	struct sctpt_peer *p = peer_by_assoc_rail(ep, id, in, &rail);
	return rail < 0 ? p : NULL;
}

static struct sctpt_peer *peer_of_conn(void *addr)
{
	if (!addr)
		return NULL;
	int kind = *(int *)addr;
	return kind == SCTPT_SEL_OUT || kind == SCTPT_SEL_MIRROR ? ((struct sctpt_sel *)addr)->peer :
									 NULL;
}

/* An association the peer initiated came up: find the peer through its (mirror) address. */
static struct sctpt_peer *learn_in_assoc(struct sctpt_ep *ep, sctp_assoc_t id, int *rail)
{
	struct sockaddr *addrs = NULL;
	struct sctpt_peer *p = NULL;
	struct sctpt_sel *sel = NULL;
	uint16_t port = 0;
	if (usrsctp_getpaddrs(ep->s_recv, id, &addrs) > 0 && addrs->sa_family == AF_CONN) {
		sel = ((struct sockaddr_conn *)addrs)->sconn_addr;
		p = peer_of_conn(sel);
		port = ntohs(((struct sockaddr_conn *)addrs)->sconn_port);
	}
	if (addrs)
		usrsctp_freepaddrs(addrs);
	*rail = p ? sel->rail : -1;
	if (p && *rail >= 0) {
		p->rails[*rail].assoc_in = (uint32_t)id;
		set_path_mtu(ep, ep->s_recv, id, sel, port);
	} else if (p) {
		p->assoc_in = (uint32_t)id;
		set_path_mtu(ep, ep->s_recv, id, &p->mirror, port);
	}
	return p;
}

/* Association changes of a rail: never the peer's fate by themselves. */
static void rail_assoc_change(struct sctpt_ep *ep, struct sctpt_peer *p, int rail, int in,
			      uint16_t state)
{
	struct sctpt_rail_st *r = &p->rails[rail];
	switch (state) {
	case SCTP_COMM_UP:
	case SCTP_RESTART:
		sctpt_on_rail(ep, p, r, in, SCTPT_EV_ASSOC_UP);
		break;
	case SCTP_COMM_LOST:
	case SCTP_CANT_STR_ASSOC:
	case SCTP_SHUTDOWN_COMP:
		sctpt_on_rail(ep, p, r, in, SCTPT_EV_ASSOC_DOWN);
		break;
	}
}

static void handle_notification(struct sctpt_ep *ep, const union sctp_notification *n, size_t len,
				int in)
{
	if (len < sizeof(n->sn_header))
		return;
	switch (n->sn_header.sn_type) {
	case SCTP_ASSOC_CHANGE: {
		const struct sctp_assoc_change *ac = &n->sn_assoc_change;
		uint32_t id = (uint32_t)ac->sac_assoc_id;
		struct sctpt_peer *p;
		int rail = -1;
		if (in && ac->sac_state == SCTP_COMM_UP) {
			p = learn_in_assoc(ep, ac->sac_assoc_id, &rail);
		} else {
			p = peer_by_assoc_rail(ep, id, in, &rail);
		}
		if (!p)
			return;
		if (rail >= 0) {
			rail_assoc_change(ep, p, rail, in, ac->sac_state);
			return;
		}
		switch (ac->sac_state) {
		case SCTP_COMM_UP:
			sctpt_on_assoc(ep, p, SCTPT_EV_ASSOC_UP, 0);
			break;
		case SCTP_RESTART:
			sctpt_on_assoc(ep, p, SCTPT_EV_ASSOC_RESTART, 0);
			break;
		case SCTP_COMM_LOST:
			sctpt_on_assoc(ep, p, SCTPT_EV_ASSOC_DOWN, -ETIMEDOUT);
			break;
		case SCTP_CANT_STR_ASSOC:
			sctpt_on_assoc(ep, p, SCTPT_EV_ASSOC_DOWN, -ECONNREFUSED);
			break;
		case SCTP_SHUTDOWN_COMP:
			sctpt_on_assoc(ep, p, SCTPT_EV_ASSOC_DOWN, -ECONNRESET);
			break;
		}
		break;
	}
	case SCTP_PEER_ADDR_CHANGE: {
		const struct sctp_paddr_change *pc = &n->sn_paddr_change;
		const struct sockaddr_conn *sc = (const struct sockaddr_conn *)&pc->spc_aaddr;
		struct sctpt_peer *p = sc->sconn_family == AF_CONN ? peer_of_conn(sc->sconn_addr) : NULL;
		if (!p || p->npaths == 0)
			return;
		struct sctpt_sel *sel = sc->sconn_addr;
		/* A rail has one path: SCTP calling it unreachable after path_max_retrans timeouts
		 * in a row happens under mere congestion, with nowhere to fail over to. Rails are
		 * failed by our probes (a path that stops answering) or by COMM_LOST instead. */
		if (sel->rail >= 0)
			break;
		/* SCTP gave up on the path the selector uses: move it to another one */
		if (pc->spc_state == SCTP_ADDR_UNREACHABLE) {
			int cur = atomic_load(&sel->cur);
			atomic_store(&p->paths[cur]->up, 0);
			atomic_store(&sel->cur, sctpt_path_next(p, cur));
		}
		break;
	}
	case SCTP_SEND_FAILED_EVENT: {
		struct sctpt_peer *p = peer_by_assoc(ep, (uint32_t)n->sn_send_failed_event.ssfe_assoc_id, in);
		if (p)
			sctpt_on_send_failed(ep, p, -EPIPE);
		break;
	}
	case SCTP_SHUTDOWN_EVENT: {
		struct sctpt_peer *p = peer_by_assoc(ep, (uint32_t)n->sn_shutdown_event.sse_assoc_id, in);
		if (p && in)
			sctpt_on_assoc(ep, p, SCTPT_EV_ASSOC_DOWN, -ECONNRESET);
		break;
	}
	default:
		break;
	}
}

static int us_events(struct sctpt_ep *ep)
{
	union {
		union sctp_notification n;
		uint8_t raw[4096];
	} u;
	int count = 0;
	for (int i = 0; i < 64; i++) {
		struct sctp_rcvinfo ri;
		socklen_t ilen = sizeof(ri), flen = 0;
		unsigned int itype = 0;
		int flags = 0;
		ssize_t n = usrsctp_recvv(ep->s_send, u.raw, sizeof(u.raw), NULL, &flen, &ri, &ilen,
					  &itype, &flags);
		if (n <= 0)
			break;
		count++;
		if (flags & MSG_NOTIFICATION)
			handle_notification(ep, &u.n, (size_t)n, 0);
		/* data on the send socket is not part of the protocol: dropped */
	}
	return count;
}

static int us_recv(struct sctpt_ep *ep, void *buf, size_t len, struct sctpt_peer **peer,
		   uint16_t *stream, int *eor)
{
	for (;;) {
		struct sockaddr_conn from;
		struct sctp_rcvinfo ri;
		socklen_t flen = sizeof(from), ilen = sizeof(ri);
		unsigned int itype = 0;
		int flags = 0;
		memset(&from, 0, sizeof(from));
		ssize_t n = usrsctp_recvv(ep->s_recv, buf, len, (struct sockaddr *)&from, &flen, &ri,
					  &ilen, &itype, &flags);
		if (n < 0)
			return (errno == EWOULDBLOCK || errno == EAGAIN) ? -EAGAIN : -errno;
		if (flags & MSG_NOTIFICATION) {
			/* notifications fit the staging buffer whole; never partial here */
			handle_notification(ep, buf, (size_t)n, 1);
			continue;
		}
		*peer = peer_of_conn(from.sconn_addr);
		*stream = itype == SCTP_RECVV_RCVINFO ? ri.rcv_sid : 0;
		*eor = (flags & MSG_EOR) != 0;
		return (int)n;
	}
}

/* An SCTP packet from the UDP layer: to the association its destination port names. */
static void us_feed(struct sctpt_ep *ep, struct sctpt_peer *p, int pi, const uint8_t *buf,
		    size_t len)
{
	register_peer(p);
	uint16_t dport = (uint16_t)(buf[2] << 8 | buf[3]);
	if (p->nrails) { /* rail i is path i */
		struct sctpt_rail_st *r = &p->rails[pi];
		if (dport == ep->rport)
			usrsctp_conninput(&r->mirror, buf, len, 0);
		else if (dport == ep->sport)
			usrsctp_conninput(&r->out, buf, len, 0);
		return;
	}
	if (dport == ep->rport) {
		atomic_store_explicit(&p->mirror.cur, pi, memory_order_relaxed);
		usrsctp_conninput(&p->mirror, buf, len, 0);
	} else if (dport == ep->sport) {
		usrsctp_conninput(&p->sel_out, buf, len, 0);
	}
}

static int us_input(struct sctpt_ep *ep)
{
	sctpt_udp_tx_begin(); /* SACKs and the data they clock out leave in batches */
	int count = sctpt_udp_input(ep, us_feed);
	/* timers after the input: a retransmission timer must not fire for data whose SACK
	 * is waiting in the socket while the caller was busy elsewhere */
	run_timers();
	sctpt_udp_tx_end();
	return count;
}

static int assoc_status(struct socket *so, uint32_t id, struct sctp_status *ss)
{
	socklen_t l = sizeof(*ss);
	memset(ss, 0, sizeof(*ss));
	ss->sstat_assoc_id = (sctp_assoc_t)id;
	return id ? usrsctp_getsockopt(so, IPPROTO_SCTP, SCTP_STATUS, ss, &l) : -1;
}

static int us_unacked(struct sctpt_ep *ep)
{
	struct sctp_status ss;
	int n = 0;
	for (int i = 0; i < ep->npeers; i++) {
		struct sctpt_peer *p = ep->peers[i];
		if (p->state == SCTPT_PEER_FAILED || p->state == SCTPT_PEER_CLOSED)
			continue; /* nothing more will be acknowledged */
		if (assoc_status(ep->s_send, p->assoc_out, &ss) == 0)
			n += ss.sstat_unackdata + ss.sstat_penddata;
		/* a striped peer's data is delivered once no rail keeps a copy: SCTP may still
		 * hold duplicates on a stalled rail, which need not arrive */
		for (int k = 0; k < p->nrails; k++)
			if (p->rails[k].live && !STAILQ_EMPTY(&p->rails[k].copies))
				n++;
	}
	return n;
}

static int us_peer_stats(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_peer_stats *st)
{
	struct sctp_status ss;
	uint32_t main_out = p->nrails ? p->rails[0].assoc_out : p->assoc_out;
	uint32_t main_in = p->nrails ? p->rails[0].assoc_in : p->assoc_in;
	if (assoc_status(ep->s_send, main_out, &ss) == 0) {
		st->sctp_state = ss.sstat_state;
		st->sctp_rwnd = ss.sstat_rwnd;
		st->sctp_unacked = ss.sstat_unackdata;
		st->sctp_pending = ss.sstat_penddata;
		st->sctp_rto_ms = ss.sstat_primary.spinfo_rto;
		st->sctp_cwnd = ss.sstat_primary.spinfo_cwnd;
	}
	if (assoc_status(ep->s_recv, main_in, &ss) == 0) {
		st->sctp_in_rwnd = ss.sstat_rwnd;
		st->sctp_in_unacked = ss.sstat_unackdata;
		st->sctp_in_pending = ss.sstat_penddata;
	}
	st->npaths = p->npaths;
	for (int i = 0; i < p->npaths; i++) {
		struct sctpt_path *path = p->paths[i];
		struct sctpt_path_stats *ps = &st->paths[i];
		struct sctp_paddrinfo pi;
		struct sockaddr_conn *sc = (struct sockaddr_conn *)&pi.spinfo_address;
		socklen_t l = sizeof(pi);
		char a[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &ep->udp[path->local].addr.sin_addr, a, sizeof(a));
		snprintf(ps->local, sizeof(ps->local), "%s:%u", a, ep->udp_port);
		inet_ntop(AF_INET, &path->remote.sin_addr, a, sizeof(a));
		snprintf(ps->remote, sizeof(ps->remote), "%s:%u", a, ntohs(path->remote.sin_port));
		ps->up = path->up;
		ps->primary = path->primary;
		ps->packets_out = atomic_load(&path->pkts_out);
		ps->bytes_out = atomic_load(&path->bytes_out);
		ps->packets_in = atomic_load(&path->pkts_in);
		ps->bytes_in = atomic_load(&path->bytes_in);
		ps->primary = atomic_load(&p->sel_out.cur) == i;
		if (p->nrails) {
			struct sctpt_rail_st *r = &p->rails[i];
			us_rail_info(ep, p, r);
			ps->up = path->up && r->live;
			ps->primary = i == 0;
			ps->rtt_us = r->srtt_us;
			ps->cwnd = r->cwnd;
			ps->frags_out = r->frags_out;
			ps->frag_bytes_out = r->frag_bytes_out;
			ps->unacked_bytes = r->held;
			ps->rate_bps = r->rate;
			continue;
		}
		memset(&pi, 0, sizeof(pi));
		pi.spinfo_assoc_id = (sctp_assoc_t)p->assoc_out;
		sc->sconn_family = AF_CONN;
		sc->sconn_port = htons(p->info.sctp_port);
		sc->sconn_addr = &p->sel_out;
		if (ps->primary && p->assoc_out &&
		    usrsctp_getsockopt(ep->s_send, IPPROTO_SCTP, SCTP_GET_PEER_ADDR_INFO, &pi, &l) == 0) {
			ps->rtt_us = pi.spinfo_srtt * 1000u;
			ps->cwnd = pi.spinfo_cwnd;
		}
	}
	return 0;
}

const struct sctpt_backend sctpt_backend_usrsctp = {
	.name = "usrsctp",
	.open = us_open,
	.close = us_close,
	.connect = us_connect,
	.rail_connect = us_rail_connect,
	.forget = us_forget,
	.send = us_send,
	.tx_begin = tx_begin,
	.tx_end = tx_end,
	.input = us_input,
	.keep = us_input, /* usrsctp delivers into its socket buffers, read by recv */
	.events = us_events,
	.recv = us_recv,
	.rail_held = us_rail_held,
	.rail_info = us_rail_info,
	.unacked = us_unacked,
	.peer_stats = us_peer_stats,
	.wait = sctpt_udp_wait,
};
