/*
 * sctpt_bench: latency and streaming bandwidth of the SCTP core on loopback, against plain TCP.
 *
 * Forks two ranks that exchange business cards (and the TCP port) through shared memory.
 * Rank 0 measures; rank 1 echoes (latency) or acknowledges windows (bandwidth).
 *   latency:   half the round trip of a ping-pong, busy-polled with sctpt_progress;
 *   bandwidth: a window of messages sent back to back, then a 4-byte ack, repeated.
 * Every message has its first and last byte stamped and checked, and its length checked.
 * TCP uses TCP_NODELAY, an 8-byte (length, sequence) prefix, busy-polled receives and blocking
 * sends with timeouts.
 * Every wait is bounded by a deadline; alarm() is the safety net for each rank.
 */
#include "sctpt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 32
#define TAG_DATA 1
#define TAG_ACK 2
#define WAIT_S 20.0          /* a single wait longer than this is a failure */
#define WINDOW_BYTES (16u << 20) /* a bandwidth window carries at most this many bytes */
#define WINDOW_MAX 64

struct result {
	double sctp_lat, tcp_lat, sctp_bw, tcp_bw; /* < 0: not measured / failed */
};

struct shared {
	int arrived, generation; /* the barrier */
	int failed;
	uint16_t tcp_port;
	char cards[2][SCTPT_CARD_MAX];
	struct result res[MAX_SIZES];
};

struct plan {
	size_t size;
	int lat_iters, lat_warm;
	int window, bw_reps, bw_warm;
};

/* What the completion handler checks and counts. */
struct rank {
	int id;
	struct sctpt_ep *ep;
	sctpt_peer_t peer;
	unsigned char *sbuf, *rbuf;
	size_t exp_len;
	uint32_t exp_seq;
	uint64_t ndata, nack;
	int bad;
	int outstanding; /* queued sends without their completion yet */
	int use_rbuf;    /* latency phase: reassemble large messages into rbuf */
};

static struct shared *g_sh;
static struct plan g_plan[MAX_SIZES];
static int g_nsizes;
static int g_block; /* --wait: sleep in sctpt_wait instead of busy-polling */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
	double end = now_s() + 60.0;
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
	if (m->tag != TAG_DATA || m->len != r->exp_len || !stamp_ok(m->data, m->len, r->exp_seq))
		r->bad++;
	r->ndata++;
}

