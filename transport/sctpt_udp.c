/*
 * The UDP datagram layer beneath every SCTP engine (RFC 6951's encapsulation): one socket per
 * local NIC on one port, the physical path of each packet (the engine's selector picks it;
 * sends that fail move it, CMT sprays), packets sent in UDP GSO batches and coalesced ones
 * read with UDP GRO and split, path probes, and the wait for input.
 */
#include "sctpt_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define RX_BATCH 8
#define RX_DGRAM 65536
#define TX_IOV (3 * SCTPT_TX_SEGS) /* a batched packet: headers, a payload, its padding */


/* Cuts nseg datagrams of seg bytes (the last may be shorter) out of iov[0..niov) for
 * sendmmsg: out needs room for niov + nseg pieces. */
static void slice(const struct iovec *iov, size_t len, size_t seg, int nseg, struct iovec *out,
		  struct mmsghdr *mm, const struct sockaddr_in *to)
{
	int k = 0, o = 0;
	size_t off = 0;
	for (int d = 0; d < nseg; d++) {
		size_t want = len - (size_t)d * seg < seg ? len - (size_t)d * seg : seg;
		int first = o;
		while (want) {
			size_t c = iov[k].iov_len - off < want ? iov[k].iov_len - off : want;
			out[o++] = (struct iovec){(uint8_t *)iov[k].iov_base + off, c};
			off += c;
			want -= c;
			if (off == iov[k].iov_len) {
				k++;
				off = 0;
			}
		}
		mm[d].msg_hdr = (struct msghdr){.msg_name = (void *)to, .msg_namelen = sizeof(*to),
						.msg_iov = &out[first], .msg_iovlen = (size_t)(o - first)};
	}
}

/*
 * Sends the len bytes gathered from iov[0..niov) to path as datagrams of seg bytes each (the
 * last may be shorter): one sendmsg with UDP GSO (UDP_SEGMENT), so the stack is walked once
 * per batch while the wire still carries datagrams of the path MTU; sendmmsg where the kernel
 * refuses GSO (no checksum offload on the device, an old kernel). 0 or -errno of the send.
 */
static int path_send(struct sctpt_path *path, const struct iovec *iov, int niov, size_t len,
		     size_t seg, int nseg)
{
	struct sctpt_udp *u = &path->peer->ep->udp[path->local];
	const struct sockaddr *to = (const struct sockaddr *)&path->remote;
	ssize_t n = -1;
	int sent = nseg;
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = {.msg_name = (void *)to, .msg_namelen = sizeof(path->remote),
			    .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)niov};
	if (nseg == 1) {
		n = sendmsg(u->fd, &mh, MSG_DONTWAIT);
	} else if (atomic_load_explicit(&u->gso, memory_order_relaxed)) {
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		uint16_t gso = (uint16_t)seg;
		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(gso));
		memcpy(CMSG_DATA(cm), &gso, sizeof(gso));
		n = sendmsg(u->fd, &mh, MSG_DONTWAIT);
		if (n < 0 && (errno == EIO || errno == EINVAL || errno == ENOPROTOOPT))
			atomic_store(&u->gso, 0); /* refused, not failed: sendmmsg from now on */
	}
	if (nseg > 1 && !atomic_load_explicit(&u->gso, memory_order_relaxed)) {
		struct mmsghdr mm[SCTPT_TX_SEGS];
		struct iovec pieces[TX_IOV + SCTPT_TX_SEGS];
		if (niov > TX_IOV)
			return -EINVAL;
		slice(iov, len, seg, nseg, pieces, mm, &path->remote);
		int k = sendmmsg(u->fd, mm, (unsigned)nseg, MSG_DONTWAIT);
		n = k;
		sent = k > 0 ? k : 0;
	}
	if (n < 0) {
		atomic_store(&path->send_errno, errno);
		return -errno;
	}
	atomic_fetch_add_explicit(&path->pkts_out, (uint64_t)sent, memory_order_relaxed);
	atomic_fetch_add_explicit(&path->bytes_out, len, memory_order_relaxed);
	atomic_fetch_add_explicit(&u->bytes_out, len, memory_order_relaxed);
	return 0;
}

