/*
 * sctpt_bench: the SCTP core on loopback, alone and against plain TCP sockets, in the OSU
 * Micro-Benchmarks pattern that benchmarks/btl uses for MPI (so that "the core alone" is a
 * column of the MPI comparison):
 *   lat:  ping-pong, one-way time (half the average round trip) over LOOP round trips after
 *         SKIP warm-up ones (10000/100; 1000/10 above 8 KiB);
 *   bw:   windows of 64 messages from rank 0, each window acknowledged by a 4-byte message
 *         (100/10 windows; 20/2 above 8 KiB), MB/s;
 *   bibw: both ranks send a window of 64 to each other and wait for the other's, MB/s of
 *         both directions.
 * Received messages land in the receiver's own buffer (the core's recv_buf hook), as MPI's do.
 *
 * Both transports wait the same way: by default both busy-poll (sctpt_progress; TCP:
 * non-blocking sockets retried), as MPI libraries do; with --wait both sleep until something
 * arrives (sctpt_wait; TCP: poll). The table says which.
 *
 * Forks two ranks that exchange business cards (and the TCP port) through shared memory. The
 * core talks SCTP over loopback between them (its same-host shared memory only with --shm).
 * Every message has its first and last byte stamped with its window's number and checked,
 * and its length checked. Every wait is bounded; alarm() is each rank's safety net.
 */
#include "sctpt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 40
#define TAG_DATA 1
#define TAG_ACK 2
#define WAIT_S 30.0 /* a single wait longer than this is a failure */
#define WINDOW 64   /* osu_bw's window */
#define LARGE 8192  /* OSU's LARGE_MESSAGE_SIZE */

enum test { T_LAT, T_BW, T_BIBW, NTESTS };
enum side { S_SCTP, S_TCP, NSIDES };
static const char *const test_name[NTESTS] = {"lat", "bw", "bibw"};

struct shared {
	int arrived, generation; /* the barrier */
	int failed;
	uint16_t tcp_port;
	char cards[2][SCTPT_CARD_MAX];
	double res[NSIDES][NTESTS][MAX_SIZES]; /* < 0: not measured / failed */
};

/* What the completion handler checks and counts. */
struct rank {
	int id;
	struct sctpt_ep *ep;
	sctpt_peer_t peer;
	unsigned char *sbuf, *rbuf[2];
	size_t exp_len;
	uint64_t ndata, nack, nstarted; /* this test's messages: whole, acks, reassemblies begun */
	int per;                        /* messages per stamp (1, or a window) */
	int bad;
	int outstanding; /* queued sends without their completion yet */
};

static struct shared *g_sh;
static size_t g_sizes[MAX_SIZES];
static int g_nsizes;
static double g_scale = 1.0;
static int g_block;                  /* --wait */
static int g_shm;                    /* --shm: the core's shared memory, not SCTP */
static int g_median;                 /* --median: the median iteration, not the average */
static double *g_times;              /* the timed iterations of one size */
static int g_tests = 7, g_sides = 3; /* bit masks */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Seconds per iteration of the n timed ones (g_times), from t0 to now: the average, or the
 * median with --median (an iteration that lost the CPU to another process does not count). */
