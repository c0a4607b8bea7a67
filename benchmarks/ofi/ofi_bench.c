/*
 * ofi_bench: latency, bandwidth and message rate of one libfabric provider between two
 * processes (forked; names swapped over a socketpair), on tagged messages (fi_tsend/fi_trecv,
 * FI_EP_RDM), busy-polling fi_cq_read, the way fabtests' fi_rdm_tagged_pingpong and
 * fi_rdm_tagged_bw measure (benchmark_shared.c) with OSU's iteration counts:
 *   lat: ping-pong with the receive posted before the message can arrive, one-way
 *        microseconds = time of LOOP round trips / 2 LOOP after SKIP warm-up round trips
 *        (10000/100, 1000/10 above 8 KiB); 0 B .. max; messages up to the provider's
 *        inject size go out with fi_tinject (as fabtests do)
 *   bw:  a window of 64 fi_tsend, then a 4-byte ack once the receiver has all 64; MB/s
 *        (10^6 bytes) over LOOP windows after SKIP (100/10, 20/2 above 8 KiB); 1 B .. max
 *   mr:  the bw loop's messages per second for 1 B .. 4 KiB
 *   idle: context switches per second of each process (all its threads; voluntary, and
 *        involuntary: preemption by others), 5 s (times SCALE, at least 1 s) while the
 *        application is away (sleeps), then as long while it busy-polls with nothing to
 *        come, after one round trip (the peer is up): what a provider's own threads cost
 * Usage: ofi_bench -p PROVIDER [-t lat,bw,mr,idle] [-z MIN] [-m MAX] [-q SCALE] [-n NS0,NS1]
 *                  [-s A0,A1] [-c C0,C1] [-T domain|safe] [-M]
 *   -z, -m: the sizes, MIN (0) to MAX (4 MiB) by powers of two
 *   -c: process i runs on CPU Ci only (C0,C1): a loaded machine cannot put both on one CPU
 *   -n: process i enters network namespace NSi (/run/netns/NSi) first: two hosts on one
 *   -s: process i asks fi_getinfo for source address Ai (node, FI_SOURCE)
 *   -T: the threading model asked for (FI_THREAD_DOMAIN, as Open MPI's mtl ofi without
 *       MPI_THREAD_MULTIPLE; safe: FI_THREAD_SAFE, as with it)
 *   -M: lat, bw and mr report the median of the loop cut into pieces (100 round trips, one
 *       window) instead of the mean: on a machine shared with other work the mean follows
 *       whoever else got the CPU, the median much less
 * Two references run the same loops without libfabric, to tell what a provider adds from
 * what lies beneath it:
 *   -p core: the SCTP core alone (transport/sctpt.h), used as the provider uses it -- a
 *     polled handler (sctpt_progress, sctpt_cq_read), each message copied once into the
 *     receive buffer and released -- on its default engine, SCTPT_SHM=0 unless set; -s Ai
 *     is the address the core binds;
 *   -p socket: plain TCP sockets (TCP_NODELAY, non-blocking, busy-polled), an 8-byte
 *     (length, tag) prefix per message: the kernel's floor under tcp;ofi_rxm.
 * Prints "<test> <size> <value>" lines.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_cm.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sctpt.h"

#define WINDOW 64
#define LARGE 8192
#define TAG_DATA 1
#define TAG_ACK 2

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *txcq, *rxcq;
static struct fid_ep *ep;
static struct fid_mr *mr;
static void *desc;
static fi_addr_t peer;
static char *sbuf, *rbuf;
static struct fi_context2 ctx[2 * WINDOW + 2];
static enum fi_threading threading = FI_THREAD_DOMAIN;
static int use_median;
static double pieces[10000 / 100 + 1024]; /* the loop's pieces: seconds per unit of work */
static int npieces;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median piece (seconds per unit), or mean when -M is not given or nothing was cut. */
static double per_unit(double mean)
{
	if (!use_median || npieces == 0)
		return mean;
	qsort(pieces, (size_t)npieces, sizeof(pieces[0]), cmp_double);
	return npieces % 2 ? pieces[npieces / 2]
			   : (pieces[npieces / 2 - 1] + pieces[npieces / 2]) / 2;
}