#define OUTQ_ASK_US 20 /* while over the limit, how often the kernel is asked again */

int sctpt_udp_backlogged(struct sctpt_sel *sel, size_t limit, uint64_t now_us)
{
	struct sctpt_peer *p = sel->peer;
	int cur = atomic_load_explicit(&sel->cur, memory_order_relaxed);
	if (cur < 0 || cur >= p->npaths)
		return 0;
	struct sctpt_udp *u = &p->ep->udp[p->paths[cur]->local];
	uint64_t sent = atomic_load_explicit(&u->bytes_out, memory_order_relaxed);
	uint64_t q = atomic_load_explicit(&u->outq, memory_order_relaxed);
	/* a datagram takes about twice its payload in buffer terms at Ethernet MTUs */
	if (q + 2 * (sent - atomic_load_explicit(&u->outq_sent, memory_order_relaxed)) <= limit)
		return 0;
	if (now_us - atomic_load_explicit(&u->outq_us, memory_order_relaxed) < OUTQ_ASK_US)
		return q > limit;
	int n = 0;
	if (ioctl(u->fd, SIOCOUTQ, &n) != 0 || n < 0)
		n = 0;
	atomic_store_explicit(&u->outq, (uint64_t)n, memory_order_relaxed);
	atomic_store_explicit(&u->outq_sent, sent, memory_order_relaxed);
	atomic_store_explicit(&u->outq_us, now_us, memory_order_relaxed);
	return (size_t)n > limit;
}

/* The next path after from that is up, else simply the next one. */
int sctpt_path_next(struct sctpt_peer *p, int from)
{
	for (int k = 1; k <= p->npaths; k++) {
		int i = (from + k) % p->npaths;
		if (atomic_load_explicit(&p->paths[i]->up, memory_order_relaxed))
			return i;
	}
	return (from + 1) % p->npaths;
}

/* Packets of selector sel on its path i. A rail keeps to its own path (SCTP retransmits what
 * is lost); other selectors move to the next path when a NIC cannot send there. */
static void sel_send(struct sctpt_sel *sel, int i, const struct iovec *iov, int niov, size_t len,
		     size_t seg, int nseg)
{
	struct sctpt_peer *p = sel->peer;
	for (int k = 0; k < (sel->rail >= 0 ? 1 : p->npaths); k++) {
		int rc = path_send(p->paths[i], iov, niov, len, seg, nseg);
		if (rc == 0 || rc == -EAGAIN || rc == -ENOBUFS || sel->rail >= 0)
			return; /* a dropped datagram is SCTP's to retransmit */
		atomic_store(&p->paths[i]->up, 0); /* this NIC cannot send there: fail over */
		i = sctpt_path_next(p, i);
		atomic_store(&sel->cur, i);
	}
}

/*
 * Transmit batching. usrsctp hands conn_output one packet at a time, and at Ethernet MTUs the
 * kernel's cost per datagram (route, qdisc, device, softirq) is most of a transfer's CPU.
 * Between sctpt_udp_tx_begin and _end (around the progress engine's calls into the engine)
 * packets are copied into per-thread slots, one per (selector, path), and each slot goes out
 * in one path_send when it is full, when a packet does not fit its segment size, or at the
 * outermost _end. Packets of one selector and path keep their order; across slots there is
 * no order to keep (other associations or other paths). Outside a bracket (usrsctp's own
 * thread, close) packets go out at once.
 */
#define TX_BYTES 65000 /* UDP payload of one GSO send (the IPv4 length field's limit) */
#define TX_SLOTS 8     /* data and SACKs on four rails or to four peers at a time */

/* A batch's datagrams are the bytes of iov[] in order: pieces of buf (packets built or copied
 * there) and payloads the engine left where they are (sctpt_udp_commitv). */
