/*
 * Direct placement between two processes over SCTP (FI_SCTP_SHM=0): a message that begins to
 * arrive when the receive it matches is posted goes from the packets straight into that
 * receive's buffer (the core's place hook), the rest is copied from the core's buffer as
 * before. The provider's counters (fi_open_ops FI_SCTP_DOMAIN_OPS) say which way each
 * message went; data, lengths, tags, order and errors must be the same either way.
 */
#include "ofi_test.h"
#include "fi_sctp.h"
#include "common/sm_check.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define TAG 0x5151000000000000ULL
#define HDR 40 /* the provider's header: messages of more than 256 - HDR bytes are placed */

/*
 * Whether every message whose receive was posted in time must have been placed. With
 * FI_THREAD_DOMAIN (OFI_TEST_THREADING=domain) every call into the core is made under the
 * domain's lock, so it is. Otherwise the domain's thread, once the application left the
 * provider alone for a nap (a blocking ofi_sync on a loaded machine will do), sleeps in the
 * core; a message it reads while the application holds the domain's lock, waiting for the
 * core's, stays the core's and is copied: only the total is checked then.
 */
static int exact;

/* The placed and copied counts moved by want placed and copied messages. */
#define CHECK_WAYS(s0, s1, want_placed, want_copied)                                          \
	do {                                                                                   \
		uint64_t p_ = (s1).placed - (s0).placed, c_ = (s1).copied - (s0).copied;       \
		if (exact) {                                                                   \
			CHECK_EQ(p_, (uint64_t)(want_placed), "placed");                     \
			CHECK_EQ(c_, (uint64_t)(want_copied), "copied");                     \
		} else {                                                                       \
			CHECK_EQ(p_ + c_, (uint64_t)((want_placed) + (want_copied)));         \
			CHECK(p_ <= (uint64_t)(want_placed), "placed %llu", (unsigned long long)p_); \
		}                                                                              \
	} while (0)

static int wait_ok(struct fid_cq *cq, struct fi_cq_tagged_entry *e)
{
	struct fi_cq_err_entry err;
	int rc = ofi_cq_wait(cq, e, &err);

	if (rc == 0)
		fprintf(stderr, "error completion: %s (olen %zu)\n", fi_strerror(err.err),
			err.olen);
	return rc == 1;
}

static struct fi_sctp_stats stats(struct ofi_node *n)
{
	struct fi_sctp_ops_domain *ops = NULL;
	struct fi_sctp_stats s = {0};

	REQUIRE(fi_open_ops(&n->domain->fid, FI_SCTP_DOMAIN_OPS, 0, (void **)&ops, NULL) == 0);
	REQUIRE(ops && ops->size >= sizeof(*ops) && ops->stats);
	REQUIRE(ops->stats(n->domain, &s) == 0);
	return s;
}

/* A first message each way, so that the association is up and its events are read. */
static void warm_up(struct ofi_node *n, int rank, int fd)
{
	struct fi_cq_tagged_entry e;
	char b[8] = "warm";

	for (int turn = 0; turn < 2; turn++) {
		if (turn == rank) {
			ofi_sync(fd);
			CHECK_EQ(fi_tsend(n->ep, b, sizeof(b), NULL, n->peer, 1, &e), 0);
			CHECK(wait_ok(n->txcq, &e));
		} else {
			CHECK_EQ(fi_trecv(n->ep, b, sizeof(b), NULL, FI_ADDR_UNSPEC, 1, 0, &e), 0);
			ofi_sync(fd);
			CHECK(wait_ok(n->rxcq, &e));
		}
	}
	ofi_sync(fd);
}

/* Sizes around the core's inline limit, one packet and two at MTU 1500, one core fragment
 * (64 KiB with the header, and FI_SCTP_FRAG_SIZE) and several: each lands where it should,
 * placed when above the limit, tagged and untagged, the receive posted before the send. */