#define TRY(call)                                                                             \
	do {                                                                                  \
		int rc_ = (int)(call);                                                        \
		if (rc_) {                                                                    \
			fprintf(stderr, "%s: %s\n", #call, fi_strerror(-rc_));                \
			exit(1);                                                              \
		}                                                                             \
	} while (0)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void xfer(int fd, void *buf, size_t len, int out)
{
	for (size_t done = 0; done < len;) {
		ssize_t r = out ? write(fd, (char *)buf + done, len - done)
				: read(fd, (char *)buf + done, len - done);
		if (r <= 0)
			exit(1);
		done += (size_t)r;
	}
}

static void alloc_bufs(size_t max)
{
	sbuf = aligned_alloc(4096, max + 4096);
	rbuf = aligned_alloc(4096, max + 4096);
	if (!sbuf || !rbuf)
		exit(1);
	memset(sbuf, 'a', max + 4096);
	memset(rbuf, 'b', max + 4096);
}

/* Swaps names with the other process over the socketpair; returns the other's length. */
static size_t swap_names(int fd, void *name, size_t len, void *other, size_t cap)
{
	xfer(fd, &len, sizeof(len), 1);
	xfer(fd, name, len, 1);
	xfer(fd, &len, sizeof(len), 0);
	if (len > cap)
		exit(1);
	xfer(fd, other, len, 0);
	return len;
}

/*
 * What the loops need from a transport. Receives are posted before their message can
 * arrive (slot: which context), sends are counted by reap_tx, send1 is the ping-pong's send
 * (inject where the transport has it, else send and wait for its completion).
 */
struct xport {
	void (*open)(const char *prov, const char *src, size_t max, int fd);
	void (*close)(void);
	void (*post_recv)(size_t size, uint64_t tag, int slot);
	void (*send)(size_t size, uint64_t tag, int slot);
	void (*send1)(size_t size, uint64_t tag);
	void (*reap_rx)(int n);
	void (*reap_tx)(int n);
	void (*poll)(void);            /* looks once for anything that came */
};

/* ---- libfabric ---- */

static void lf_open(const char *prov, const char *src, size_t max, int fd)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
	struct fi_av_attr ava = {.type = FI_AV_MAP};
	char name[256], other[256];
	size_t len = sizeof(name);

	h->caps = FI_TAGGED | FI_MSG;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->domain_attr->threading = threading;
	h->fabric_attr->prov_name = strdup(prov);
	TRY(fi_getinfo(FI_VERSION(1, 17), src, NULL, src ? FI_SOURCE : 0, h, &info));
	fi_freeinfo(h);
	TRY(fi_fabric(info->fabric_attr, &fabric, NULL));
	TRY(fi_domain(fabric, info, &domain, NULL));
	TRY(fi_av_open(domain, &ava, &av, NULL));
	TRY(fi_cq_open(domain, &cqa, &txcq, NULL));
	TRY(fi_cq_open(domain, &cqa, &rxcq, NULL));
	TRY(fi_endpoint(domain, info, &ep, NULL));
	TRY(fi_ep_bind(ep, &av->fid, 0));
	TRY(fi_ep_bind(ep, &txcq->fid, FI_TRANSMIT));
	TRY(fi_ep_bind(ep, &rxcq->fid, FI_RECV));
	TRY(fi_enable(ep));
	alloc_bufs(max);
	if (info->domain_attr->mr_mode & FI_MR_LOCAL) {
		/* one registration over both buffers' pages would do; two keep it simple */
		static struct fid_mr *rmr;
		TRY(fi_mr_reg(domain, sbuf, max + 4096, FI_SEND | FI_RECV, 0, 1, 0, &mr, NULL));
		TRY(fi_mr_reg(domain, rbuf, max + 4096, FI_SEND | FI_RECV, 0, 2, 0, &rmr, NULL));
		desc = fi_mr_desc(mr);
	}
	TRY(fi_getname(&ep->fid, name, &len));
	swap_names(fd, name, len, other, sizeof(other));
	if (fi_av_insert(av, other, 1, &peer, 0, NULL) != 1)
		exit(1);
}