struct txslot {
	struct sctpt_sel *sel; /* NULL: empty */
	int path, nseg, niov;
	int ext;               /* iov[] points outside buf */
	size_t seg, len, blen; /* segment size, bytes batched, of them in buf */
	struct iovec iov[TX_IOV];
	uint8_t buf[TX_BYTES];
};

struct txbatch {
	int depth;
	unsigned victim; /* the slot to flush when all are taken */
	int ext;         /* slots with iov[] outside their buf */
	struct txslot slot[TX_SLOTS];
};

static pthread_key_t g_tx_key;
static pthread_once_t g_tx_once = PTHREAD_ONCE_INIT;
/* initial-exec: inside a plugin (a dlopen'ed .so) every access would otherwise be a call to
 * __tls_get_addr, several per packet; two pointers fit the static TLS glibc keeps for that */
#define TLS_IE __attribute__((tls_model("initial-exec")))
static __thread struct txbatch *t_tx TLS_IE;

static void tx_key_make(void)
{
	pthread_key_create(&g_tx_key, free);
}

static void slot_flush(struct txbatch *b, struct txslot *s)
{
	if (!s->sel)
		return;
	if (s->nseg) /* a slot reserved for a packet that was not built holds nothing */
		sel_send(s->sel, s->path, s->iov, s->niov, s->len, s->seg, s->nseg);
	s->sel = NULL;
	s->len = s->blen = 0;
	s->nseg = s->niov = 0;
	b->ext -= s->ext;
	s->ext = 0;
}

/* Appends n bytes at p to the datagrams of s. */
static void slot_put(struct txslot *s, const void *p, size_t n)
{
	struct iovec *last = s->niov ? &s->iov[s->niov - 1] : NULL;
	if (!n)
		return;
	if (last && (const uint8_t *)last->iov_base + last->iov_len == (const uint8_t *)p)
		last->iov_len += n;
	else
		s->iov[s->niov++] = (struct iovec){(void *)p, n};
	s->len += n;
}

/* Appends n bytes of s's buf from blen on (written there already) to its datagrams. */
static void slot_put_buf(struct txslot *s, size_t n)
{
	slot_put(s, s->buf + s->blen, n);
	s->blen += n;
}

void sctpt_udp_tx_begin(void)
{
	if (!t_tx) {
		pthread_once(&g_tx_once, tx_key_make);
		t_tx = calloc(1, sizeof(*t_tx));
		if (!t_tx)
			return; /* packets go out one by one */
		pthread_setspecific(g_tx_key, t_tx); /* freed when the thread exits */
	}
	t_tx->depth++;
}

void sctpt_udp_tx_flush(void)
{
	struct txbatch *b = t_tx;
	for (int k = 0; b && k < TX_SLOTS; k++)
		slot_flush(b, &b->slot[k]);
}

void sctpt_udp_tx_end(void)
{
	struct txbatch *b = t_tx;
	if (b && --b->depth == 0)
		sctpt_udp_tx_flush();
}

void sctpt_udp_tx_unref(void)
{
	struct txbatch *b = t_tx;
	for (int k = 0; b && b->ext && k < TX_SLOTS; k++)
		if (b->slot[k].ext)
			slot_flush(b, &b->slot[k]);
}

/* The slot batching packets to sel's peer (rail) on path i, or NULL; *empty gets the first
 * free slot. Both directions' associations share it: a SACK leaves in the same send as the
 * reply it waited for. */
static struct txslot *slot_find(struct txbatch *b, struct sctpt_sel *sel, int i,
				struct txslot **empty)
{
	for (int k = 0; k < TX_SLOTS; k++) {
		struct txslot *t = &b->slot[k];
		if (t->sel && t->path == i && t->sel->peer == sel->peer && t->sel->rail == sel->rail)
			return t;
		if (empty && !t->sel && !*empty)
			*empty = t;
	}
	return NULL;
}

/* The slot a packet of up to len bytes joins: sel's own on path i if the packet can be
 * appended to it (every segment so far full-sized, this one no larger, room left), else that
 * one flushed, a free one, or the next victim flushed; seg is a new slot's segment size. */