static double per_iter(int n, double t0)
{
	if (!g_median)
		return (now_s() - t0) / n;
	qsort(g_times, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? g_times[n / 2] : (g_times[n / 2 - 1] + g_times[n / 2]) / 2;
}

static int scaled(int n)
{
	int v = (int)(n * g_scale);
	return v < 1 ? 1 : v;
}

static int loop_of(enum test t, size_t size)
{
	if (t == T_LAT)
		return scaled(size > LARGE ? 1000 : 10000);
	return scaled(size > LARGE ? 20 : 100);
}

static int skip_of(enum test t, size_t size)
{
	if (t == T_LAT)
		return scaled(size > LARGE ? 10 : 100);
	return scaled(size > LARGE ? 2 : 10);
}

static unsigned char stamp_first(uint32_t seq) { return (unsigned char)(seq * 31u + 7u); }
static unsigned char stamp_last(uint32_t seq) { return (unsigned char)(seq * 17u + 101u); }

static void stamp(unsigned char *buf, size_t len, uint32_t seq)
{
	if (len == 0)
		return;
	buf[0] = stamp_first(seq);
	buf[len - 1] = stamp_last(seq);
}

static int stamp_ok(const unsigned char *buf, size_t len, uint32_t seq)
{
	if (len == 0)
		return 1;
	if (buf[len - 1] != stamp_last(seq))
		return 0;
	return len == 1 || buf[0] == stamp_first(seq);
}

/* ---- barrier (progress-driven while an endpoint is open) ---- */

static int barrier(struct rank *r)
{
	int gen = __atomic_load_n(&g_sh->generation, __ATOMIC_ACQUIRE);
	if (__atomic_add_fetch(&g_sh->arrived, 1, __ATOMIC_ACQ_REL) == 2) {
		__atomic_store_n(&g_sh->arrived, 0, __ATOMIC_RELEASE);
		__atomic_add_fetch(&g_sh->generation, 1, __ATOMIC_ACQ_REL);
		return 0;
	}
	double end = now_s() + 120.0;
	while (__atomic_load_n(&g_sh->generation, __ATOMIC_ACQUIRE) == gen) {
		if (__atomic_load_n(&g_sh->failed, __ATOMIC_ACQUIRE) || now_s() > end)
			return -1;
		if (r && r->ep)
			sctpt_wait(r->ep, 1);
		else
			usleep(1000);
	}
	return 0;
}

static int fail(struct rank *r, const char *what)
{
	fprintf(stderr, "sctpt_bench rank %d: %s%s%s\n", r->id, what,
		r->ep ? ": " : "", r->ep ? sctpt_last_error() : "");
	__atomic_store_n(&g_sh->failed, 1, __ATOMIC_RELEASE);
	return -1;
}

/* ---- SCTP ---- */

static void on_recv(struct rank *r, const struct sctpt_cqe *m)
{
	if (m->status < 0) { /* an rbuf given by on_recv_buf came back unfilled */
		r->bad++;
		return;
	}
	if (m->tag == TAG_ACK) {
		r->nack++;
		return;
	}
	/* reassembled into one of our buffers: its cookie says which window it belongs to */
	uint64_t seq = m->cookie ? (uintptr_t)m->cookie - 1 : r->ndata / (uint64_t)r->per;
	if (m->tag != TAG_DATA || m->len != r->exp_len || !stamp_ok(m->data, m->len, (uint32_t)seq))
		r->bad++;
	r->ndata++;
}

/* Large messages go into the rank's own buffers, alternating by window: a window's
 * messages are checked before the one after next can start. */
static void *on_recv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
			 void **cookie)
{
	struct rank *r = arg;
	(void)peer;
	(void)context;
	*cookie = NULL;
	if (tag != TAG_DATA || len > r->exp_len)
		return NULL;
	uint64_t seq = r->nstarted++ / (uint64_t)r->per;
	*cookie = (void *)(uintptr_t)(seq + 1);
	return r->rbuf[seq & 1];
}

static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	struct rank *r = arg;
	switch (c->kind) {
	case SCTPT_CQE_RECV:
		on_recv(r, c);
		break;
	case SCTPT_CQE_SEND:
		r->outstanding--;
		if (c->status < 0)
			r->bad++;
		break;
	case SCTPT_CQE_EVENT: /* a lost peer shows as failed sends and a timeout */
		break;
	}
}

static int s_send(struct rank *r, int32_t tag, const void *buf, size_t len)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	int e = sctpt_send(r->ep, r->peer, 0, tag, 0, &iov, 1, NULL);
	if (e < 0)
		return fail(r, "sctpt_send");
	if (e == 0)
		r->outstanding++;
	return 0;
}