static void lf_close(void)
{
	fi_close(&ep->fid);
	if (mr)
		fi_close(&mr->fid);
	fi_close(&txcq->fid);
	fi_close(&rxcq->fid);
	fi_close(&av->fid);
	fi_close(&domain->fid);
	fi_close(&fabric->fid);
	fi_freeinfo(info);
}

/* Waits for n completions on cq. */
static void reap(struct fid_cq *cq, int n)
{
	struct fi_cq_entry e[16];

	while (n > 0) {
		ssize_t k = fi_cq_read(cq, e, n < 16 ? (size_t)n : 16);
		if (k > 0) {
			n -= (int)k;
		} else if (k == -FI_EAVAIL) {
			struct fi_cq_err_entry err = {0};
			fi_cq_readerr(cq, &err, 0);
			fprintf(stderr, "completion error: %s\n", fi_strerror(err.err));
			exit(1);
		} else if (k != -FI_EAGAIN) {
			fprintf(stderr, "fi_cq_read: %s\n", fi_strerror((int)-k));
			exit(1);
		}
	}
}

#define POST(call, cq)                                                                        \
	do {                                                                                  \
		ssize_t rc_;                                                                  \
		while ((rc_ = (call)) == -FI_EAGAIN)                                          \
			fi_cq_read(cq, NULL, 0);                                              \
		if (rc_) {                                                                    \
			fprintf(stderr, "%s: %s\n", #call, fi_strerror((int)-rc_));           \
			exit(1);                                                              \
		}                                                                             \
	} while (0)

static void lf_post_recv(size_t size, uint64_t tag, int slot)
{
	POST(fi_trecv(ep, rbuf, size, desc, FI_ADDR_UNSPEC, tag, 0, &ctx[slot]), rxcq);
}

static void lf_send(size_t size, uint64_t tag, int slot)
{
	POST(fi_tsend(ep, sbuf, size, desc, peer, tag, &ctx[slot]), txcq);
}

static void lf_send1(size_t size, uint64_t tag)
{
	if (size <= info->tx_attr->inject_size) {
		POST(fi_tinject(ep, sbuf, size, peer, tag), txcq);
	} else {
		lf_send(size, tag, 0);
		reap(txcq, 1);
	}
}

static void lf_reap_rx(int n)
{
	reap(rxcq, n);
}

static void lf_reap_tx(int n)
{
	reap(txcq, n);
}

static void lf_poll(void)
{
	fi_cq_read(rxcq, NULL, 0);
}

static const struct xport xp_fabric = {lf_open, lf_close, lf_post_recv, lf_send,
				       lf_send1, lf_reap_rx, lf_reap_tx, lf_poll};

/* ---- the SCTP core alone, polled as the provider polls it ---- */

#define CORE_CTX 0x200u

static struct sctpt_ep *core;
static sctpt_peer_t core_peer;
static uint64_t rx_got, rx_taken, tx_got, tx_taken;

static void core_open(const char *prov, const char *src, size_t max, int fd)
{
	struct sctpt_config cfg;
	char card[SCTPT_CARD_MAX], other[SCTPT_CARD_MAX];
	const char *shm = getenv("SCTPT_SHM");

	(void)prov;
	sctpt_config_init(&cfg);
	cfg.addrs = src;
	cfg.shm = shm && *shm ? atoi(shm) : 0;
	cfg.handler.complete = NULL; /* polled, as the provider's domain */
	if (sctpt_open(&cfg, &core) != 0 || sctpt_card(core, card, sizeof(card)) < 0) {
		fprintf(stderr, "sctpt_open: %s\n", sctpt_last_error());
		exit(1);
	}
	alloc_bufs(max);
	swap_names(fd, card, strlen(card) + 1, other, sizeof(other));
	other[sizeof(other) - 1] = 0;
	core_peer = sctpt_peer_add(core, other);
	if (core_peer < 0) {
		fprintf(stderr, "sctpt_peer_add: %s\n", sctpt_last_error());
		exit(1);
	}
}

static void core_close(void)
{
	sctpt_close(core);
}

static void core_poll(void)
{
	struct sctpt_cqe c[32];
	int n;

	sctpt_progress(core);
	do {
		n = sctpt_cq_read(core, 0, c, 32);
		for (int i = 0; i < n; i++) {
			if (c[i].kind == SCTPT_CQE_RECV && c[i].status == 0) {
				memcpy(rbuf, c[i].data, c[i].len);
				rx_got++;
			} else if (c[i].kind == SCTPT_CQE_SEND) {
				if (c[i].status < 0) {
					fprintf(stderr, "send: %s\n", strerror(-c[i].status));
					exit(1);
				}
				tx_got++;
			} else if (c[i].kind == SCTPT_CQE_EVENT &&
				   (c[i].ev.type == SCTPT_EV_ASSOC_DOWN ||
				    c[i].ev.type == SCTPT_EV_PEER_CLOSED)) {
				fprintf(stderr, "peer lost\n");
				exit(1);
			}
		}
		sctpt_cq_release(core, c, n > 0 ? n : 0);
	} while (n == 32);
}

static void core_post_recv(size_t size, uint64_t tag, int slot)
{
	(void)size, (void)tag, (void)slot; /* the core takes every message */
}

static void core_send(size_t size, uint64_t tag, int slot)
{
	struct iovec iov = {sbuf, size};
	int rc = sctpt_send(core, core_peer, CORE_CTX, (int32_t)tag, 0, &iov, 1, &ctx[slot]);

	if (rc < 0) {
		fprintf(stderr, "sctpt_send: %s\n", sctpt_last_error());
		exit(1);
	}
	tx_got += rc == 1; /* handed to SCTP already: no completion comes */
}

static void core_reap_rx(int n)
{
	while (rx_got - rx_taken < (uint64_t)n)
		core_poll();
	rx_taken += (uint64_t)n;
}

static void core_reap_tx(int n)
{
	while (tx_got - tx_taken < (uint64_t)n)
		core_poll();
	tx_taken += (uint64_t)n;
}

static void core_send1(size_t size, uint64_t tag)
{
	core_send(size, tag, 0);
	core_reap_tx(1);
}

static const struct xport xp_core = {core_open, core_close, core_post_recv, core_send,
				     core_send1, core_reap_rx, core_reap_tx, core_poll};

/* ---- TCP sockets: messages are (length, tag) and the payload ---- */

static int sock = -1;
static char *stage;            /* what recv read beyond the message being taken */
static size_t stage_len, stage_off;
#define STAGE_CAP (64u << 10)

static void sock_open(const char *prov, const char *src, size_t max, int fd)
{
	struct sockaddr_in a = {.sin_family = AF_INET}, other;
	socklen_t alen = sizeof(a);
	int one = 1, ls = -1;

	(void)prov;
	if (inet_pton(AF_INET, src ? src : "127.0.0.1", &a.sin_addr) != 1)
		exit(1);
	/* both listen and swap addresses; the lower one connects, the other accepts */
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 1) != 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &alen) != 0) {
		perror("socket");
		exit(1);
	}
	swap_names(fd, &a, sizeof(a), &other, sizeof(other));
	if (memcmp(&a, &other, sizeof(a)) < 0) {
		sock = socket(AF_INET, SOCK_STREAM, 0);
		if (sock < 0 || connect(sock, (struct sockaddr *)&other, sizeof(other)) != 0) {
			perror("connect");
			exit(1);
		}
	} else {
		sock = accept(ls, NULL, NULL);
		if (sock < 0) {
			perror("accept");
			exit(1);
		}
	}
	close(ls);
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
	stage = malloc(STAGE_CAP);
	if (!stage)
		exit(1);
	alloc_bufs(max);
}