static void *on_recv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
			 void **cookie)
{
	struct rank *r = arg;
	(void)peer;
	(void)context;
	*cookie = NULL;
	if (!r->use_rbuf || tag != TAG_DATA || len > r->exp_len)
		return NULL;
	return r->rbuf;
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

/* Busy-polls until *counter reaches target (and, if drain, no send is outstanding). */
static int s_poll_until(struct rank *r, const uint64_t *counter, uint64_t target, int drain)
{
	double end = now_s() + WAIT_S;
	for (unsigned spin = 0;; spin++) {
		if (*counter >= target && (!drain || r->outstanding == 0))
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

static int s_latency(struct rank *r, const struct plan *p, double *lat)
{
	int total = p->lat_warm + p->lat_iters;
	double t0 = 0;
	r->exp_len = p->size;
	r->use_rbuf = 1;
	for (int i = 0; i < total; i++) {
		if (i == p->lat_warm)
			t0 = now_s();
		r->exp_seq = (uint32_t)i;
		if (r->id == 0) {
			stamp(r->sbuf, p->size, (uint32_t)i);
			if (s_send(r, TAG_DATA, r->sbuf, p->size) ||
			    s_poll_until(r, &r->ndata, r->ndata + 1, 1))
				return -1;
		} else {
			if (s_poll_until(r, &r->ndata, r->ndata + 1, 1))
				return -1;
			stamp(r->sbuf, p->size, (uint32_t)i);
			if (s_send(r, TAG_DATA, r->sbuf, p->size))
				return -1;
		}
	}
	*lat = (now_s() - t0) / p->lat_iters / 2 * 1e6;
	r->use_rbuf = 0;
	return 0;
}

static int s_bandwidth(struct rank *r, const struct plan *p, double *bw)
{
	int total = p->bw_warm + p->bw_reps;
	double t0 = 0;
	uint32_t ack = 0;
	r->exp_len = p->size;
	for (int rep = 0; rep < total; rep++) {
		if (rep == p->bw_warm)
			t0 = now_s();
		r->exp_seq = (uint32_t)rep;
		if (r->id == 0) {
			stamp(r->sbuf, p->size, (uint32_t)rep); /* no send outstanding here */
			for (int w = 0; w < p->window; w++)
				if (s_send(r, TAG_DATA, r->sbuf, p->size))
					return -1;
			if (s_poll_until(r, &r->nack, r->nack + 1, 1))
				return -1;
		} else {
			/* exp_seq changes only once the whole window arrived: the sender stamps the
			 * next window after our ack. */
			if (s_poll_until(r, &r->ndata, r->ndata + (uint64_t)p->window, 1) ||
			    s_send(r, TAG_ACK, &ack, sizeof(ack)) || s_poll_until(r, &r->ndata, 0, 1))
				return -1;
		}
	}
	double dt = now_s() - t0;
	*bw = (double)p->size * p->window * p->bw_reps / dt / 1e6;
	return 0;
}

static int sctp_phase(struct rank *r)
{
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
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
	for (int i = 0; e == 0 && i < g_nsizes; i++) {
		double lat = -1, bw = -1;
		e = s_latency(r, &g_plan[i], &lat);
		if (e == 0)
			e = s_bandwidth(r, &g_plan[i], &bw);
		if (r->id == 0) { /* rank 0 reports */
			g_sh->res[i].sctp_lat = lat;
			g_sh->res[i].sctp_bw = bw;
		}
	}
	if (e == 0)
		e = barrier(r); /* both done: nothing of ours is left unacknowledged */
	sctpt_close(r->ep);
	r->ep = NULL;
	return e;
}

/* ---- TCP ---- */

/* Receives busy-poll (MSG_DONTWAIT) as the SCTP side busy-polls sctpt_progress, so neither
 * pays a scheduler wake-up the other does not; sends block (with the socket's timeout). */
static int full_io(int fd, void *buf, size_t len, int writing)
{
	unsigned char *p = buf;
	double end = 0;
	unsigned spins = 0;
	while (len > 0) {
		ssize_t n = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !writing && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((++spins & 1023) == 0) {
				if (end == 0)
					end = now_s() + WAIT_S;
				else if (now_s() > end)
					return -1;
			}
			continue;
		}
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int t_send(int fd, const void *buf, uint32_t len, uint32_t seq)
{
	uint32_t hdr[2] = {htonl(len), htonl(seq)};
	struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)buf, len}};
	size_t want = sizeof(hdr) + len;
	ssize_t n;
	do
		n = writev(fd, iov, len ? 2 : 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if ((size_t)n == want)
		return 0;
	/* short write: finish the rest */
	if ((size_t)n < sizeof(hdr)) {
		if (full_io(fd, (unsigned char *)hdr + n, sizeof(hdr) - (size_t)n, 1))
			return -1;
		n = sizeof(hdr);
	}
	return full_io(fd, (unsigned char *)buf + ((size_t)n - sizeof(hdr)),
		       want - (size_t)n, 1);
}

/* Receives one message into rbuf and checks its length and stamp. */
static int t_recv(int fd, unsigned char *rbuf, uint32_t len, uint32_t seq)
{
	uint32_t hdr[2];
	if (full_io(fd, hdr, sizeof(hdr), 0) || ntohl(hdr[0]) != len || ntohl(hdr[1]) != seq)
		return -1;
	if (full_io(fd, rbuf, len, 0))
		return -1;
	return stamp_ok(rbuf, len, seq) ? 0 : -1;
}

static int t_latency(struct rank *r, int fd, const struct plan *p, double *lat)
{
	uint32_t len = (uint32_t)p->size;
	int total = p->lat_warm + p->lat_iters;
	double t0 = 0;
	for (int i = 0; i < total; i++) {
		uint32_t seq = (uint32_t)i;
		if (i == p->lat_warm)
			t0 = now_s();
		stamp(r->sbuf, len, seq);
		int e = r->id == 0 ? t_send(fd, r->sbuf, len, seq) || t_recv(fd, r->rbuf, len, seq)
				   : t_recv(fd, r->rbuf, len, seq) || t_send(fd, r->sbuf, len, seq);
		if (e)
			return fail(r, "tcp ping-pong failed or data damaged");
	}
	*lat = (now_s() - t0) / p->lat_iters / 2 * 1e6;
	return 0;
}

static int t_bandwidth(struct rank *r, int fd, const struct plan *p, double *bw)
{
	uint32_t len = (uint32_t)p->size, ack = 0;
	int total = p->bw_warm + p->bw_reps;
	double t0 = 0;
	for (int rep = 0; rep < total; rep++) {
		uint32_t seq = (uint32_t)rep;
		if (rep == p->bw_warm)
			t0 = now_s();
		stamp(r->sbuf, len, seq);
		for (int w = 0; w < p->window; w++) {
			int e = r->id == 0 ? t_send(fd, r->sbuf, len, seq)
					   : t_recv(fd, r->rbuf, len, seq);
			if (e)
				return fail(r, "tcp stream failed or data damaged");
		}
		if (r->id == 0 ? full_io(fd, &ack, sizeof(ack), 0) : full_io(fd, &ack, sizeof(ack), 1))
			return fail(r, "tcp ack failed");
	}
	*bw = (double)p->size * p->window * p->bw_reps / (now_s() - t0) / 1e6;
	return 0;
}

static int tcp_setup(int fd)
{
	int one = 1;
	struct timeval tv = {.tv_sec = (time_t)WAIT_S};
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -1;
	return 0;
}

static int tcp_connect_pair(struct rank *r)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int fd = -1, lfd = -1;
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
	if (fd >= 0 && tcp_setup(fd)) {
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
	for (int i = 0; e == 0 && i < g_nsizes; i++) {
		struct result *res = &g_sh->res[i];
		double lat = -1, bw = -1;
		e = t_latency(r, fd, &g_plan[i], &lat);
		if (e == 0)
			e = t_bandwidth(r, fd, &g_plan[i], &bw);
		if (r->id == 0) {
			res->tcp_lat = lat;
			res->tcp_bw = bw;
		}
	}
	close(fd);
	return e;
}

/* ---- driver ---- */

static int rank_main(int id, size_t maxsize)
{
	struct rank r = {.id = id, .peer = -1};
	r.sbuf = calloc(1, maxsize ? maxsize : 1);
	r.rbuf = calloc(1, maxsize ? maxsize : 1);
	if (!r.sbuf || !r.rbuf)
		return fail(&r, "out of memory");
	int e = sctp_phase(&r);
	if (e == 0)
		e = barrier(NULL);
	if (e == 0)
		e = tcp_phase(&r);
	free(r.sbuf);
	free(r.rbuf);
	return e ? 1 : 0;
}

static int scaled(double n, double scale, int min)
{
	double v = n * scale;
	return v < min ? min : (int)v;
}

static void make_plan(struct plan *p, size_t size, double scale)
{
	double lat = size <= 4096 ? 2000 : size <= 32768 ? 1000 : size <= 65536 ? 500
		   : size <= 262144 ? 200 : size <= 1048576 ? 60 : 20;
	p->size = size;
	p->lat_iters = scaled(lat, scale, 3);
	p->lat_warm = scaled(lat / 10, scale, 2);
	size_t w = size ? WINDOW_BYTES / size : WINDOW_MAX;
	p->window = w > WINDOW_MAX ? WINDOW_MAX : w < 2 ? 2 : (int)w;
	/* about 256 MiB per size, between 10 and 300 windows */
	double reps = size ? 268435456.0 / ((double)size * p->window) : 300;
	reps = reps < 10 ? 10 : reps > 300 ? 300 : reps;
	p->bw_reps = scaled(reps, scale, 3);
	p->bw_warm = scaled(reps / 10, scale, 1);
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

static void usage(FILE *f)
{
	fprintf(f, "usage: sctpt_bench [--sizes LIST] [--iters-scale F] [--quick]\n"
		   "  --sizes LIST      comma-separated message sizes, K/M suffixes allowed\n"
		   "                    (default 0,8,64,512,4K,32K,64K,256K,1M,4M; at most 64M)\n"
		   "  --iters-scale F   multiply every iteration count by F (default 1)\n"
		   "  --quick           same as --iters-scale 0.1\n"
		   "  --wait            drive the core with sctpt_wait(ep, 1) (sleeps in poll, like\n"
		   "                    the blocking TCP side) instead of busy-polling sctpt_progress\n");
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

static void print_num(double v, const char *fmt)
{
	if (v < 0)
		printf(" | %12s", "-");
	else
		printf(fmt, v);
}

static void print_table(void)
{
	printf("%9s | %14s | %12s | %12s | %12s\n", "size", "sctp lat (us)", "tcp lat (us)",
	       "sctp MB/s", "tcp MB/s");
	printf("----------+----------------+--------------+--------------+-------------\n");
	for (int i = 0; i < g_nsizes; i++) {
		const struct result *r = &g_sh->res[i];
		char sz[32];
		fmt_size(g_plan[i].size, sz, sizeof(sz));
		printf("%9s", sz);
		if (r->sctp_lat < 0)
			printf(" | %14s", "-");
		else
			printf(" | %14.2f", r->sctp_lat);
		print_num(r->tcp_lat, " | %12.2f");
		print_num(r->sctp_bw, " | %12.1f");
		print_num(r->tcp_bw, " | %12.1f");
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	size_t sizes[MAX_SIZES] = {0, 8, 64, 512, 4096, 32768, 65536, 262144, 1048576, 4194304};
	double scale = 1.0;
	g_nsizes = 10;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			g_nsizes = parse_sizes(argv[++i], sizes);
			if (g_nsizes <= 0) {
				fprintf(stderr, "sctpt_bench: bad --sizes '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--iters-scale") && i + 1 < argc) {
			char *end;
			scale = strtod(argv[++i], &end);
			if (*end || !(scale > 0) || scale > 100) {
				fprintf(stderr, "sctpt_bench: bad --iters-scale '%s'\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--wait")) {
			g_block = 1;
		} else if (!strcmp(argv[i], "--quick")) {
			scale = 0.1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	size_t maxsize = 0;
	for (int i = 0; i < g_nsizes; i++) {
		make_plan(&g_plan[i], sizes[i], scale);
		if (sizes[i] > maxsize)
			maxsize = sizes[i];
	}
	g_sh = mmap(NULL, sizeof(*g_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_sh == MAP_FAILED) {
		perror("sctpt_bench: mmap");
		return 1;
	}
	for (int i = 0; i < MAX_SIZES; i++)
		g_sh->res[i] = (struct result){-1, -1, -1, -1};
	printf("sctpt_bench: loopback 127.0.0.1, iterations x%g, sctp side %s\n", scale,
	       g_block ? "sleeps in sctpt_wait" : "busy-polls sctpt_progress");
	fflush(NULL);
	pid_t pids[2];
	int failed = 0;
	unsigned limit = (unsigned)(600 * (scale < 1 ? 1 : scale)) + 60;
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
	print_table();
	munmap(g_sh, sizeof(*g_sh));
	return failed;
}