/* Progresses until *counter reaches target and no send is outstanding. */
static int s_poll_until(struct rank *r, const uint64_t *counter, uint64_t target)
{
	double end = now_s() + WAIT_S;
	for (unsigned spin = 0;; spin++) {
		if (*counter >= target && r->outstanding == 0)
			break;
		if (g_block)
			sctpt_wait(r->ep, 1);
		else
			sctpt_progress(r->ep);
		if ((spin & 255) == 255 && now_s() > end)
			return fail(r, "timed out waiting for the peer");
	}
	if (r->bad)
		return fail(r, "a message arrived damaged, late or failed to send");
	return 0;
}

/* Before the barrier that starts a size: the peer may send as soon as it left the barrier. */
static void s_prepare(struct rank *r, enum test t, size_t size)
{
	r->exp_len = size;
	r->per = t == T_LAT ? 1 : WINDOW;
	r->ndata = r->nstarted = r->nack = 0;
}

/* One size of one test; rank 0's result in *out. */
static int s_run(struct rank *r, enum test t, size_t size, double *out)
{
	int loop = loop_of(t, size), skip = skip_of(t, size);
	int w = t == T_LAT ? 1 : WINDOW;
	int sends = r->id == 0 || t != T_BW, recvs = r->id == 1 || t != T_BW;
	uint32_t ack = 0;
	double t0 = 0, tl = 0;
	for (int i = 0; i < loop + skip; i++) {
		if (i == skip)
			t0 = tl = now_s();
		if (i > skip) {
			double now = now_s();
			g_times[i - skip - 1] = now - tl;
			tl = now;
		}
		if (t == T_LAT && r->id == 1 && s_poll_until(r, &r->ndata, (uint64_t)i + 1))
			return -1;
		stamp(r->sbuf, size, (uint32_t)i); /* no send of ours is outstanding here */
		for (int k = 0; sends && k < w; k++)
			if (s_send(r, TAG_DATA, r->sbuf, size))
				return -1;
		if (t == T_LAT) {
			if (r->id == 0 && s_poll_until(r, &r->ndata, (uint64_t)i + 1))
				return -1;
			continue;
		}
		if (recvs && s_poll_until(r, &r->ndata, (uint64_t)(i + 1) * WINDOW))
			return -1;
		if (t == T_BW && (r->id == 1 ? s_send(r, TAG_ACK, &ack, sizeof(ack)) ||
						       s_poll_until(r, &r->ndata, 0)
					     : s_poll_until(r, &r->nack, (uint64_t)i + 1)))
			return -1;
	}
	g_times[loop - 1] = now_s() - tl;
	double dt = per_iter(loop, t0);
	*out = t == T_LAT ? dt / 2 * 1e6 : (t == T_BIBW ? 2.0 : 1.0) * (double)size * WINDOW / dt / 1e6;
	return 0;
}

static int sctp_phase(struct rank *r)
{
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.shm = g_shm; /* both ranks are on this host: SCTP over loopback unless --shm */
	cfg.handler.complete = on_complete;
	cfg.handler.recv_buf = on_recv_buf;
	cfg.handler.arg = r;
	if (sctpt_open(&cfg, &r->ep) != 0)
		return fail(r, "sctpt_open");
	if (sctpt_card(r->ep, g_sh->cards[r->id], SCTPT_CARD_MAX) < 0)
		return fail(r, "sctpt_card");
	int e = barrier(r);
	if (e == 0) {
		r->peer = sctpt_peer_add(r->ep, g_sh->cards[1 - r->id]);
		if (r->peer < 0)
			e = fail(r, "sctpt_peer_add");
	}
	for (int t = 0; e == 0 && t < NTESTS; t++) {
		for (int i = 0; e == 0 && (g_tests >> t & 1) && i < g_nsizes; i++) {
			double v = -1;
			if (t != T_LAT && g_sizes[i] == 0)
				continue;
			s_prepare(r, (enum test)t, g_sizes[i]);
			e = barrier(r);
			if (e == 0)
				e = s_run(r, (enum test)t, g_sizes[i], &v);
			if (r->id == 0) /* rank 0 reports */
				g_sh->res[S_SCTP][t][i] = v;
		}
	}
	if (e == 0)
		e = barrier(r); /* both done: nothing of ours is left unacknowledged */
	sctpt_close(r->ep);
	r->ep = NULL;
	return e;
}

