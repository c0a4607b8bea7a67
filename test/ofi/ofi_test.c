/* The provider tests' shared helpers (see ofi_test.h). */
#include "ofi_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, int rc)
{
	fprintf(stderr, "%s: %s (%d)\n", what, fi_strerror(rc < 0 ? -rc : rc), rc);
	exit(1);
}

struct fi_info *ofi_hints(uint64_t caps)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		die("fi_allocinfo", -FI_ENOMEM);
	h->caps = caps ? caps : FI_MSG | FI_TAGGED | FI_DIRECTED_RECV;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
	h->fabric_attr->prov_name = strdup("sctp");
	/* thread_domain.sh: as Open MPI asks without MPI_THREAD_MULTIPLE */
	if (getenv("OFI_TEST_THREADING") && strcmp(getenv("OFI_TEST_THREADING"), "domain") == 0)
		h->domain_attr->threading = FI_THREAD_DOMAIN;
	return h;
}

void ofi_node_open(struct ofi_node *n, struct fi_info *hints, uint64_t tx_flags)
{
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_UNSPEC};
	struct fi_av_attr ava = {.type = FI_AV_MAP};
	struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP};
	int rc;

	memset(n, 0, sizeof(*n));
	if (!hints)
		hints = ofi_hints(0);
	if ((rc = fi_getinfo(OFI_TEST_VERSION, NULL, NULL, 0, hints, &n->info)))
		die("fi_getinfo (is libsctp-fi.so in FI_PROVIDER_PATH?)", rc);
	if (strcmp(n->info->fabric_attr->prov_name, "sctp") != 0)
		die("fi_getinfo gave another provider", -FI_EOTHER);
	fi_freeinfo(hints);
	if ((rc = fi_fabric(n->info->fabric_attr, &n->fabric, NULL)))
		die("fi_fabric", rc);
	if ((rc = fi_domain(n->fabric, n->info, &n->domain, NULL)))
		die("fi_domain", rc);
	if ((rc = fi_av_open(n->domain, &ava, &n->av, NULL)))
		die("fi_av_open", rc);
	if ((rc = fi_cq_open(n->domain, &cqa, &n->txcq, NULL)) ||
	    (rc = fi_cq_open(n->domain, &cqa, &n->rxcq, NULL)))
		die("fi_cq_open", rc);
	if ((rc = fi_cntr_open(n->domain, &ca, &n->txcntr, NULL)) ||
	    (rc = fi_cntr_open(n->domain, &ca, &n->rxcntr, NULL)))
		die("fi_cntr_open", rc);
	if ((rc = fi_endpoint(n->domain, n->info, &n->ep, NULL)))
		die("fi_endpoint", rc);
	if ((rc = fi_ep_bind(n->ep, &n->av->fid, 0)) ||
	    (rc = fi_ep_bind(n->ep, &n->txcq->fid, FI_TRANSMIT | tx_flags)) ||
	    (rc = fi_ep_bind(n->ep, &n->rxcq->fid, FI_RECV)) ||
	    (rc = fi_ep_bind(n->ep, &n->txcntr->fid, FI_SEND)) ||
	    (rc = fi_ep_bind(n->ep, &n->rxcntr->fid, FI_RECV)))
		die("fi_ep_bind", rc);
	if ((rc = fi_enable(n->ep)))
		die("fi_enable", rc);
	n->namelen = sizeof(n->name);
	if ((rc = fi_getname(&n->ep->fid, n->name, &n->namelen)))
		die("fi_getname", rc);
	if (fi_av_insert(n->av, n->name, 1, &n->self, 0, NULL) != 1)
		die("fi_av_insert (self)", -FI_EINVAL);
	n->peer = FI_ADDR_NOTAVAIL;
}

void ofi_node_close(struct ofi_node *n)
{
	struct fid *f[] = {n->ep ? &n->ep->fid : NULL, n->txcntr ? &n->txcntr->fid : NULL,
			   n->rxcntr ? &n->rxcntr->fid : NULL, n->txcq ? &n->txcq->fid : NULL,
			   n->rxcq ? &n->rxcq->fid : NULL, n->av ? &n->av->fid : NULL,
			   n->domain ? &n->domain->fid : NULL, n->fabric ? &n->fabric->fid : NULL};
	int rc;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i] && (rc = fi_close(f[i])))
			die("fi_close", rc);
	fi_freeinfo(n->info);
	memset(n, 0, sizeof(*n));
}

