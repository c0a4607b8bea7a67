/*
 * The provider's RDM behaviour between two processes over real SCTP associations, the way
 * libfabric's own suite probes an RDM provider: messages of every size with data checks,
 * tags with ignore bits, directed receives, remote CQ data, unexpected messages, peek/claim/
 * discard, cancel, truncation, multi-receive buffers, counters, selective completion,
 * delivery-complete sends, injects, sends to oneself, fi_cq_sread, wait sets, a process away from
 * manual progress, automatic progress and a peer that closes.
 */
#include "ofi_test.h"
#include "common/sm_check.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_A 0x1234000000000001ULL

static size_t sizes[] = {0, 1, 63, 64, 1000, 4095, 4096, 4097, 65536, 65537, 1 << 20,
			 (4 << 20) + 3};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static int wait_ok(struct fid_cq *cq, struct fi_cq_tagged_entry *e)
{
	struct fi_cq_err_entry err;
	int rc = ofi_cq_wait(cq, e, &err);

	if (rc == 0)
		fprintf(stderr, "error completion: %s (olen %zu)\n", fi_strerror(err.err),
			err.olen);
	return rc == 1;
}

/* Messages and tagged messages of every size, both ways, data checked. */
static int t_pingpong(int rank, int fd)
{
	struct ofi_node n;
	size_t max = sizes[NSIZES - 1];
	char *tx = malloc(max), *rx = malloc(max);
	struct fi_cq_tagged_entry e;

	REQUIRE(tx && rx);
	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	for (int tagged = 0; tagged < 2; tagged++) {
		for (size_t i = 0; i < NSIZES; i++) {
			size_t len = sizes[i];
			uint32_t seed = (uint32_t)(i * 2 + tagged);
			for (int turn = 0; turn < 2; turn++) {
				if (turn == rank) {
					ofi_fill(tx, len, seed + 100 * turn);
					CHECK_EQ(tagged ? fi_tsend(n.ep, tx, len, NULL, n.peer, TAG_A + i,
								   &e)
							: fi_send(n.ep, tx, len, NULL, n.peer, &e), 0);
					CHECK(wait_ok(n.txcq, &e));
					CHECK(e.flags & FI_SEND);
				} else {
					memset(rx, 0, len);
					CHECK_EQ(tagged ? fi_trecv(n.ep, rx, max, NULL, FI_ADDR_UNSPEC,
								   TAG_A + i, 0, &e)
							: fi_recv(n.ep, rx, max, NULL, FI_ADDR_UNSPEC, &e), 0);
					CHECK(wait_ok(n.rxcq, &e));
					CHECK_EQ(e.len, len);
					CHECK(e.flags & FI_RECV);
					CHECK(e.flags & (tagged ? FI_TAGGED : FI_MSG));
					if (tagged)
						CHECK_EQ(e.tag, TAG_A + i);
					CHECK(ofi_check(rx, len, seed + 100 * turn) == 0,
					      "data of %zu bytes", len);
				}
			}
		}
	}
	/* counters saw every operation */
	CHECK_EQ(fi_cntr_read(n.txcntr), 2 * NSIZES);
	CHECK_EQ(fi_cntr_read(n.rxcntr), 2 * NSIZES);
	ofi_sync(fd);
	ofi_node_close(&n);
	free(tx);
	free(rx);
	return sm_check_failures;
}

