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
 * Usage: ofi_bench -p PROVIDER [-t lat,bw,mr] [-m MAX] [-q SCALE] [-n NS0,NS1] [-s A0,A1]
 *   -n: process i enters network namespace NSi (/run/netns/NSi) first: two hosts on one
 *   -s: process i asks fi_getinfo for source address Ai (node, FI_SOURCE)
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
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

static void open_all(const char *prov, const char *src, size_t max, int fd)
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
	h->domain_attr->threading = FI_THREAD_DOMAIN;
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
	sbuf = aligned_alloc(4096, max + 4096);
	rbuf = aligned_alloc(4096, max + 4096);
	memset(sbuf, 'a', max + 4096);
	memset(rbuf, 'b', max + 4096);
	if (info->domain_attr->mr_mode & FI_MR_LOCAL) {
		/* one registration over both buffers' pages would do; two keep it simple */
		static struct fid_mr *rmr;
		TRY(fi_mr_reg(domain, sbuf, max + 4096, FI_SEND | FI_RECV, 0, 1, 0, &mr, NULL));
		TRY(fi_mr_reg(domain, rbuf, max + 4096, FI_SEND | FI_RECV, 0, 2, 0, &rmr, NULL));
		desc = fi_mr_desc(mr);
	}
	TRY(fi_getname(&ep->fid, name, &len));
	xfer(fd, &len, sizeof(len), 1);
	xfer(fd, name, len, 1);
	xfer(fd, &len, sizeof(len), 0);
	if (len > sizeof(other))
		exit(1);
	xfer(fd, other, len, 0);
	if (fi_av_insert(av, other, 1, &peer, 0, NULL) != 1)
		exit(1);
}

static void close_all(void)
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

static void send1(size_t size, uint64_t tag)
{
	if (size <= info->tx_attr->inject_size) {
		POST(fi_tinject(ep, sbuf, size, peer, tag), txcq);
	} else {
		POST(fi_tsend(ep, sbuf, size, desc, peer, tag, &ctx[0]), txcq);
		reap(txcq, 1);
	}
}

static void post_recv(size_t size, uint64_t tag)
{
	POST(fi_trecv(ep, rbuf, size, desc, FI_ADDR_UNSPEC, tag, 0, &ctx[1]), rxcq);
}

/* Each side has its next receive posted before it sends (fabtests' pre-posted ping-pong);
 * the last receive of a size is consumed by a final round trip outside the timing. */
static void latency(int rank, size_t max, double q)
{
	for (size_t size = 0; size <= max; size = size ? size * 2 : 1) {
		int loop = (int)((size > LARGE ? 1000 : 10000) * q), skip = size > LARGE ? 10 : 100;
		double t0 = 0, t1;
		if (loop < 1)
			loop = 1;
		post_recv(size, TAG_DATA);
		for (int i = 0; i < loop + skip; i++) {
			if (i == skip)
				t0 = now();
			if (rank == 0) {
				send1(size, TAG_DATA);
				reap(rxcq, 1);
				post_recv(size, TAG_DATA);
			} else {
				reap(rxcq, 1);
				post_recv(size, TAG_DATA);
				send1(size, TAG_DATA);
			}
		}
		t1 = now();
		/* the receive each side still has posted takes one more message */
		if (rank == 0) {
			send1(size, TAG_DATA);
			reap(rxcq, 1);
		} else {
			reap(rxcq, 1);
			send1(size, TAG_DATA);
		}
		if (rank == 0)
			printf("lat %zu %.2f\n", size, (t1 - t0) * 1e6 / (2.0 * loop));
		fflush(stdout);
	}
}

/* The bw loop; returns seconds spent on loop windows. */
static double window_loop(int rank, size_t size, int loop, int skip)
{
	double t0 = 0;

	for (int i = 0; i < loop + skip; i++) {
		if (i == skip)
			t0 = now();
		if (rank == 0) {
			/* the ack's receive is posted first, as fabtests have it pre-posted */
			POST(fi_trecv(ep, rbuf, 4, desc, FI_ADDR_UNSPEC, TAG_ACK, 0,
				      &ctx[2 * WINDOW + 1]), rxcq);
			for (int w = 0; w < WINDOW; w++)
				POST(fi_tsend(ep, sbuf, size, desc, peer, TAG_DATA, &ctx[w]), txcq);
			reap(txcq, WINDOW);
			reap(rxcq, 1);
		} else {
			for (int w = 0; w < WINDOW; w++)
				POST(fi_trecv(ep, rbuf, size, desc, FI_ADDR_UNSPEC, TAG_DATA, 0,
					      &ctx[WINDOW + w]), rxcq);
			reap(rxcq, WINDOW);
			POST(fi_tsend(ep, sbuf, 4, desc, peer, TAG_ACK, &ctx[2 * WINDOW]), txcq);
			reap(txcq, 1);
		}
	}
	return now() - t0;
}

static void bandwidth(int rank, size_t max, double q, int rate)
{
	for (size_t size = 1; size <= (rate ? 4096 : max); size *= 2) {
		int loop = (int)((size > LARGE ? 20 : 100) * q), skip = size > LARGE ? 2 : 10;
		if (loop < 1)
			loop = 1;
		double t = window_loop(rank, size, loop, skip);
		if (rank == 0 && rate)
			printf("mr %zu %.0f\n", size, (double)WINDOW * loop / t);
		else if (rank == 0)
			printf("bw %zu %.2f\n", size, (double)size * WINDOW * loop / t / 1e6);
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
	char *ns[2] = {NULL, NULL}, *src[2] = {NULL, NULL};
	size_t max = 4 << 20;
	double q = 1;
	int c, sv[2], st[2] = {0, 0};
	pid_t pid[2];

	while ((c = getopt(argc, argv, "p:t:m:q:n:s:")) != -1) {
		switch (c) {
		case 'p': prov = optarg; break;
		case 't': tests = optarg; break;
		case 'm': max = strtoul(optarg, NULL, 0); break;
		case 'q': q = strtod(optarg, NULL); break;
		case 'n': split2(optarg, ns); break;
		case 's': split2(optarg, src); break;
		default:
			fprintf(stderr, "usage: ofi_bench -p PROVIDER [-t lat,bw,mr] [-m MAX] [-q F] "
				"[-n NS0,NS1] [-s ADDR0,ADDR1]\n");
			return 2;
		}
	}
	if (!prov) {
		fprintf(stderr, "ofi_bench: -p PROVIDER is required\n");
		return 2;
	}
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
			if (ns[r])
				enter_netns(ns[r]);
			open_all(prov, src[r], max, fd);
			xfer(fd, &go, 1, 1);
			xfer(fd, &go, 1, 0);
			if (strstr(tests, "lat"))
				latency(r, max, q);
			if (strstr(tests, "bw"))
				bandwidth(r, max, q, 0);
			if (strstr(tests, "mr"))
				bandwidth(r, max, q, 1);
			xfer(fd, &go, 1, 1); /* both done before either closes */
			xfer(fd, &go, 1, 0);
			close_all();
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