static struct txslot *slot_take(struct txbatch *b, struct sctpt_sel *sel, int i, size_t len,
				size_t seg)
{
	struct txslot *empty = NULL, *s = slot_find(b, sel, i, &empty);
	if (s && !(s->len == s->seg * (size_t)s->nseg && len <= s->seg &&
		   s->len + len <= TX_BYTES && s->nseg < SCTPT_TX_SEGS))
		slot_flush(b, s);
	if (!s && !(s = empty)) {
		s = &b->slot[b->victim++ % TX_SLOTS];
		slot_flush(b, s);
	}
	if (!s->sel) {
		s->sel = sel;
		s->path = i;
		s->seg = seg;
	}
	return s;
}

/* What is batched for sel's peer (rail) on path i leaves before a packet sent by itself. */
static void flush_ahead(struct txbatch *b, struct sctpt_sel *sel, int i)
{
	struct txslot *s = slot_find(b, sel, i, NULL);
	if (s)
		slot_flush(b, s);
}

/* Queues a packet of sel on path i behind those already batched for them, or with alone,
 * sends it by itself after them: packets too big to batch with another (loopback's 64000
 * bytes: no copy), and packets larger than the NIC's datagram (usrsctp sends a few of 1476
 * bytes at a 1472-byte path MTU: chunks it sized before the MTU was set), for IP to
 * fragment: UDP GSO would refuse the whole batch (EMSGSIZE), and SCTP would resend it that
 * way until it gave up. */
static void tx_add(struct txbatch *b, struct sctpt_sel *sel, int i, const void *buf, size_t len,
		   int alone)
{
	if (alone) {
		flush_ahead(b, sel, i);
		struct iovec iov = {(void *)buf, len};
		sel_send(sel, i, &iov, 1, len, len, 1);
		return;
	}
	struct txslot *s = slot_take(b, sel, i, len, len);
	memcpy(s->buf + s->blen, buf, len);
	slot_put_buf(s, len);
	s->nseg++;
}

static int udp_bind_all(struct sctpt_ep *ep, uint16_t port)
{
	for (int i = 0; i < ep->nudp; i++) {
		struct sockaddr_in a = ep->udp[i].addr;
		a.sin_port = htons(port);
		if (bind(ep->udp[i].fd, (struct sockaddr *)&a, sizeof(a)) != 0)
			return -errno;
		if (port == 0) {
			socklen_t l = sizeof(a);
			getsockname(ep->udp[i].fd, (struct sockaddr *)&a, &l);
			port = ntohs(a.sin_port);
		}
	}
	ep->udp_port = port;
	return 0;
}