/* ---- TCP: messages are an 8-byte (length, sequence) prefix and the payload ---- */

struct tcp_dir {
	int left;           /* messages still to move */
	size_t off;         /* bytes of the current message moved (prefix included) */
	uint32_t hdr[2];
	size_t len;         /* payload bytes per message */
	uint32_t seq;
	unsigned char *buf;
};

/* Moves what the socket takes without blocking: 1 progressed, 0 nothing, -1 error. */
static int t_out(int fd, struct tcp_dir *d)
{
	if (!d->left)
		return 0;
	uint32_t hdr[2] = {htonl((uint32_t)d->len), htonl(d->seq)};
	struct iovec iov[2] = {{(char *)hdr + d->off, d->off < 8 ? 8 - d->off : 0},
			       {d->buf + (d->off > 8 ? d->off - 8 : 0), d->len - (d->off > 8 ? d->off - 8 : 0)}};
	struct msghdr mh = {.msg_iov = d->off < 8 ? iov : iov + 1, .msg_iovlen = d->off < 8 ? 2 : 1};
	ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	d->off += (size_t)n;
	if (d->off == 8 + d->len) {
		d->off = 0;
		d->left--;
	}
	return 1;
}

static int t_in(int fd, struct tcp_dir *d)
{
	if (!d->left)
		return 0;
	struct iovec iov[2] = {{(char *)d->hdr + d->off, d->off < 8 ? 8 - d->off : 0},
			       {d->buf + (d->off > 8 ? d->off - 8 : 0), d->len - (d->off > 8 ? d->off - 8 : 0)}};
	struct msghdr mh = {.msg_iov = d->off < 8 ? iov : iov + 1, .msg_iovlen = d->off < 8 ? 2 : 1};
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n == 0)
		return -1;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	d->off += (size_t)n;
	if (d->off >= 8 && ntohl(d->hdr[0]) != d->len)
		return -1;
	if (d->off == 8 + d->len) {
		if (ntohl(d->hdr[1]) != d->seq || !stamp_ok(d->buf, d->len, d->seq))
			return -1;
		d->off = 0;
		d->left--;
	}
	return 1;
}

/* Sends nsend messages of slen bytes from sbuf and receives nrecv of rlen into rbuf, both
 * stamped seq, at once (neither side may block the other), waiting as the mode says. */
static int t_move(int fd, unsigned char *sbuf, size_t slen, int nsend, unsigned char *rbuf,
		  size_t rlen, int nrecv, uint32_t seq)
{
	struct tcp_dir o = {.left = nsend, .len = slen, .seq = seq, .buf = sbuf};
	struct tcp_dir in = {.left = nrecv, .len = rlen, .seq = seq, .buf = rbuf};
	double end = 0;
	for (unsigned spin = 0; o.left || in.left; spin++) {
		int a = t_out(fd, &o), b = t_in(fd, &in);
		if (a < 0 || b < 0)
			return -1;
		if (a || b)
			continue;
		if (g_block) {
			struct pollfd p = {fd, (short)((in.left ? POLLIN : 0) | (o.left ? POLLOUT : 0)), 0};
			poll(&p, 1, 1);
		}
		if ((spin & 1023) == 1023 || g_block) {
			if (end == 0)
				end = now_s() + WAIT_S;
			else if (now_s() > end)
				return -1;
		}
	}
	return 0;
}

