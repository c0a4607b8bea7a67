/*
 * ofi_test.h: what the provider's tests share. Everything goes through the real libfabric
 * (fi_getinfo finds libsctp-fi.so through FI_PROVIDER_PATH, set by Makefile.am) and real
 * SCTP associations between forked processes on loopback.
 *
 *   ofi_node_open(&n, hints)   fabric, domain, AV, CQs (tagged format), counters, endpoint
 *   ofi_pair(secs, body)       forks two processes: body(0, fd) and body(1, fd), fd a
 *                              socketpair to swap names and synchronise; each returns its
 *                              failure count; 0 when both passed (bounded by alarm)
 *   ofi_swap_names(&n, fd)     each side inserts the other's name: n.peer
 *   ofi_sync(fd)               a barrier of two
 *   ofi_cq_wait(cq, &e, &err)  one entry (1) or error entry (0), -1 after OFI_TEST_TIMEOUT s
 */
#ifndef OFI_TEST_H
#define OFI_TEST_H

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <stddef.h>
#include <stdint.h>

#define OFI_TEST_VERSION FI_VERSION(1, 17)
#define OFI_TEST_TIMEOUT 30 /* seconds any single wait may take on a loaded machine */
#define OFI_NAME_LEN 64

struct ofi_node {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *txcq, *rxcq;
	struct fid_cntr *txcntr, *rxcntr;
	struct fid_ep *ep;
	uint8_t name[OFI_NAME_LEN];
	size_t namelen;
	fi_addr_t peer, self;
};

/* Hints for the provider "sctp": RDM, caps (0: FI_MSG | FI_TAGGED | FI_DIRECTED_RECV);
 * threading FI_THREAD_DOMAIN if OFI_TEST_THREADING=domain (else unspecified: FI_THREAD_SAFE). */
struct fi_info *ofi_hints(uint64_t caps);
/* Opens everything on hints (NULL: ofi_hints(0); freed here); tx_flags are the CQ bind flags added to
 * FI_TRANSMIT (e.g. FI_SELECTIVE_COMPLETION). Exits on failure. */
void ofi_node_open(struct ofi_node *n, struct fi_info *hints, uint64_t tx_flags);
void ofi_node_close(struct ofi_node *n);
void ofi_swap_names(struct ofi_node *n, int fd);
void ofi_sync(int fd);
void ofi_send_u64(int fd, uint64_t v);
/* Exactly len bytes to (out 1) or from the other process. */
void ofi_xfer(int fd, void *buf, size_t len, int out);
uint64_t ofi_recv_u64(int fd);
int ofi_pair(int seconds, int (*body)(int rank, int fd));
/* The rank that is meant to end by SIGKILL (peer-death tests); -1: none. */
extern int ofi_killed_rank;
int ofi_cq_wait(struct fid_cq *cq, struct fi_cq_tagged_entry *e, struct fi_cq_err_entry *err);
/* Waits until the counter reaches v; 0 or -1 on timeout. */
int ofi_cntr_wait(struct fid_cntr *c, uint64_t v);
/* Retries an operation while it says -FI_EAGAIN, reading cq meanwhile. */
#define OFI_RETRY(cq, call)                                                                  \
	({                                                                                   \
		ssize_t ofi_rc_;                                                             \
		while ((ofi_rc_ = (call)) == -FI_EAGAIN)                                     \
			fi_cq_read((cq), NULL, 0);                                           \
		ofi_rc_;                                                                     \
	})

void ofi_fill(void *buf, size_t len, uint32_t seed);
int ofi_check(const void *buf, size_t len, uint32_t seed); /* 0 if the pattern is intact */

#endif