int sctpt_udp_open(struct sctpt_ep *ep)
{
	const struct sctpt_config *c = &ep->cfg;
	int span = c->udp_port_max >= c->udp_port_min && c->udp_port_min ?
			   c->udp_port_max - c->udp_port_min + 1 : 0;
	int tries = c->udp_port ? 1 : span ? span : 32;
	int start = span ? (int)((unsigned)getpid() % (unsigned)span) : 0;
	int rc = -EADDRINUSE;
	for (int t = 0; t < tries; t++) {
		for (int i = 0; i < ep->nudp; i++) {
			if (ep->udp[i].fd >= 0)
				close(ep->udp[i].fd);
			ep->udp[i].fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			if (ep->udp[i].fd < 0)
				return sctpt_err(-errno, "UDP socket: %s", strerror(errno));
			int buf = 8 << 20, one = 1;
			/* coalesced datagrams (a GSO send that crossed veths and bridges whole, or
			 * NIC GRO) come up in one read; us_input splits them */
			setsockopt(ep->udp[i].fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
			atomic_store(&ep->udp[i].gso, 1);
			if (setsockopt(ep->udp[i].fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) != 0)
				setsockopt(ep->udp[i].fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
			if (setsockopt(ep->udp[i].fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) != 0)
				setsockopt(ep->udp[i].fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
		}
		uint16_t port = c->udp_port ? c->udp_port :
				span ? (uint16_t)(c->udp_port_min + (start + t) % span) : 0;
		rc = udp_bind_all(ep, port);
		if (rc == 0)
			return 0;
	}
	char a[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &ep->udp[0].addr.sin_addr, a, sizeof(a));
	return sctpt_err(rc, "cannot bind UDP encapsulation port %u%s on %s (+%d more): %s",
			 c->udp_port, c->udp_port ? "" : " (any free)", a, ep->nudp - 1,
			 strerror(-rc));
}


static void probe_send(struct sctpt_ep *ep, int local, const struct sockaddr_in *to, int type)
{
	uint8_t b[SCTPT_PROBE_LEN];
	sctpt_probe_encode(type, b);
	sendto(ep->udp[local].fd, b, sizeof(b), MSG_DONTWAIT, (const struct sockaddr *)to,
	       sizeof(*to));
}

static void path_alive(struct sctpt_path *path, uint64_t now)
{
	path->last_rx_ms = now;
	path->probes_unanswered = 0;
	atomic_store(&path->up, 1);
}

/* A packet for our receive socket from a peer nobody introduced (cfg.accept_unknown): its
 * card follows from the UDP source and the SCTP source port, as every endpoint sends from
 * port rport - 1 (us_open). */
static struct sctpt_peer *adopt_peer(struct sctpt_ep *ep, const uint8_t *buf,
				     const struct sockaddr_in *from, int *pi)
{
	uint16_t sport = (uint16_t)(buf[0] << 8 | buf[1]), dport = (uint16_t)(buf[2] << 8 | buf[3]);
	char card[64], ip[INET_ADDRSTRLEN];
	if (dport != ep->rport || sport == 0 || sport == 65535 ||
	    !inet_ntop(AF_INET, &from->sin_addr, ip, sizeof(ip)))
		return NULL;
	snprintf(card, sizeof(card), "sctpt1 %u %u %s", ntohs(from->sin_port), sport + 1u, ip);
	if (!sctpt_peer_adopt(ep, card))
		return NULL;
	return sctpt_peer_by_udp(ep, from, pi);
}


/* Five times per heartbeat interval, each path of a peer we talk to gets a probe; a path
 * whose probes go unanswered path_max_retrans times in a row is down. The preferred path
 * (the first) is taken back once it answers again. */
static void probe_paths(struct sctpt_ep *ep, uint64_t now)
{
	uint64_t iv = (uint64_t)ep->cfg.hb_interval_ms / 5;
	if (iv < 20)
		iv = 20;
	for (int i = 0; i < ep->npeers; i++) {
		struct sctpt_peer *p = ep->peers[i];
		if (!p->registered || (p->npaths < 2 && !p->nrails) || p->state == SCTPT_PEER_FAILED)
			continue;
		for (int k = 0; k < p->npaths; k++) {
			struct sctpt_path *path = p->paths[k];
			if (now - path->probe_sent_ms < iv)
				continue;
			if (path->probe_sent_ms > path->last_rx_ms &&
			    ++path->probes_unanswered >= ep->cfg.path_max_retrans) {
				atomic_store(&path->up, 0);
				for (int s = 0; s < 2 && !p->nrails; s++) {
					struct sctpt_sel *sel = s ? &p->mirror : &p->sel_out;
					if (atomic_load(&sel->cur) == k)
						atomic_store(&sel->cur, sctpt_path_next(p, k));
				}
			}
			path->probe_sent_ms = now;
			probe_send(ep, path->local, &path->remote, SCTPT_PROBE_PING);
		}
		if (!p->nrails && atomic_load(&p->paths[0]->up) && atomic_load(&p->sel_out.cur) != 0 &&
		    p->paths[0]->probes_unanswered == 0)
			atomic_store(&p->sel_out.cur, 0);
	}
}

/* The segment size of a coalesced datagram (UDP_GRO), or 0. */
static size_t gro_size(struct msghdr *mh)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int v;
			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			return v > 0 ? (size_t)v : 0;
		}
	}
	return 0;
}