static void sock_close(void)
{
	close(sock);
	free(stage);
}

/* Writes all of iov (busy-polling a full socket). */
static void sock_writev(struct iovec *iov, int n)
{
	while (n) {
		ssize_t w = writev(sock, iov, n);
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			perror("writev");
			exit(1);
		}
		for (; w > 0 && n; iov++, n--) {
			if ((size_t)w < iov->iov_len) {
				iov->iov_base = (char *)iov->iov_base + w;
				iov->iov_len -= (size_t)w;
				break;
			}
			w -= (ssize_t)iov->iov_len;
		}
	}
}

static void sock_send(size_t size, uint64_t tag, int slot)
{
	uint32_t h[2] = {(uint32_t)size, (uint32_t)tag};
	struct iovec iov[2] = {{h, sizeof(h)}, {sbuf, size}};

	(void)slot;
	sock_writev(iov, size ? 2 : 1);
	tx_got++;
}

/* Reads into dst until it holds len bytes: first what is staged, then the socket. */
static void sock_take(char *dst, size_t len)
{
	while (len) {
		if (stage_off == stage_len) {
			stage_off = stage_len = 0;
			if (len >= STAGE_CAP) { /* large: straight into place */
				ssize_t r = recv(sock, dst, len, 0);
				if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
					exit(1);
				if (r > 0) {
					dst += r;
					len -= (size_t)r;
				}
				continue;
			}
			ssize_t r = recv(sock, stage, STAGE_CAP, 0);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
				exit(1);
			stage_len = r > 0 ? (size_t)r : 0;
			continue;
		}
		size_t n = stage_len - stage_off < len ? stage_len - stage_off : len;
		memcpy(dst, stage + stage_off, n);
		stage_off += n;
		dst += n;
		len -= n;
	}
}