/* Ignore bits, directed receives (two sending endpoints), remote CQ data, FI_SOURCE. */
static int t_matching(int rank, int fd)
{
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	uint64_t v;

	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	if (rank == 0) {
		/* a second endpoint in the same domain sends too */
		struct fid_ep *ep2;
		uint8_t name2[OFI_NAME_LEN];
		size_t len2 = sizeof(name2);
		REQUIRE(fi_endpoint(n.domain, n.info, &ep2, NULL) == 0);
		REQUIRE(fi_ep_bind(ep2, &n.av->fid, 0) == 0);
		REQUIRE(fi_ep_bind(ep2, &n.txcq->fid, FI_TRANSMIT) == 0);
		REQUIRE(fi_ep_bind(ep2, &n.rxcq->fid, FI_RECV) == 0);
		REQUIRE(fi_enable(ep2) == 0);
		REQUIRE(fi_getname(&ep2->fid, name2, &len2) == 0);
		ofi_send_u64(fd, len2);
		ofi_xfer(fd, name2, len2, 1);
		ofi_sync(fd); /* rank 1 posted its receives */
		v = 1;
		CHECK_EQ(fi_tsenddata(n.ep, &v, sizeof(v), NULL, 0xdead, n.peer, 0xab01, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
		v = 2;
		CHECK_EQ(fi_tsenddata(ep2, &v, sizeof(v), NULL, 0xbeef, n.peer, 0xcd02, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
		ofi_sync(fd);
		CHECK_EQ(fi_close(&ep2->fid), 0);
	} else {
		uint8_t name2[OFI_NAME_LEN];
		fi_addr_t a2;
		uint64_t r1 = 0, r2 = 0;
		size_t len2 = ofi_recv_u64(fd);
		REQUIRE(len2 <= sizeof(name2));
		ofi_xfer(fd, name2, len2, 0);
		REQUIRE(fi_av_insert(n.av, name2, 1, &a2, 0, NULL) == 1);
		/* first receive: only from endpoint 2, any tag with 0xcd in the second byte */
		CHECK_EQ(fi_trecv(n.ep, &r2, sizeof(r2), NULL, a2, 0xcd00, 0xff, &r2), 0);
		CHECK_EQ(fi_trecv(n.ep, &r1, sizeof(r1), NULL, FI_ADDR_UNSPEC, 0xab00, 0x00ff, &r1),
			 0);
		ofi_sync(fd);
		for (int k = 0; k < 2; k++) {
			int rc = 0;
			for (long tries = 0; tries < 100000000L; tries++)
				if ((rc = (int)fi_cq_readfrom(n.rxcq, &e, 1, &src)) != -FI_EAGAIN)
					break;
			CHECK_EQ(rc, 1);
			if (rc == -FI_EAVAIL) {
				struct fi_cq_err_entry err = {0};
				fi_cq_readerr(n.rxcq, &err, 0);
				fprintf(stderr, "error %d olen %zu\n", err.err, err.olen);
			}
			CHECK(e.flags & FI_REMOTE_CQ_DATA);
			if (e.op_context == &r1) {
				CHECK_EQ(r1, 1);
				CHECK_EQ(e.data, 0xdead);
				CHECK_EQ(e.tag, 0xab01);
				CHECK_EQ(src, n.peer);
			} else {
				CHECK(e.op_context == &r2);
				CHECK_EQ(r2, 2);
				CHECK_EQ(e.data, 0xbeef);
				CHECK_EQ(e.tag, 0xcd02);
				CHECK_EQ(src, a2);
			}
		}
		ofi_sync(fd);
	}
	ofi_node_close(&n);
	return sm_check_failures;
}

/* Messages that arrive before their receives, of every size, matched in send order. */
static int t_unexpected(int rank, int fd)
{
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	size_t max = 8 << 20;
	char *buf = malloc(max);

	REQUIRE(buf);
	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	if (rank == 0) {
		for (size_t i = 0; i < NSIZES; i++) {
			ofi_fill(buf, sizes[i], (uint32_t)i);
			CHECK_EQ(fi_tsend(n.ep, buf, sizes[i], NULL, n.peer, 7, &e), 0);
			CHECK(wait_ok(n.txcq, &e));
		}
		/* an 8 MiB one, and untagged ones in between */
		ofi_fill(buf, max, 99);
		CHECK_EQ(fi_tsend(n.ep, buf, max, NULL, n.peer, 8, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
		CHECK_EQ(fi_send(n.ep, "m1", 3, NULL, n.peer, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
		ofi_sync(fd);
	} else {
		ofi_sync(fd); /* everything was sent before any receive is posted */
		/* the domain still has to take them in: read the (empty) CQ until they are */
		CHECK_EQ(fi_cntr_read(n.rxcntr), 0);
		CHECK_EQ(fi_recv(n.ep, buf, 16, NULL, FI_ADDR_UNSPEC, &e), 0);
		CHECK(wait_ok(n.rxcq, &e));
		CHECK_EQ(e.len, 3);
		CHECK(memcmp(buf, "m1", 3) == 0);
		CHECK_EQ(fi_trecv(n.ep, buf, max, NULL, FI_ADDR_UNSPEC, 8, 0, &e), 0);
		CHECK(wait_ok(n.rxcq, &e));
		CHECK_EQ(e.len, max);
		CHECK(ofi_check(buf, max, 99) == 0);
		for (size_t i = 0; i < NSIZES; i++) {
			CHECK_EQ(fi_trecv(n.ep, buf, max, NULL, FI_ADDR_UNSPEC, 7, 0, &e), 0);
			CHECK(wait_ok(n.rxcq, &e));
			CHECK_EQ(e.len, sizes[i], "in send order");
			CHECK(ofi_check(buf, sizes[i], (uint32_t)i) == 0);
		}
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	free(buf);
	return sm_check_failures;
}

/* FI_PEEK, FI_PEEK | FI_CLAIM then FI_CLAIM, FI_PEEK | FI_DISCARD, FI_ENOMSG. */
static int t_peek_claim(int rank, int fd)
{
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct fi_context ctx;
	char buf[64];
	struct iovec iov = {buf, sizeof(buf)};
	struct fi_msg_tagged m = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
				  .context = &ctx};

	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	if (rank == 0) {
		CHECK_EQ(fi_tsenddata(n.ep, "peekme", 7, NULL, 42, n.peer, 0x10, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
		CHECK_EQ(fi_tsend(n.ep, "dropme", 7, NULL, n.peer, 0x20, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
		ofi_sync(fd);
	} else {
		ofi_sync(fd);
		/* nothing with tag 0x30: FI_ENOMSG */
		m.tag = 0x30;
		CHECK_EQ(fi_trecvmsg(n.ep, &m, FI_PEEK), 0);
		CHECK_EQ(ofi_cq_wait(n.rxcq, &e, &err), 0);
		CHECK_EQ(err.err, FI_ENOMSG);
		CHECK(err.op_context == &ctx);
		/* peek 0x10 until it has arrived: length, tag and data, no data copied */
		m.tag = 0x10;
		for (int tries = 0; tries < 100000; tries++) {
			CHECK_EQ(fi_trecvmsg(n.ep, &m, FI_PEEK), 0);
			if (ofi_cq_wait(n.rxcq, &e, &err) == 1)
				break;
			CHECK_EQ(err.err, FI_ENOMSG);
		}
		CHECK_EQ(e.len, 7);
		CHECK_EQ(e.tag, 0x10);
		CHECK_EQ(e.data, 42);
		CHECK(e.flags & FI_REMOTE_CQ_DATA);
		/* claim it, then take it with FI_CLAIM */
		CHECK_EQ(fi_trecvmsg(n.ep, &m, FI_PEEK | FI_CLAIM), 0);
		CHECK_EQ(ofi_cq_wait(n.rxcq, &e, &err), 1);
		/* claimed: an ordinary receive no longer sees it */
		CHECK_EQ(fi_trecvmsg(n.ep, &m, FI_PEEK), 0);
		CHECK_EQ(ofi_cq_wait(n.rxcq, &e, &err), 0);
		CHECK_EQ(err.err, FI_ENOMSG);
		memset(buf, 0, sizeof(buf));
		CHECK_EQ(fi_trecvmsg(n.ep, &m, FI_CLAIM), 0);
		CHECK_EQ(ofi_cq_wait(n.rxcq, &e, &err), 1);
		CHECK_EQ(e.len, 7);
		CHECK(strcmp(buf, "peekme") == 0);
		/* 0x20: peek and discard, then it is gone */
		m.tag = 0x20;
		for (int tries = 0; tries < 100000; tries++) {
			CHECK_EQ(fi_trecvmsg(n.ep, &m, FI_PEEK | FI_DISCARD), 0);
			if (ofi_cq_wait(n.rxcq, &e, &err) == 1)
				break;
		}
		CHECK_EQ(e.len, 7);
		CHECK_EQ(fi_trecvmsg(n.ep, &m, FI_PEEK), 0);
		CHECK_EQ(ofi_cq_wait(n.rxcq, &e, &err), 0);
		CHECK_EQ(err.err, FI_ENOMSG);
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	return sm_check_failures;
}

/* fi_cancel gives FI_ECANCELED; a receive too small gives FI_ETRUNC with tag and data. */
static int t_cancel_trunc(int rank, int fd)
{
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	char big[1000], small[100];
	int ctx1, ctx2;

	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	if (rank == 1) {
		CHECK_EQ(fi_trecv(n.ep, small, sizeof(small), NULL, FI_ADDR_UNSPEC, 5, 0, &ctx1), 0);
		CHECK_EQ(fi_cancel(&n.ep->fid, &ctx1), 0);
		CHECK_EQ(ofi_cq_wait(n.rxcq, &e, &err), 0);
		CHECK_EQ(err.err, FI_ECANCELED);
		CHECK(err.op_context == &ctx1);
		CHECK_EQ(fi_cancel(&n.ep->fid, &ctx1), -FI_ENOENT, "cancelled once only");
		CHECK_EQ(fi_trecv(n.ep, small, sizeof(small), NULL, FI_ADDR_UNSPEC, 6, 0, &ctx2), 0);
		ofi_sync(fd);
		CHECK_EQ(ofi_cq_wait(n.rxcq, &e, &err), 0);
		CHECK_EQ(err.err, FI_ETRUNC);
		CHECK(err.op_context == &ctx2);
		CHECK_EQ(err.len, sizeof(small));
		CHECK_EQ(err.olen, sizeof(big) - sizeof(small));
		CHECK_EQ(err.tag, 6);
		CHECK_EQ(err.data, 77);
		CHECK(err.flags & FI_REMOTE_CQ_DATA);
		CHECK(ofi_check(small, sizeof(small), 3) == 0, "the part that fit");
	} else {
		ofi_sync(fd);
		ofi_fill(big, sizeof(big), 3);
		CHECK_EQ(fi_tsenddata(n.ep, big, sizeof(big), NULL, 77, n.peer, 6, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	return sm_check_failures;
}

/* A multi-receive buffer takes messages until less than FI_OPT_MIN_MULTI_RECV is left. */
static int t_multi_recv(int rank, int fd)
{
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	char buf[16384];
	size_t min = 4000;
	struct iovec iov = {buf, sizeof(buf)};
	struct fi_msg m = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
			   .context = buf};

	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	if (rank == 1) {
		CHECK_EQ(fi_setopt(&n.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min,
				   sizeof(min)), 0);
		CHECK_EQ(fi_recvmsg(n.ep, &m, FI_MULTI_RECV), 0);
		ofi_sync(fd);
		/* 5000-byte messages: 0, 5000, 10000 fit; after the third 1384 are left < 4000 */
		for (int k = 0; k < 3; k++) {
			CHECK(wait_ok(n.rxcq, &e));
			CHECK_EQ(e.len, 5000);
			CHECK(e.buf == buf + 5000 * k);
			CHECK(ofi_check(e.buf, 5000, (uint32_t)k) == 0);
			CHECK_EQ((e.flags & FI_MULTI_RECV) != 0, k == 2, "released with the third");
		}
		/* the fourth waits for the next buffer */
		CHECK_EQ(fi_recv(n.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, buf), 0);
		CHECK(wait_ok(n.rxcq, &e));
		CHECK(ofi_check(buf, 5000, 3) == 0);
	} else {
		char msg[5000];
		ofi_sync(fd);
		for (int k = 0; k < 4; k++) {
			ofi_fill(msg, sizeof(msg), (uint32_t)k);
			CHECK_EQ(fi_send(n.ep, msg, sizeof(msg), NULL, n.peer, &e), 0);
			CHECK(wait_ok(n.txcq, &e));
		}
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	return sm_check_failures;
}

/* FI_SELECTIVE_COMPLETION, fi_inject (no completion), FI_DELIVERY_COMPLETE, counters. */
static int t_completion(int rank, int fd)
{
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	char buf[100] = "x";
	struct iovec iov = {buf, sizeof(buf)};
	struct fi_msg_tagged m = {.msg_iov = &iov, .iov_count = 1, .tag = 9};
	int ctx_a, ctx_b;

	ofi_node_open(&n, NULL, rank == 0 ? FI_SELECTIVE_COMPLETION : 0);
	ofi_swap_names(&n, fd);
	m.addr = n.peer;
	if (rank == 0) {
		m.context = &ctx_a;
		CHECK_EQ(fi_tsendmsg(n.ep, &m, 0), 0);
		m.context = &ctx_b;
		CHECK_EQ(fi_tsendmsg(n.ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE), 0);
		CHECK_EQ(fi_tinject(n.ep, buf, 10, n.peer, 9), 0);
		CHECK(wait_ok(n.txcq, &e));
		CHECK(e.op_context == &ctx_b, "only the send with FI_COMPLETION completes");
		CHECK_EQ(ofi_cntr_wait(n.txcntr, 3), 0, "the counter counts all three");
		CHECK_EQ(fi_cq_read(n.txcq, &e, 1), -FI_EAGAIN);
		ofi_sync(fd);
	} else {
		for (int k = 0; k < 3; k++) {
			CHECK_EQ(fi_trecv(n.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, 9, 0, &e), 0);
			CHECK(wait_ok(n.rxcq, &e));
		}
		CHECK_EQ(fi_cntr_read(n.rxcntr), 3);
		ofi_sync(fd);
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	return sm_check_failures;
}

/*
 * Injects own their data when the call returns: every inject call (fi_tinject, fi_tinjectdata,
 * fi_tsendmsg with FI_INJECT over two iovecs) of sizes around the provider's inline room and
 * up to the inject size has its buffer overwritten right after, and the receiver checks the
 * bytes. Once with nothing queued before them (a same-host peer takes them from the caller's
 * buffer), once behind a 4 MiB send still in flight (they must be copied).
 */
static int t_inject(int rank, int fd)
{
	static const size_t isz[] = {1, 63, 64, 65, 1000, 4096};
	enum { NI = sizeof(isz) / sizeof(isz[0]), NM = 3 * NI, BIG = 4 << 20 };
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	char *big = malloc(BIG), *buf = malloc(NM * 4096);

	REQUIRE(big && buf);
	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	for (int behind = 0; behind < 2; behind++) {
		if (rank == 0) {
			char out[4096];
			ofi_sync(fd); /* the receives are posted */
			if (behind) {
				ofi_fill(big, BIG, 77);
				CHECK_EQ(fi_tsend(n.ep, big, BIG, NULL, n.peer, 500, big), 0);
			}
			for (int m = 0; m < NM; m++) {
				size_t len = isz[m % NI];
				uint32_t seed = (uint32_t)(behind * 100 + m);
				ssize_t rc;
				ofi_fill(out, len, seed);
				if (m < NI) {
					rc = OFI_RETRY(n.txcq, fi_tinject(n.ep, out, len, n.peer, m));
				} else if (m < 2 * NI) {
					rc = OFI_RETRY(n.txcq, fi_tinjectdata(n.ep, out, len, 0x5eed + m,
									      n.peer, m));
				} else {
					struct iovec iov[2] = {{out, len / 2}, {out + len / 2, len - len / 2}};
					struct fi_msg_tagged msg = {.msg_iov = iov, .iov_count = 2,
								    .addr = n.peer, .tag = (uint64_t)m};
					rc = OFI_RETRY(n.txcq, fi_tsendmsg(n.ep, &msg, FI_INJECT));
				}
				CHECK_EQ(rc, 0, "inject %d of %zu bytes", m, len);
				memset(out, 0xff, len);
			}
			if (behind)
				CHECK(wait_ok(n.txcq, &e));
		} else {
			if (behind)
				CHECK_EQ(fi_trecv(n.ep, big, BIG, NULL, FI_ADDR_UNSPEC, 500, 0, big), 0);
			for (int m = 0; m < NM; m++) {
				memset(buf + m * 4096, 0, 4096);
				CHECK_EQ(fi_trecv(n.ep, buf + m * 4096, 4096, NULL, FI_ADDR_UNSPEC, m, 0,
						  buf + m * 4096), 0);
			}
			ofi_sync(fd);
			for (int k = 0; k < NM + behind; k++) {
				CHECK(wait_ok(n.rxcq, &e));
				if (e.op_context == big) {
					CHECK(ofi_check(big, BIG, 77) == 0, "the big message");
					continue;
				}
				int m = (int)e.tag;
				REQUIRE(m >= 0 && m < NM && e.op_context == buf + m * 4096);
				CHECK_EQ(e.len, isz[m % NI]);
				CHECK(ofi_check(buf + m * 4096, e.len, (uint32_t)(behind * 100 + m)) == 0,
				      "inject %d of %zu bytes%s", m, e.len, behind ? " behind" : "");
				if (m >= NI && m < 2 * NI)
					CHECK((e.flags & FI_REMOTE_CQ_DATA) && e.data == 0x5eed + (uint64_t)m);
			}
		}
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	free(big);
	free(buf);
	return sm_check_failures;
}

/* fi_cq_sread sleeps until a message comes (sent after a pause) and times out without one;
 * a wait set wakes for a CQ bound to it. */
static int t_sread(int rank, int fd)
{
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	char buf[32];

	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	if (rank == 1) {
		CHECK_EQ(fi_recv(n.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, buf), 0);
		CHECK_EQ(fi_cq_sread(n.rxcq, &e, 1, NULL, 50), -FI_EAGAIN, "nothing yet");
		ofi_sync(fd);
		CHECK_EQ(fi_cq_sread(n.rxcq, &e, 1, NULL, OFI_TEST_TIMEOUT * 1000), 1);
		CHECK(strcmp(buf, "wake") == 0);
		/* a wait set over a new CQ of the same domain */
		struct fi_wait_attr wa = {.wait_obj = FI_WAIT_UNSPEC};
		struct fid_wait *ws;
		CHECK_EQ(fi_wait_open(n.fabric, &wa, &ws), 0);
		struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_SET,
					.wait_set = ws};
		struct fid_cq *cq;
		CHECK_EQ(fi_cq_open(n.domain, &ca, &cq, NULL), 0);
		CHECK_EQ(fi_wait(ws, 20), -FI_ETIMEDOUT);
		CHECK_EQ(fi_close(&cq->fid), 0);
		CHECK_EQ(fi_close(&ws->fid), 0);
		ofi_sync(fd);
	} else {
		ofi_sync(fd);
		usleep(200000);
		CHECK_EQ(fi_send(n.ep, "wake", 5, NULL, n.peer, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
		ofi_sync(fd);
	}
	ofi_node_close(&n);
	return sm_check_failures;
}

/* An endpoint sends to its own name; a second endpoint of the same domain sends to it. */
static int t_self(int rank, int fd)
{
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	char buf[70000], out[70000];

	(void)fd;
	if (rank == 1)
		return 0;
	ofi_node_open(&n, NULL, 0);
	for (int k = 0; k < 3; k++) {
		size_t len = k == 0 ? 5 : k == 1 ? 4096 : sizeof(out);
		ofi_fill(out, len, (uint32_t)k);
		CHECK_EQ(fi_trecv(n.ep, buf, sizeof(buf), NULL, n.self, 3, 0, buf), 0);
		CHECK_EQ(fi_tsend(n.ep, out, len, NULL, n.self, 3, out), 0);
		CHECK(wait_ok(n.txcq, &e));
		CHECK(wait_ok(n.rxcq, &e));
		CHECK_EQ(e.len, len);
		CHECK(ofi_check(buf, len, (uint32_t)k) == 0);
	}
	ofi_node_close(&n);
	return sm_check_failures;
}

/* FI_PROGRESS_MANUAL with the application away: a process that makes no call for longer than
 * an SCTP peer lets its data go unacknowledged before it declares the association lost keeps
 * its associations (its domain's thread answers for it), and what was sent to it meanwhile,
 * more than fits in flight, arrives intact. SCTP associations only (FI_SCTP_SHM=0): same-host
 * rings have no timers. */
#define AWAY_S 6
static int t_away(int rank, int fd)
{
	const char *shm = getenv("FI_SCTP_SHM");
	size_t len = 4 << 20;
	char *buf;
	struct ofi_node n;
	struct fi_cq_tagged_entry e;

	if (!shm || strcmp(shm, "0") != 0)
		return 0;
	buf = malloc(len);
	REQUIRE(buf);
	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	if (rank == 0) {
		ofi_sync(fd);
		sleep(AWAY_S);
		memset(buf, 0, len);
		CHECK_EQ(fi_trecv(n.ep, buf, len, NULL, FI_ADDR_UNSPEC, TAG_A, 0, buf), 0);
		CHECK(wait_ok(n.rxcq, &e));
		CHECK_EQ(e.len, len);
		CHECK(ofi_check(buf, len, 7) == 0);
		CHECK_EQ(fi_tsend(n.ep, "back", 5, NULL, n.peer, TAG_A, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
	} else {
		ofi_fill(buf, len, 7);
		ofi_sync(fd);
		CHECK_EQ(fi_tsend(n.ep, buf, len, NULL, n.peer, TAG_A, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
		CHECK_EQ(fi_trecv(n.ep, buf, len, NULL, FI_ADDR_UNSPEC, TAG_A, 0, buf), 0);
		CHECK(wait_ok(n.rxcq, &e));
		CHECK(strcmp(buf, "back") == 0);
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	free(buf);
	return sm_check_failures;
}

/* FI_PROGRESS_AUTO: a delivery-complete send completes while the target computes (sleeps
 * without calling libfabric); its receive is there when it looks. */
static int t_auto_progress(int rank, int fd)
{
	struct fi_info *h = ofi_hints(0);
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	char buf[16];
	struct iovec iov = {buf, 6};
	struct fi_msg m = {.msg_iov = &iov, .iov_count = 1, .context = buf};

	h->domain_attr->data_progress = FI_PROGRESS_AUTO;
	h->domain_attr->control_progress = FI_PROGRESS_AUTO;
	ofi_node_open(&n, h, 0);
	CHECK_EQ(n.info->domain_attr->data_progress, FI_PROGRESS_AUTO);
	ofi_swap_names(&n, fd);
	if (rank == 1) {
		CHECK_EQ(fi_recv(n.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, buf), 0);
		ofi_sync(fd);
		ofi_sync(fd); /* rank 0's send completed meanwhile */
		CHECK(wait_ok(n.rxcq, &e));
		CHECK(strcmp(buf, "auto!") == 0);
	} else {
		ofi_sync(fd);
		strcpy(buf, "auto!");
		m.addr = n.peer;
		CHECK_EQ(fi_sendmsg(n.ep, &m, FI_DELIVERY_COMPLETE), 0);
		CHECK(wait_ok(n.txcq, &e));
		ofi_sync(fd);
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	return sm_check_failures;
}

/* A peer that closed its endpoint: a delivery-complete send to it ends in an error
 * completion, not a hang. */
static int t_peer_gone(int rank, int fd)
{
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	char buf[8] = "hello";
	struct iovec iov = {buf, 6};
	struct fi_msg m = {.msg_iov = &iov, .iov_count = 1, .context = buf};
	int rc;

	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	m.addr = n.peer;
	/* the association comes up first */
	if (rank == 0) {
		CHECK_EQ(fi_send(n.ep, buf, 6, NULL, n.peer, buf), 0);
		CHECK(wait_ok(n.txcq, &e));
	} else {
		CHECK_EQ(fi_recv(n.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, buf), 0);
		CHECK(wait_ok(n.rxcq, &e));
	}
	ofi_sync(fd);
	if (rank == 1) {
		ofi_node_close(&n);
		ofi_sync(fd);
		return sm_check_failures;
	}
	ofi_sync(fd);
	/* sends now fail: at the call, or with an error completion */
	rc = (int)fi_sendmsg(n.ep, &m, FI_DELIVERY_COMPLETE);
	if (rc == 0) {
		CHECK_EQ(ofi_cq_wait(n.txcq, &e, &err), 0, "an error completion");
		CHECK(err.op_context == buf);
	} else {
		CHECK(rc < 0 && rc != -FI_EAGAIN);
	}
	ofi_node_close(&n);
	return sm_check_failures;
}

static const char *only;

/* A peer that is killed: sends to it end in error completions (delivery complete) within
 * the core's loss detection, not a hang; its receives posted at the survivor stay posted. */
static int t_peer_killed(int rank, int fd)
{
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	char buf[8] = "hello";
	struct iovec iov = {buf, 6};
	struct fi_msg m = {.msg_iov = &iov, .iov_count = 1, .context = buf};
	int rc = 0, errors = 0;

	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	m.addr = n.peer;
	if (rank == 0) {
		CHECK_EQ(fi_send(n.ep, buf, 6, NULL, n.peer, buf), 0);
		CHECK(wait_ok(n.txcq, &e));
	} else {
		CHECK_EQ(fi_recv(n.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, buf), 0);
		CHECK(wait_ok(n.rxcq, &e));
		ofi_sync(fd);
		raise(SIGKILL);
	}
	ofi_sync(fd);
	usleep(100000);
	/* keep sending until the loss is reported (bounded by the CQ wait's timeout) */
	for (int k = 0; k < 100 && !errors; k++) {
		rc = (int)fi_sendmsg(n.ep, &m, FI_DELIVERY_COMPLETE);
		if (rc != 0)
			break;
		if (ofi_cq_wait(n.txcq, &e, &err) == 0)
			errors++;
	}
	CHECK(errors || (rc < 0 && rc != -FI_EAGAIN), "the dead peer was noticed");
	ofi_node_close(&n);
	return sm_check_failures;
}

#define RUN_PAIR(fn)                                                                      \
	do {                                                                              \
		if (only && strcmp(only, #fn) != 0)                                       \
			break;                                                            \
		int rc_ = ofi_pair(getenv("OFI_T") ? atoi(getenv("OFI_T")) : 120, fn);                                              \
		if (rc_)                                                                  \
			sm_check_failures++;                                              \
		printf("%s %s\n", rc_ ? "FAIL" : "ok  ", #fn);                            \
		fflush(stdout);                                                           \
	} while (0)

/* argv[1]: run that test alone */
int main(int argc, char **argv)
{
	only = argc > 1 ? argv[1] : NULL;
	RUN_PAIR(t_pingpong);
	RUN_PAIR(t_matching);
	RUN_PAIR(t_unexpected);
	RUN_PAIR(t_peek_claim);
	RUN_PAIR(t_cancel_trunc);
	RUN_PAIR(t_multi_recv);
	RUN_PAIR(t_completion);
	RUN_PAIR(t_inject);
	RUN_PAIR(t_sread);
	RUN_PAIR(t_self);
	RUN_PAIR(t_away);
	RUN_PAIR(t_auto_progress);
	RUN_PAIR(t_peer_gone);
	ofi_killed_rank = 1;
	RUN_PAIR(t_peer_killed);
	ofi_killed_rank = -1;
	return sm_check_result();
}