/* The path of sel's next packet: its own, or the next live one when spraying (cmt). */
static int out_path(struct sctpt_sel *sel)
{
	struct sctpt_peer *p = sel->peer;
	int i = atomic_load_explicit(&sel->cur, memory_order_relaxed);
	if (sel->rail < 0 && sel->kind == SCTPT_SEL_OUT && p->ep->cfg.cmt)
		i = sctpt_path_next(p, (int)(atomic_fetch_add(&sel->rr, 1) % (unsigned)p->npaths));
	return i;
}

/*
 * A packet of the engine for selector sel (an association's address): on the selector's
 * path, or sprayed over the live ones (cmt); batched inside sctpt_udp_tx_begin/_end.
 */
void sctpt_udp_output(struct sctpt_sel *sel, const void *buf, size_t len)
{
	struct sctpt_peer *p = sel->peer;
	int n = p->npaths;
	if (n == 0)
		return;
	int i = out_path(sel); /* on its path, or sprayed over the live ones */
	struct iovec iov = {(void *)buf, len};
	struct txbatch *b = t_tx;
	if (b && b->depth > 0)
		tx_add(b, sel, i, buf, len,
		       2 * len > TX_BYTES || len + 28 > (size_t)p->ep->udp[p->paths[i]->local].mtu);
	else
		sel_send(sel, i, &iov, 1, len, len, 1);
}

/* Building a packet in place in the batch: where sctpt_udp_reserve put it. */
static __thread struct txslot *t_res TLS_IE;

void *sctpt_udp_reserve(struct sctpt_sel *sel, size_t max)
{
	struct sctpt_peer *p = sel->peer;
	struct txbatch *b = t_tx;
	if (!b || b->depth == 0 || p->npaths == 0 || 2 * max > TX_BYTES)
		return NULL; /* no batch, or a packet that goes alone anyway */
	int i = out_path(sel);
	if (max + 28 > (size_t)p->ep->udp[p->paths[i]->local].mtu)
		return NULL;
	struct txslot *s = slot_take(b, sel, i, max, 0);
	t_res = s;
	return s->buf + s->blen;
}

void sctpt_udp_commit(struct sctpt_sel *sel, size_t len)
{
	sctpt_udp_commitv(sel, len, NULL, 0, 0);
}

void sctpt_udp_commitv(struct sctpt_sel *sel, size_t head, const void *payload, size_t plen,
		       size_t zeros)
{
	struct txslot *s = t_res;
	(void)sel;
	t_res = NULL;
	if (!s || !head) {
		if (s && s->nseg == 0)
			s->sel = NULL; /* reserved for nothing: free again */
		return;
	}
	if (s->nseg == 0)
		s->seg = head + plen + zeros; /* the first packet sets the batch's segment size */
	slot_put_buf(s, head);
	if (plen) {
		slot_put(s, payload, plen);
		t_tx->ext += !s->ext;
		s->ext = 1;
	}
	memset(s->buf + s->blen, 0, zeros);
	slot_put_buf(s, zeros);
	s->nseg++;
}

void sctpt_udp_outputv(struct sctpt_sel *sel, const struct iovec *iov, int n)
{
	struct sctpt_peer *p = sel->peer;
	if (p->npaths == 0)
		return;
	int i = out_path(sel);
	size_t len = 0;
	struct txbatch *b = t_tx;
	if (b && b->depth > 0)
		flush_ahead(b, sel, i);
	for (int k = 0; k < n; k++)
		len += iov[k].iov_len;
	sel_send(sel, i, iov, n, len, len, 1);
}

void sctpt_udp_close(struct sctpt_ep *ep)
{
	for (int i = 0; i < ep->nudp; i++)
		if (ep->udp[i].fd >= 0)
			close(ep->udp[i].fd);
	ep->nudp = 0;
}

/* A datagram, or GRO's run of segments of seg bytes from one sender: the peer is looked up
 * and the path counted once for the run. */