static void sock_reap_rx(int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t h[2];
		sock_take((char *)h, sizeof(h));
		sock_take(rbuf, h[0]);
	}
}

static void sock_reap_tx(int n)
{
	tx_taken += (uint64_t)n; /* every write was complete when it returned */
}

static void sock_send1(size_t size, uint64_t tag)
{
	sock_send(size, tag, 0);
}

static void sock_poll(void)
{
	char c;

	(void)!recv(sock, &c, 1, MSG_PEEK | MSG_DONTWAIT);
}

static const struct xport xp_sock = {sock_open, sock_close, core_post_recv, sock_send,
				     sock_send1, sock_reap_rx, sock_reap_tx, sock_poll};

static const struct xport *x = &xp_fabric;

/* ---- the loops ---- */

/* Each side has its next receive posted before it sends (fabtests' pre-posted ping-pong);
 * the last receive of a size is consumed by a final round trip outside the timing. */
static void latency(int rank, size_t min, size_t max, double q)
{
	for (size_t size = min; size <= max; size = size ? size * 2 : 1) {
		int loop = (int)((size > LARGE ? 1000 : 10000) * q), skip = size > LARGE ? 10 : 100;
		double t0 = 0, t1, tp = 0;
		if (loop < 1)
			loop = 1;
		npieces = 0;
		x->post_recv(size, TAG_DATA, 1);
		for (int i = 0; i < loop + skip; i++) {
			if (i == skip)
				t0 = tp = now();
			if (i > skip && (i - skip) % 100 == 0 &&
			    npieces < (int)(sizeof(pieces) / sizeof(pieces[0]))) {
				double t = now();
				pieces[npieces++] = (t - tp) / 100;
				tp = t;
			}
			if (rank == 0) {
				x->send1(size, TAG_DATA);
				x->reap_rx(1);
				x->post_recv(size, TAG_DATA, 1);
			} else {
				x->reap_rx(1);
				x->post_recv(size, TAG_DATA, 1);
				x->send1(size, TAG_DATA);
			}
		}
		t1 = now();
		/* the receive each side still has posted takes one more message */
		if (rank == 0) {
			x->send1(size, TAG_DATA);
			x->reap_rx(1);
		} else {
			x->reap_rx(1);
			x->send1(size, TAG_DATA);
		}
		if (rank == 0)
			printf("lat %zu %.2f\n", size, per_unit((t1 - t0) / loop) * 1e6 / 2.0);
		fflush(stdout);
	}
}