static int t_sizes(int rank, int fd)
{
	static const size_t sizes[] = {255 - HDR, 256 - HDR, 257 - HDR, 300, 1000, 1400, 1500,
				       4096, 65536 - HDR, 65536, 65537, 200000, (1 << 20) + 5};
	const size_t ns = sizeof(sizes) / sizeof(sizes[0]), max = sizes[ns - 1];
	char *buf = malloc(max + 64);
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	uint64_t total = 0;

	REQUIRE(buf);
	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	warm_up(&n, rank, fd);
	for (int tagged = 0; tagged < 2; tagged++) {
		for (size_t i = 0; i < ns; i++) {
			size_t len = sizes[i];
			uint32_t seed = (uint32_t)(1000 + i + 100 * tagged);
			if (rank == 0) {
				ofi_fill(buf, len, seed);
				ofi_sync(fd);
				CHECK_EQ(tagged ? fi_tsend(n.ep, buf, len, NULL, n.peer, TAG + i, &e)
						: fi_send(n.ep, buf, len, NULL, n.peer, &e), 0);
				CHECK(wait_ok(n.txcq, &e));
				ofi_sync(fd);
				continue;
			}
			struct fi_sctp_stats s0 = stats(&n), s1;
			memset(buf, 0, len + 64);
			/* the buffer exactly the message's size: room enough */
			CHECK_EQ(tagged ? fi_trecv(n.ep, buf, len, NULL, FI_ADDR_UNSPEC, TAG + i, 0, &e)
					: fi_recv(n.ep, buf, len, NULL, FI_ADDR_UNSPEC, &e), 0);
			ofi_sync(fd);
			CHECK(wait_ok(n.rxcq, &e));
			CHECK_EQ(e.len, len);
			CHECK(e.buf == buf);
			CHECK(e.flags & (tagged ? FI_TAGGED : FI_MSG));
			if (tagged)
				CHECK_EQ(e.tag, TAG + i);
			CHECK(ofi_check(buf, len, seed) == 0, "data of %zu bytes", len);
			for (size_t k = len; k < len + 64; k++)
				CHECK(buf[k] == 0, "byte %zu beyond a %zu-byte message", k, len);
			s1 = stats(&n);
			int placed = len + HDR > 256;
			CHECK_WAYS(s0, s1, placed, !placed);
			total += s1.placed - s0.placed;
			ofi_sync(fd);
		}
	}
	if (rank == 1) {
		CHECK_EQ(fi_cntr_read(n.rxcntr), 2 * ns + 1);
		CHECK(total > 0, "none placed");
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	free(buf);
	return sm_check_failures;
}

/* What is not placed: a receive too small (truncated: FI_ETRUNC, the part that fits), one of
 * two iovecs; what is: a receive larger than the message, with remote CQ data. */
static int t_trunc_iov(int rank, int fd)
{
	enum { LEN = 5000 };
	char *tx = malloc(LEN), *rx = malloc(2 * LEN);
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	REQUIRE(tx && rx);
	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	warm_up(&n, rank, fd);
	if (rank == 0) {
		for (int k = 0; k < 3; k++) {
			ofi_fill(tx, LEN, 70 + k);
			ofi_sync(fd);
			CHECK_EQ(fi_tsenddata(n.ep, tx, LEN, NULL, 0x77 + k, n.peer, TAG + k, &e), 0);
			CHECK(wait_ok(n.txcq, &e));
			ofi_sync(fd);
		}
	} else {
		struct fi_sctp_stats s0 = stats(&n), s1;
		/* too small */
		memset(rx, 0, 2 * LEN);
		CHECK_EQ(fi_trecv(n.ep, rx, LEN - 1, NULL, FI_ADDR_UNSPEC, TAG, 0, &e), 0);
		ofi_sync(fd);
		CHECK_EQ(ofi_cq_wait(n.rxcq, &e, &err), 0, "a truncation error");
		CHECK_EQ(err.err, FI_ETRUNC);
		CHECK_EQ(err.len, LEN - 1);
		CHECK_EQ(err.olen, 1);
		CHECK_EQ(err.data, 0x77);
		CHECK_EQ(err.tag, TAG);
		CHECK(ofi_check(rx, LEN - 1, 70) == 0, "the part that fit");
		CHECK(rx[LEN - 1] == 0, "nothing beyond the buffer");
		ofi_sync(fd);
		/* two iovecs */
		memset(rx, 0, 2 * LEN);
		struct iovec iov[2] = {{rx, 1000}, {rx + LEN, LEN}};
		CHECK_EQ(fi_trecvv(n.ep, iov, NULL, 2, FI_ADDR_UNSPEC, TAG + 1, 0, &e), 0);
		ofi_sync(fd);
		CHECK(wait_ok(n.rxcq, &e));
		CHECK_EQ(e.len, LEN);
		memmove(rx + 1000, rx + LEN, LEN - 1000);
		CHECK(ofi_check(rx, LEN, 71) == 0, "data across two iovecs");
		ofi_sync(fd);
		s1 = stats(&n);
		CHECK_WAYS(s0, s1, 0, 2);
		/* larger than the message: placed, the rest of the buffer untouched */
		memset(rx, 0x5a, 2 * LEN);
		CHECK_EQ(fi_trecv(n.ep, rx, 2 * LEN, NULL, FI_ADDR_UNSPEC, TAG + 2, 0, &e), 0);
		ofi_sync(fd);
		CHECK(wait_ok(n.rxcq, &e));
		CHECK_EQ(e.len, LEN);
		CHECK_EQ(e.data, 0x79);
		CHECK(e.flags & FI_REMOTE_CQ_DATA);
		CHECK(ofi_check(rx, LEN, 72) == 0, "placed data");
		CHECK(rx[LEN] == 0x5a && rx[2 * LEN - 1] == 0x5a, "the rest untouched");
		ofi_sync(fd);
		s0 = stats(&n);
		CHECK_WAYS(s1, s0, 1, 0);
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	free(tx);
	free(rx);
	return sm_check_failures;
}

/* A message that arrives before its receive is posted stays the core's (copied when the
 * receive comes); the next one, its receive posted in time, is placed. The receiver keeps
 * progressing (FI_PEEK) meanwhile: see t_away for a receiver that is away. */
static int t_unexpected(int rank, int fd)
{
	enum { LEN = 65536 };
	char *buf = malloc(LEN);
	struct ofi_node n;
	struct fi_cq_tagged_entry e;

	REQUIRE(buf);
	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	warm_up(&n, rank, fd);
	if (rank == 0) {
		ofi_fill(buf, LEN, 11);
		CHECK_EQ(fi_tsend(n.ep, buf, LEN, NULL, n.peer, TAG, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
		ofi_sync(fd);
		ofi_sync(fd); /* the first was received, the second receive is posted */
		ofi_fill(buf, LEN, 12);
		CHECK_EQ(fi_tsend(n.ep, buf, LEN, NULL, n.peer, TAG, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
	} else {
		struct fi_sctp_stats s0 = stats(&n), s1;
		struct fi_msg_tagged peek = {.addr = FI_ADDR_UNSPEC, .tag = TAG, .context = &e};
		struct fi_cq_err_entry err;
		int seen = 0;
		ofi_sync(fd);
		/* until the message is there, unexpected (FI_PEEK finds it) */
		for (time_t t0 = time(NULL); !seen && time(NULL) - t0 < OFI_TEST_TIMEOUT;) {
			CHECK_EQ(fi_trecvmsg(n.ep, &peek, FI_PEEK), 0);
			int rc = ofi_cq_wait(n.rxcq, &e, &err);
			CHECK(rc == 1 || (rc == 0 && err.err == FI_ENOMSG));
			seen = rc == 1;
		}
		CHECK(seen, "the message arrived");
		CHECK_EQ(e.len, LEN);
		memset(buf, 0, LEN);
		CHECK_EQ(fi_trecv(n.ep, buf, LEN, NULL, FI_ADDR_UNSPEC, TAG, 0, &e), 0);
		CHECK(wait_ok(n.rxcq, &e));
		CHECK_EQ(e.len, LEN);
		CHECK(ofi_check(buf, LEN, 11) == 0, "the unexpected message");
		s1 = stats(&n);
		CHECK_WAYS(s0, s1, 0, 1);
		memset(buf, 0, LEN);
		CHECK_EQ(fi_trecv(n.ep, buf, LEN, NULL, FI_ADDR_UNSPEC, TAG, 0, &e), 0);
		ofi_sync(fd);
		CHECK(wait_ok(n.rxcq, &e));
		CHECK(ofi_check(buf, LEN, 12) == 0, "the expected one");
		s0 = stats(&n);
		CHECK_WAYS(s1, s0, 1, 0);
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	free(buf);
	return sm_check_failures;
}

/* The receiver is away (manual progress) while its message comes: the domain's thread takes
 * it in, placed or kept; either way the receive gets it whole when the application is back. */
static int t_away(int rank, int fd)
{
	enum { LEN = 65536, N = 4 };
	char *buf = malloc((size_t)N * LEN);
	struct ofi_node n;
	struct fi_cq_tagged_entry e;

	REQUIRE(buf);
	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	warm_up(&n, rank, fd);
	if (rank == 0) {
		for (int i = 0; i < N; i++)
			ofi_fill(buf + (size_t)i * LEN, LEN, 30 + i);
		ofi_sync(fd);
		for (int i = 0; i < N; i++) {
			CHECK_EQ(fi_tsend(n.ep, buf + (size_t)i * LEN, LEN, NULL, n.peer, TAG, &e), 0);
			CHECK(wait_ok(n.txcq, &e));
			usleep(50000);
		}
		ofi_sync(fd);
	} else {
		struct fi_sctp_stats s0 = stats(&n), s1;
		memset(buf, 0, (size_t)N * LEN);
		for (int i = 0; i < N; i++)
			CHECK_EQ(fi_trecv(n.ep, buf + (size_t)i * LEN, LEN, NULL, FI_ADDR_UNSPEC, TAG,
					  0, NULL), 0);
		ofi_sync(fd);
		ofi_sync(fd); /* all sent, while this process slept */
		for (int i = 0; i < N; i++)
			CHECK(wait_ok(n.rxcq, &e));
		for (int i = 0; i < N; i++)
			CHECK(ofi_check(buf + (size_t)i * LEN, LEN, 30 + i) == 0, "message %d", i);
		s1 = stats(&n);
		CHECK_EQ(s1.placed + s1.copied - s0.placed - s0.copied, N);
		printf("# t_away: %llu of %d placed\n", (unsigned long long)(s1.placed - s0.placed),
		       N);
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	free(buf);
	return sm_check_failures;
}

/*
 * Many messages of one tag back to back, the receives posted first (and, in a second
 * round, half of them posted while the messages stream in): each receive gets the message
 * of its rank in the order, whichever way each went; some are placed.
 */
static int t_order(int rank, int fd)
{
	enum { N = 128, LEN = 8192 };
	char *buf = malloc((size_t)N * LEN);
	int ctx[N];
	struct ofi_node n;
	struct fi_cq_tagged_entry e;

	REQUIRE(buf);
	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	warm_up(&n, rank, fd);
	for (int round = 0; round < 2; round++) {
		if (rank == 0) {
			for (int i = 0; i < N; i++)
				ofi_fill(buf + (size_t)i * LEN, LEN, (uint32_t)(round * N + i));
			ofi_sync(fd);
			for (int i = 0; i < N; i++)
				CHECK_EQ(OFI_RETRY(n.txcq, fi_tsend(n.ep, buf + (size_t)i * LEN, LEN,
								    NULL, n.peer, TAG, &ctx[i])), 0);
			for (int i = 0; i < N; i++)
				CHECK(wait_ok(n.txcq, &e));
			ofi_sync(fd);
			continue;
		}
		struct fi_sctp_stats s0 = stats(&n), s1;
		int first = round ? N / 2 : N, got = 0;
		memset(buf, 0, (size_t)N * LEN);
		for (int i = 0; i < first; i++)
			CHECK_EQ(fi_trecv(n.ep, buf + (size_t)i * LEN, LEN, NULL, FI_ADDR_UNSPEC, TAG,
					  0, &ctx[i]), 0);
		ofi_sync(fd);
		for (int i = first; i < N; i++) {
			if (i % 4 == 0 && got < i && wait_ok(n.rxcq, &e)) { /* let some arrive */
				CHECK(e.op_context == &ctx[got], "completion %d in order", got);
				got++;
			}
			CHECK_EQ(fi_trecv(n.ep, buf + (size_t)i * LEN, LEN, NULL, FI_ADDR_UNSPEC, TAG,
					  0, &ctx[i]), 0);
		}
		for (; got < N; got++) {
			CHECK(wait_ok(n.rxcq, &e));
			CHECK(e.op_context == &ctx[got], "completion %d in order", got);
		}
		for (int i = 0; i < N; i++)
			CHECK(ofi_check(buf + (size_t)i * LEN, LEN, (uint32_t)(round * N + i)) == 0,
			      "receive %d holds message %d", i, i);
		s1 = stats(&n);
		CHECK_EQ(s1.placed + s1.copied - s0.placed - s0.copied, N);
		CHECK(s1.placed > s0.placed, "some placed");
		if (exact && round == 0)
			CHECK_EQ(s1.placed - s0.placed, N, "all posted in time");
		printf("# t_order round %d: %llu of %d placed\n", round,
		       (unsigned long long)(s1.placed - s0.placed), N);
		ofi_sync(fd);
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	free(buf);
	return sm_check_failures;
}

/* Automatic progress: the domain's thread reads the message while the application sleeps;
 * it places it too (it takes the domain's lock the application does not hold). */
static int t_auto(int rank, int fd)
{
	enum { LEN = 65536 };
	struct fi_info *h = ofi_hints(0);
	char *buf = malloc(LEN);
	struct ofi_node n;
	struct fi_cq_tagged_entry e;

	REQUIRE(buf);
	h->domain_attr->data_progress = FI_PROGRESS_AUTO;
	h->domain_attr->control_progress = FI_PROGRESS_AUTO;
	ofi_node_open(&n, h, 0);
	ofi_swap_names(&n, fd);
	warm_up(&n, rank, fd);
	if (rank == 0) {
		ofi_fill(buf, LEN, 21);
		ofi_sync(fd);
		CHECK_EQ(fi_tsend(n.ep, buf, LEN, NULL, n.peer, TAG, &e), 0);
		CHECK(wait_ok(n.txcq, &e));
		ofi_sync(fd);
	} else {
		struct fi_sctp_stats s0 = stats(&n), s1;
		memset(buf, 0, LEN);
		CHECK_EQ(fi_trecv(n.ep, buf, LEN, NULL, FI_ADDR_UNSPEC, TAG, 0, &e), 0);
		ofi_sync(fd);
		ofi_sync(fd);
		for (int k = 0; k < 100 && ofi_check(buf, LEN, 21) != 0; k++)
			usleep(20000); /* the data lands with no call into the provider */
		CHECK(ofi_check(buf, LEN, 21) == 0, "placed while the application slept");
		CHECK(wait_ok(n.rxcq, &e));
		s1 = stats(&n);
		CHECK_EQ(s1.placed - s0.placed, 1);
	}
	ofi_sync(fd);
	ofi_node_close(&n);
	free(buf);
	return sm_check_failures;
}

/*
 * The sender dies in the middle of a large message being placed -- the second half of its
 * buffer is unreadable, so it dies exactly there, whatever the scheduling: the receive it
 * was matched to is not completed; before the loss is known it cannot be cancelled (the
 * core is filling it), after it is posted again (fi_cancel finds it).
 */
static void die_now(int sig)
{
	(void)sig;
	raise(SIGKILL);
}

static int t_abandoned(int rank, int fd)
{
	const size_t len = (size_t)8 << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ofi_node n;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	int ctx, rc = -FI_ENOENT;

	REQUIRE(buf != MAP_FAILED);
	ofi_node_open(&n, NULL, 0);
	ofi_swap_names(&n, fd);
	warm_up(&n, rank, fd);
	if (rank == 0) {
		memset(buf, 0xab, len);
		REQUIRE(mprotect(buf + len / 2, len / 2, PROT_NONE) == 0 && page <= len / 2);
		signal(SIGSEGV, die_now);
		signal(SIGBUS, die_now);
		ofi_sync(fd);
		CHECK_EQ(fi_tsend(n.ep, buf, len, NULL, n.peer, TAG, &e), 0);
		for (time_t t0 = time(NULL); time(NULL) - t0 < OFI_TEST_TIMEOUT;)
			fi_cq_read(n.txcq, NULL, 0);
		return 1; /* the core never reached the second half */
	}
	memset(buf, 0, len);
	CHECK_EQ(fi_trecv(n.ep, buf, len, NULL, FI_ADDR_UNSPEC, TAG, 0, &ctx), 0);
	ofi_sync(fd);
	/* until the first MiB is in the receive's buffer: placed, then no more comes */
	time_t t0 = time(NULL);
	while (buf[(1 << 20) - 1] == 0 && time(NULL) - t0 < OFI_TEST_TIMEOUT)
		CHECK_EQ(fi_cq_read(n.rxcq, &e, 1), -FI_EAGAIN);
	CHECK(buf[(1 << 20) - 1] == (char)0xab, "the first MiB placed");
	CHECK_EQ(fi_cancel(&n.ep->fid, &ctx), -FI_ENOENT, "being placed: not cancellable");
	for (t0 = time(NULL); rc == -FI_ENOENT && time(NULL) - t0 < 2 * OFI_TEST_TIMEOUT;) {
		CHECK_EQ(fi_cq_read(n.rxcq, &e, 1), -FI_EAGAIN, "no completion of a lost message");
		rc = (int)fi_cancel(&n.ep->fid, &ctx);
		if (rc == -FI_ENOENT)
			usleep(10000);
	}
	CHECK_EQ(rc, 0, "posted again once the sender was lost");
	CHECK_EQ(ofi_cq_wait(n.rxcq, &e, &err), 0);
	CHECK_EQ(err.err, FI_ECANCELED);
	CHECK(err.op_context == &ctx);
	ofi_node_close(&n);
	munmap(buf, len);
	return sm_check_failures;
}

static const char *only;
static int failed; /* tests that failed (the forked ranks start from a count of 0) */

#define RUN_PAIR(fn)                                                                      \
	do {                                                                              \
		if (only && strcmp(only, #fn) != 0)                                       \
			break;                                                            \
		int rc_ = ofi_pair(120, fn);                                              \
		failed += rc_ != 0;                                                       \
		printf("%s %s\n", rc_ ? "FAIL" : "ok  ", #fn);                            \
		fflush(stdout);                                                           \
	} while (0)

/* argv[1]: run that test alone */
int main(int argc, char **argv)
{
	only = argc > 1 ? argv[1] : NULL;
	exact = getenv("OFI_TEST_THREADING") && strcmp(getenv("OFI_TEST_THREADING"), "domain") == 0;
	setenv("FI_SCTP_SHM", "0", 1); /* SCTP carries it: the shared-memory path places nothing */
	RUN_PAIR(t_sizes);
	RUN_PAIR(t_trunc_iov);
	RUN_PAIR(t_unexpected);
	RUN_PAIR(t_away);
	RUN_PAIR(t_order);
	RUN_PAIR(t_auto);
	ofi_killed_rank = 0;
	RUN_PAIR(t_abandoned);
	ofi_killed_rank = -1;
	printf("test_ofi_place: %d test(s) failed\n", failed);
	return failed ? 1 : 0;
}