static int feed(struct sctpt_ep *ep, int local, const uint8_t *buf, size_t len, size_t seg,
		const struct sockaddr_in *from, uint64_t now, sctpt_udp_deliver_fn deliver)
{
	int pi = -1, n = 0;
	struct sctpt_peer *p = sctpt_peer_by_udp(ep, from, &pi);
	if (!p && ep->cfg.accept_unknown && len >= 12)
		p = adopt_peer(ep, buf, from, &pi);
	if (!p || pi < 0)
		return 0; /* a peer without a card only sends after its card is known here */
	struct sctpt_path *path = p->paths[pi];
	uint64_t pkts = 0, bytes = 0;
	int alive = 0;
	for (size_t off = 0; off < len; off += seg, n++) {
		const uint8_t *d = buf + off;
		size_t k = len - off < seg ? len - off : seg;
		if (k < 12)
			continue; /* not even an SCTP common header */
		if (SCTPT_IS_PROBE(d)) {
			int type = sctpt_probe_decode(d, k);
			if (type < 0)
				continue;
			if (type == SCTPT_PROBE_PING)
				probe_send(ep, local, from, SCTPT_PROBE_PONG);
			alive = 1;
			continue;
		}
		pkts++;
		bytes += k;
		deliver(ep, p, pi, d, k);
	}
	if (pkts) {
		atomic_fetch_add_explicit(&path->pkts_in, pkts, memory_order_relaxed);
		atomic_fetch_add_explicit(&path->bytes_in, bytes, memory_order_relaxed);
	}
	if (pkts || alive)
		path_alive(path, now);
	return n;
}

int sctpt_udp_input(struct sctpt_ep *ep, sctpt_udp_deliver_fn deliver)
{
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];
	struct sockaddr_in from[RX_BATCH];
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl[RX_BATCH];
	int count = 0;
	if (!ep->rx_dgrams && !(ep->rx_dgrams = malloc((size_t)RX_BATCH * RX_DGRAM)))
		return 0; /* nothing read: SCTP retransmits */
	uint8_t *bufs = ep->rx_dgrams;
	uint64_t now = sctpt_now_ms();
	probe_paths(ep, now);
	for (int s = 0; s < ep->nudp; s++) {
		for (int round = 0; round < 8; round++) {
			for (int i = 0; i < RX_BATCH; i++) {
				iov[i].iov_base = bufs + (size_t)i * RX_DGRAM;
				iov[i].iov_len = RX_DGRAM;
				memset(&msgs[i].msg_hdr, 0, sizeof(msgs[i].msg_hdr));
				msgs[i].msg_hdr.msg_iov = &iov[i];
				msgs[i].msg_hdr.msg_iovlen = 1;
				msgs[i].msg_hdr.msg_name = &from[i];
				msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
				msgs[i].msg_hdr.msg_control = ctl[i].buf;
				msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i].buf);
			}
			int n = recvmmsg(ep->udp[s].fd, msgs, RX_BATCH, MSG_DONTWAIT, NULL);
			if (n <= 0)
				break;
			for (int i = 0; i < n; i++) {
				const uint8_t *d = iov[i].iov_base;
				size_t len = msgs[i].msg_len, seg = gro_size(&msgs[i].msg_hdr);
				if (!seg || seg > len)
					seg = len;
				if (len)
					count += feed(ep, s, d, len, seg, &from[i], now, deliver);
			}
			if (n < RX_BATCH)
				break;
		}
	}
	return count;
}

int sctpt_udp_wait(struct sctpt_ep *ep, int timeout_ms)
{
	struct pollfd pfd[SCTPT_MAX_ADDRS + 1];
	int n = 0;
	for (int i = 0; i < ep->nudp; i++) {
		pfd[n].fd = ep->udp[i].fd;
		pfd[n].events = POLLIN;
		pfd[n++].revents = 0;
	}
	if (ep->wait_fd >= 0) /* the same-host peers' tripwires and sockets */
		pfd[n++] = (struct pollfd){.fd = ep->wait_fd, .events = POLLIN};
	/* usrsctp's timers tick at most 10 ms apart while we sleep */
	int t = timeout_ms < 0 || timeout_ms > 10 ? 10 : timeout_ms;
	return poll(pfd, (nfds_t)n, t);
}