/* The bw loop; returns seconds spent on loop windows. */
static double window_loop(int rank, size_t size, int loop, int skip)
{
	double t0 = 0, ti = 0;

	npieces = 0;
	for (int i = 0; i < loop + skip; i++) {
		if (i == skip)
			t0 = now();
		if (i > skip && npieces < (int)(sizeof(pieces) / sizeof(pieces[0])))
			pieces[npieces++] = now() - ti; /* the window before this one */
		if (i >= skip)
			ti = now();
		if (rank == 0) {
			/* the ack's receive is posted first, as fabtests have it pre-posted */
			x->post_recv(4, TAG_ACK, 2 * WINDOW + 1);
			for (int w = 0; w < WINDOW; w++)
				x->send(size, TAG_DATA, w);
			x->reap_tx(WINDOW);
			x->reap_rx(1);
		} else {
			for (int w = 0; w < WINDOW; w++)
				x->post_recv(size, TAG_DATA, WINDOW + w);
			x->reap_rx(WINDOW);
			x->send(4, TAG_ACK, 2 * WINDOW);
			x->reap_tx(1);
		}
	}
	if (npieces < (int)(sizeof(pieces) / sizeof(pieces[0])))
		pieces[npieces++] = now() - ti;
	return now() - t0;
}

static void bandwidth(int rank, size_t min, size_t max, double q, int rate)
{
	for (size_t size = min ? min : 1; size <= (rate ? 4096 : max); size *= 2) {
		int loop = (int)((size > LARGE ? 20 : 100) * q), skip = size > LARGE ? 2 : 10;
		if (loop < 1)
			loop = 1;
		double t = per_unit(window_loop(rank, size, loop, skip) / loop);
		if (rank == 0 && rate)
			printf("mr %zu %.0f\n", size, (double)WINDOW / t);
		else if (rank == 0)
			printf("bw %zu %.2f\n", size, (double)size * WINDOW / t / 1e6);
		fflush(stdout);
	}
}

/* Context switches per second while the application sleeps, then while it busy-polls. */
static void idle(int rank, double q)
{
	double secs = 5 * q < 1 ? 1 : 5 * q;

	/* one round trip: the peer is up, its association (if any) established */
	x->post_recv(0, TAG_DATA, 1);
	if (rank == 0) {
		x->send1(0, TAG_DATA);
		x->reap_rx(1);
	} else {
		x->reap_rx(1);
		x->send1(0, TAG_DATA);
	}
	for (int phase = 0; phase < 2; phase++) {
		struct rusage r0, r1;
		double t0, t1;
		getrusage(RUSAGE_SELF, &r0); /* every thread of the process */
		t0 = now();
		if (phase == 0) {
			struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
			while (nanosleep(&ts, &ts) != 0)
				;
		} else {
			while (now() - t0 < secs)
				x->poll();
		}
		t1 = now();
		getrusage(RUSAGE_SELF, &r1);
		printf("idle %s.%d %.0f %.0f\n", phase ? "poll" : "away", rank,
		       (double)(r1.ru_nvcsw - r0.ru_nvcsw) / (t1 - t0),
		       (double)(r1.ru_nivcsw - r0.ru_nivcsw) / (t1 - t0));
		fflush(stdout);
	}
}