static int t_run(struct rank *r, int fd, enum test t, size_t size, double *out)
{
	int loop = loop_of(t, size), skip = skip_of(t, size), me = r->id;
	double t0 = 0, tl = 0;
	unsigned char ack[4];
	stamp(ack, sizeof(ack), 0);
	for (int i = 0; i < loop + skip; i++) {
		uint32_t seq = (uint32_t)i;
		int e;
		if (i == skip)
			t0 = tl = now_s();
		if (i > skip) {
			double now = now_s();
			g_times[i - skip - 1] = now - tl;
			tl = now;
		}
		stamp(r->sbuf, size, seq);
		switch (t) {
		case T_LAT:
			e = me == 0 ? t_move(fd, r->sbuf, size, 1, NULL, 0, 0, seq) ||
					      t_move(fd, NULL, 0, 0, r->rbuf[0], size, 1, seq)
				    : t_move(fd, NULL, 0, 0, r->rbuf[0], size, 1, seq) ||
					      t_move(fd, r->sbuf, size, 1, NULL, 0, 0, seq);
			break;
		case T_BW:
			e = me == 0 ? t_move(fd, r->sbuf, size, WINDOW, NULL, 0, 0, seq) ||
					      t_move(fd, NULL, 0, 0, ack, 4, 1, 0)
				    : t_move(fd, NULL, 0, 0, r->rbuf[0], size, WINDOW, seq) ||
					      t_move(fd, ack, 4, 1, NULL, 0, 0, 0);
			break;
		default:
			e = t_move(fd, r->sbuf, size, WINDOW, r->rbuf[0], size, WINDOW, seq);
			break;
		}
		if (e)
			return fail(r, "tcp transfer failed, timed out or data damaged");
	}
	g_times[loop - 1] = now_s() - tl;
	double dt = per_iter(loop, t0);
	*out = t == T_LAT ? dt / 2 * 1e6 : (t == T_BIBW ? 2.0 : 1.0) * (double)size * WINDOW / dt / 1e6;
	return 0;
}

static int tcp_connect_pair(struct rank *r)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int fd = -1, lfd = -1, one = 1;
	if (r->id == 1) {
		lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1) ||
		    getsockname(lfd, (struct sockaddr *)&sa, &sl))
			goto out;
		g_sh->tcp_port = ntohs(sa.sin_port);
	}
	if (barrier(NULL))
		goto out;
	if (r->id == 1) {
		struct timeval tv = {.tv_sec = (time_t)WAIT_S};
		setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		fd = accept(lfd, NULL, NULL);
	} else {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sa.sin_port = htons(g_sh->tcp_port);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0 && (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK))) {
		close(fd);
		fd = -1;
	}
out:
	if (lfd >= 0)
		close(lfd);
	return fd;
}

static int tcp_phase(struct rank *r)
{
	int fd = tcp_connect_pair(r);
	if (fd < 0)
		return fail(r, "tcp connect");
	int e = 0;
	for (int t = 0; e == 0 && t < NTESTS; t++) {
		for (int i = 0; e == 0 && (g_tests >> t & 1) && i < g_nsizes; i++) {
			double v = -1;
			if (t != T_LAT && g_sizes[i] == 0)
				continue;
			e = barrier(NULL);
			if (e == 0)
				e = t_run(r, fd, (enum test)t, g_sizes[i], &v);
			if (r->id == 0)
				g_sh->res[S_TCP][t][i] = v;
		}
	}
	close(fd);
	return e;
}

/* ---- driver ---- */

static int rank_main(int id, size_t maxsize)
{
	struct rank r = {.id = id, .peer = -1};
	int e = 0;
	r.sbuf = calloc(1, maxsize ? maxsize : 1);
	r.rbuf[0] = calloc(1, maxsize ? maxsize : 1);
	r.rbuf[1] = calloc(1, maxsize ? maxsize : 1);
	if (!r.sbuf || !r.rbuf[0] || !r.rbuf[1])
		return fail(&r, "out of memory");
	if (g_sides & 1 << S_SCTP)
		e = sctp_phase(&r);
	if (e == 0 && (g_sides & 1 << S_TCP))
		e = barrier(NULL) || tcp_phase(&r);
	free(r.sbuf);
	free(r.rbuf[0]);
	free(r.rbuf[1]);
	return e ? 1 : 0;
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	if (*end || v > (64ull << 20))
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_sizes(const char *arg, size_t *sizes)
{
	char buf[512];
	int n = 0;
	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_SIZES || parse_size(tok, &sizes[n]))
			return -1;
		n++;
	}
	return n;
}