void ofi_xfer(int fd, void *buf, size_t len, int out)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = out ? write(fd, (char *)buf + done, len - done)
				: read(fd, (char *)buf + done, len - done);
		if (r <= 0) {
			fprintf(stderr, "the other process is gone\n");
			exit(1);
		}
		done += (size_t)r;
	}
}

void ofi_send_u64(int fd, uint64_t v)
{
	ofi_xfer(fd, &v, sizeof(v), 1);
}

uint64_t ofi_recv_u64(int fd)
{
	uint64_t v;

	ofi_xfer(fd, &v, sizeof(v), 0);
	return v;
}

void ofi_swap_names(struct ofi_node *n, int fd)
{
	uint8_t other[OFI_NAME_LEN];

	ofi_send_u64(fd, n->namelen);
	ofi_xfer(fd, n->name, n->namelen, 1);
	size_t len = ofi_recv_u64(fd);
	if (len > sizeof(other))
		die("peer name too long", -FI_EINVAL);
	ofi_xfer(fd, other, len, 0);
	if (fi_av_insert(n->av, other, 1, &n->peer, 0, NULL) != 1)
		die("fi_av_insert (peer)", -FI_EINVAL);
}

void ofi_sync(int fd)
{
	ofi_send_u64(fd, 0x5eed);
	if (ofi_recv_u64(fd) != 0x5eed)
		die("out-of-band sync", -FI_EOTHER);
}

int ofi_killed_rank = -1;

static int ok_status(int rank, int st)
{
	if (rank == ofi_killed_rank)
		return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int ofi_pair(int seconds, int (*body)(int rank, int fd))
{
	int sv[2], st0 = 0, st1 = 0;
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -1;
	fflush(NULL);
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		close(sv[0]);
		alarm((unsigned)seconds);
		int rc = body(1, sv[1]);
		fflush(NULL);
		_exit(rc ? 1 : 0);
	}
	close(sv[1]);
	pid_t me = fork();
	if (me == 0) {
		alarm((unsigned)seconds);
		int rc = body(0, sv[0]);
		fflush(NULL);
		_exit(rc ? 1 : 0);
	}
	close(sv[0]);
	waitpid(me, &st0, 0);
	waitpid(child, &st1, 0);
	if (!ok_status(0, st0) || !ok_status(1, st1)) {
		fprintf(stderr, "rank 0: %s %d, rank 1: %s %d\n",
			WIFSIGNALED(st0) ? "signal" : "exit",
			WIFSIGNALED(st0) ? WTERMSIG(st0) : WEXITSTATUS(st0),
			WIFSIGNALED(st1) ? "signal" : "exit",
			WIFSIGNALED(st1) ? WTERMSIG(st1) : WEXITSTATUS(st1));
		return 1;
	}
	return 0;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int ofi_cq_wait(struct fid_cq *cq, struct fi_cq_tagged_entry *e, struct fi_cq_err_entry *err)
{
	double t0 = now();
	struct fi_cq_tagged_entry tmp;
	ssize_t rc;

	for (;;) {
		rc = fi_cq_read(cq, e ? e : &tmp, 1);
		if (rc == 1)
			return 1;
		if (rc == -FI_EAVAIL) {
			struct fi_cq_err_entry junk;
			memset(err ? err : &junk, 0, sizeof(junk));
			if (fi_cq_readerr(cq, err ? err : &junk, 0) == 1)
				return 0;
		} else if (rc != -FI_EAGAIN) {
			fprintf(stderr, "fi_cq_read: %s\n", fi_strerror((int)-rc));
			return -1;
		}
		if (now() - t0 > OFI_TEST_TIMEOUT)
			return -1;
	}
}

int ofi_cntr_wait(struct fid_cntr *c, uint64_t v)
{
	return fi_cntr_wait(c, v, OFI_TEST_TIMEOUT * 1000) == 0 ? 0 : -1;
}

void ofi_fill(void *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (unsigned char)x;
	}
}

int ofi_check(const void *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (p[i] != (unsigned char)x)
			return -1;
	}
	return 0;
}