/* "a,b" into out[0] = "a", out[1] = "b" (both "a" without a comma). */
static void split2(char *arg, char *out[2])
{
	char *comma = strchr(arg, ',');

	out[0] = arg;
	out[1] = arg;
	if (comma) {
		*comma = 0;
		out[1] = comma + 1;
	}
}

static void enter_netns(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	const char *prov = NULL, *tests = "lat,bw,mr";
	char *ns[2] = {NULL, NULL}, *src[2] = {NULL, NULL}, *cpu[2] = {NULL, NULL};
	size_t min = 0, max = 4 << 20;
	double q = 1;
	int c, sv[2], st[2] = {0, 0};
	pid_t pid[2];

	while ((c = getopt(argc, argv, "p:t:m:z:q:n:s:c:T:M")) != -1) {
		switch (c) {
		case 'p': prov = optarg; break;
		case 't': tests = optarg; break;
		case 'm': max = strtoul(optarg, NULL, 0); break;
		case 'z': min = strtoul(optarg, NULL, 0); break;
		case 'q': q = strtod(optarg, NULL); break;
		case 'n': split2(optarg, ns); break;
		case 's': split2(optarg, src); break;
		case 'c': split2(optarg, cpu); break;
		case 'T': threading = strcmp(optarg, "safe") ? FI_THREAD_DOMAIN : FI_THREAD_SAFE; break;
		case 'M': use_median = 1; break;
		default:
			fprintf(stderr, "usage: ofi_bench -p PROVIDER [-t lat,bw,mr,idle] [-z MIN] [-m MAX] "
				"[-q F] [-n NS0,NS1] [-s ADDR0,ADDR1] [-c CPU0,CPU1] [-T domain|safe]\n");
			return 2;
		}
	}
	if (!prov) {
		fprintf(stderr, "ofi_bench: -p PROVIDER is required\n");
		return 2;
	}
	if (!strcmp(prov, "core"))
		x = &xp_core;
	else if (!strcmp(prov, "socket"))
		x = &xp_sock;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	fflush(NULL);
	for (int r = 0; r < 2; r++) {
		pid[r] = fork();
		if (pid[r] == 0) {
			int fd = sv[r];
			char go = 0;
			close(sv[1 - r]);
			alarm(1800);
			if (cpu[r]) {
				cpu_set_t set;
				CPU_ZERO(&set);
				CPU_SET(atoi(cpu[r]), &set);
				if (sched_setaffinity(0, sizeof(set), &set) != 0)
					perror("sched_setaffinity");
			}
			if (ns[r])
				enter_netns(ns[r]);
			x->open(prov, src[r], max, fd);
			xfer(fd, &go, 1, 1);
			xfer(fd, &go, 1, 0);
			if (strstr(tests, "lat"))
				latency(r, min, max, q);
			if (strstr(tests, "bw"))
				bandwidth(r, min, max, q, 0);
			if (strstr(tests, "mr"))
				bandwidth(r, min, max, q, 1);
			if (strstr(tests, "idle"))
				idle(r, q);
			xfer(fd, &go, 1, 1); /* both done before either closes */
			xfer(fd, &go, 1, 0);
			x->close();
			fflush(NULL);
			_exit(0);
		}
	}
	close(sv[0]);
	close(sv[1]);
	waitpid(pid[0], &st[0], 0);
	waitpid(pid[1], &st[1], 0);
	for (int r = 0; r < 2; r++)
		if (!WIFEXITED(st[r]) || WEXITSTATUS(st[r])) {
			fprintf(stderr, "ofi_bench: %s: process %d failed\n", prov, r);
			return 1;
		}
	return 0;
}