static int parse_tests(const char *arg)
{
	char buf[64];
	int m = 0;
	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int t;
		for (t = 0; t < NTESTS && strcmp(tok, test_name[t]); t++)
			;
		if (t == NTESTS)
			return -1;
		m |= 1 << t;
	}
	return m;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: sctpt_bench [--tests lat,bw,bibw] [--only sctp|tcp] [--sizes LIST]\n"
		   "                   [--iters-scale F] [--quick] [--wait] [--median] [--shm] [--dat]\n"
		   "  --tests LIST      which tests (default all three)\n"
		   "  --only SIDE       run the core (sctp) or TCP sockets (tcp) only\n"
		   "  --sizes LIST      comma-separated message sizes, K/M suffixes allowed\n"
		   "                    (default 0, 1, 2, 4, ... 4M; at most 64M)\n"
		   "  --iters-scale F   multiply every OSU iteration count by F (default 1)\n"
		   "  --quick           same as --iters-scale 0.1\n"
		   "  --wait            both sides sleep until data arrives (sctpt_wait, poll)\n"
		   "                    instead of busy-polling (sctpt_progress, non-blocking\n"
		   "                    sockets retried)\n"
		   "  --median          the median iteration (round trip, window) instead of OSU's\n"
		   "                    average: iterations that lost the CPU do not count\n"
		   "  --shm             let the core use its shared memory between the two ranks\n"
		   "                    (default: SCTP over loopback, as between hosts)\n"
		   "  --dat             print \"# <side> <test> <unit>\" and \"<size> <value>\" lines\n"
		   "                    instead of the table (for benchmarks/btl/compare.sh)\n");
}

static void fmt_size(size_t s, char *buf, size_t len)
{
	if (s >= (1u << 20) && s % (1u << 20) == 0)
		snprintf(buf, len, "%zu MiB", s >> 20);
	else if (s >= 1024 && s % 1024 == 0)
		snprintf(buf, len, "%zu KiB", s >> 10);
	else
		snprintf(buf, len, "%zu B", s);
}

static void print_cell(double v, int prec)
{
	if (v < 0)
		printf(" | %9s", "-");
	else
		printf(" | %9.*f", prec, v);
}

static void print_table(void)
{
	printf("%9s", "size");
	for (int t = 0; t < NTESTS; t++) {
		if (!(g_tests >> t & 1))
			continue;
		printf(" | %4s sctp | %4s  tcp | %9s", test_name[t], test_name[t], "sctp/tcp");
	}
	printf("\n");
	for (int i = 0; i < g_nsizes; i++) {
		char sz[32];
		fmt_size(g_sizes[i], sz, sizeof(sz));
		printf("%9s", sz);
		for (int t = 0; t < NTESTS; t++) {
			double s = g_sh->res[S_SCTP][t][i], c = g_sh->res[S_TCP][t][i];
			if (!(g_tests >> t & 1))
				continue;
			print_cell(s, t == T_LAT ? 2 : 1);
			print_cell(c, t == T_LAT ? 2 : 1);
			print_cell(s > 0 && c > 0 ? s / c : -1, 2);
		}
		printf("\n");
	}
}

static void print_dat(void)
{
	static const char *const side[NSIDES] = {"sctp", "tcp"};
	for (int s = 0; s < NSIDES; s++) {
		for (int t = 0; t < NTESTS; t++) {
			if (!(g_sides >> s & 1) || !(g_tests >> t & 1))
				continue;
			printf("# %s %s %s\n", side[s], test_name[t], t == T_LAT ? "us" : "MB/s");
			for (int i = 0; i < g_nsizes; i++)
				if (g_sh->res[s][t][i] >= 0)
					printf("%zu %.2f\n", g_sizes[i], g_sh->res[s][t][i]);
		}
	}
}

int main(int argc, char **argv)
{
	int dat = 0;
	g_nsizes = 0;
	g_sizes[g_nsizes++] = 0;
	for (size_t s = 1; s <= (4u << 20); s *= 2)
		g_sizes[g_nsizes++] = s;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			g_nsizes = parse_sizes(argv[++i], g_sizes);
			if (g_nsizes <= 0) {
				fprintf(stderr, "sctpt_bench: bad --sizes '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--tests") && i + 1 < argc) {
			if ((g_tests = parse_tests(argv[++i])) <= 0) {
				fprintf(stderr, "sctpt_bench: bad --tests '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			i++;
			g_sides = !strcmp(argv[i], "sctp") ? 1 << S_SCTP : !strcmp(argv[i], "tcp") ? 1 << S_TCP : 0;
			if (!g_sides) {
				fprintf(stderr, "sctpt_bench: bad --only '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--iters-scale") && i + 1 < argc) {
			char *end;
			g_scale = strtod(argv[++i], &end);
			if (*end || !(g_scale > 0) || g_scale > 100) {
				fprintf(stderr, "sctpt_bench: bad --iters-scale '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--median")) {
			g_median = 1;
		} else if (!strcmp(argv[i], "--shm")) {
			g_shm = 1;
		} else if (!strcmp(argv[i], "--wait")) {
			g_block = 1;
		} else if (!strcmp(argv[i], "--dat")) {
			dat = 1;
		} else if (!strcmp(argv[i], "--quick")) {
			g_scale = 0.1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	size_t maxsize = 0;
	for (int i = 0; i < g_nsizes; i++)
		if (g_sizes[i] > maxsize)
			maxsize = g_sizes[i];
	g_times = malloc(sizeof(double) * (size_t)scaled(10000));
	if (!g_times) {
		perror("sctpt_bench: malloc");
		return 1;
	}
	g_sh = mmap(NULL, sizeof(*g_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_sh == MAP_FAILED) {
		perror("sctpt_bench: mmap");
		return 1;
	}
	for (int s = 0; s < NSIDES; s++)
		for (int t = 0; t < NTESTS; t++)
			for (int i = 0; i < MAX_SIZES; i++)
				g_sh->res[s][t][i] = -1;
	if (!dat) {
		printf("sctpt_bench: the SCTP core (sctp%s) vs TCP sockets (tcp), loopback, OSU "
		       "pattern (iterations x%g); both %s\n", g_shm ? ": its shared memory" : "", g_scale,
		       g_block ? "sleep until data arrives (sctpt_wait / poll)"
			       : "busy-poll (sctpt_progress / non-blocking recv and send)");
		if (g_median)
			printf("values from the median iteration (round trip, window), not the average\n");
		printf("lat: one-way us (lower is better); bw, bibw: MB/s (higher is better)\n");
		fflush(NULL);
	}
	pid_t pids[2];
	int failed = 0;
	unsigned limit = (unsigned)(1800 * (g_scale < 1 ? 1 : g_scale)) + 60;
	for (int id = 0; id < 2; id++) {
		pids[id] = fork();
		if (pids[id] < 0) {
			perror("sctpt_bench: fork");
			__atomic_store_n(&g_sh->failed, 1, __ATOMIC_RELEASE);
			failed = 1;
			break;
		}
		if (pids[id] == 0) {
			alarm(limit);
			int code = rank_main(id, maxsize);
			fflush(NULL);
			_exit(code);
		}
	}
	for (int id = 0; id < 2; id++) {
		int st;
		if (pids[id] <= 0)
			continue;
		if (waitpid(pids[id], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "sctpt_bench: rank %d failed\n", id);
			failed = 1;
		}
	}
	if (dat)
		print_dat();
	else
		print_table();
	munmap(g_sh, sizeof(*g_sh));
	return failed;
}
