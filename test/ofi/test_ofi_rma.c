/*
 * RMA and atomics of the sctp provider between two processes (and a process and itself):
 * writes and reads of every size with data checks and delivery-complete writes; a bad key,
 * a write past the end of a region and a write into a read-only region end in an error
 * completion at the initiator with the target's memory untouched, and RMA works again after;
 * 64- and 32-bit atomics (SUM, CSWAP, ATOMIC_WRITE, ATOMIC_READ, MIN, MAX, BOR) with their
 * fetched values, from both processes at once; fi_query_atomic's answers.
 */
#include "ofi_test.h"
#include "common/sm_check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REGION (4 << 20)
#define GUARD 4096
#define GUARDB 0x5c

static struct ofi_node n;

static struct fi_info *rma_hints(void)
{
	return ofi_hints(FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE |
			 FI_REMOTE_READ | FI_REMOTE_WRITE);
}

static int wait_tx(struct fi_cq_err_entry *err)
{
	struct fi_cq_tagged_entry e;

	return ofi_cq_wait(n.txcq, &e, err);
}

/* One region per process; each learns the other's key and address. */
struct region {
	uint8_t *mem;       /* GUARD | REGION | GUARD */
	struct fid_mr *mr, *ro;
	uint64_t key, ro_key, addr, peer_key, peer_ro_key, peer_addr;
};

static void region_open(struct region *r, int fd)
{
	r->mem = malloc(REGION + 2 * GUARD);
	REQUIRE(r->mem);
	memset(r->mem, GUARDB, REGION + 2 * GUARD);
	REQUIRE(fi_mr_reg(n.domain, r->mem + GUARD, REGION, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0,
			  0, &r->mr, NULL) == 0);
	/* the first 4 KiB again, read-only */
	REQUIRE(fi_mr_reg(n.domain, r->mem + GUARD, 4096, FI_REMOTE_READ, 0, 0, 0, &r->ro,
			  NULL) == 0);
	r->key = fi_mr_key(r->mr);
	r->ro_key = fi_mr_key(r->ro);
	r->addr = (uint64_t)(uintptr_t)(r->mem + GUARD);
	CHECK(r->key != r->ro_key);
	ofi_send_u64(fd, r->key);
	ofi_send_u64(fd, r->ro_key);
	ofi_send_u64(fd, r->addr);
	r->peer_key = ofi_recv_u64(fd);
	r->peer_ro_key = ofi_recv_u64(fd);
	r->peer_addr = ofi_recv_u64(fd);
}

static void region_close(struct region *r)
{
	CHECK_EQ(fi_close(&r->ro->fid), 0);
	CHECK_EQ(fi_close(&r->mr->fid), 0);
	free(r->mem);
}

static int guards_ok(const struct region *r)
{
	for (size_t i = 0; i < GUARD; i++)
		if (r->mem[i] != GUARDB || r->mem[GUARD + REGION + i] != GUARDB)
			return 0;
	return 1;
}

/* Rank 0 writes into rank 1's region and reads it back, sizes 1 B .. 4 MiB. */
static int t_write_read(int rank, int fd)
{
	struct region r;
	static size_t sizes[] = {1, 7, 64, 4096, 65536, 65537, 1 << 20, REGION};
	char *buf = malloc(REGION), *back = malloc(REGION);
	struct fi_cq_err_entry err;

	REQUIRE(buf && back);
	ofi_node_open(&n, rma_hints(), 0);
	CHECK(n.info->caps & FI_RMA);
	CHECK_EQ(n.info->domain_attr->mr_mode, FI_MR_VIRT_ADDR | FI_MR_PROV_KEY);
	ofi_swap_names(&n, fd);
	region_open(&r, fd);
	if (rank == 0) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t len = sizes[i];
			struct iovec iov = {buf, len};
			struct fi_rma_iov riov = {r.peer_addr, len, r.peer_key};
			struct fi_msg_rma m = {.msg_iov = &iov, .iov_count = 1, .addr = n.peer,
					       .rma_iov = &riov, .rma_iov_count = 1, .context = buf};
			ofi_fill(buf, len, (uint32_t)i);
			/* delivery complete: placed at the target when it completes */
			CHECK_EQ(fi_writemsg(n.ep, &m, FI_DELIVERY_COMPLETE | FI_COMPLETION), 0);
			CHECK_EQ(wait_tx(&err), 1, "write of %zu bytes", len);
			ofi_send_u64(fd, len);
			CHECK_EQ(ofi_recv_u64(fd), 1, "target saw the data of %zu bytes", len);
			memset(back, 0, len);
			CHECK_EQ(fi_read(n.ep, back, len, NULL, n.peer, r.peer_addr, r.peer_key, back), 0);
			CHECK_EQ(wait_tx(&err), 1, "read of %zu bytes", len);
			CHECK(ofi_check(back, len, (uint32_t)i) == 0, "read back %zu bytes", len);
		}
		ofi_send_u64(fd, 0);
	} else {
		for (size_t i = 0;; i++) {
			size_t len = ofi_recv_u64(fd);
			if (!len)
				break;
			ofi_send_u64(fd, ofi_check(r.mem + GUARD, len, (uint32_t)i) == 0);
		}
		CHECK(guards_ok(&r));
	}
	ofi_sync(fd);
	region_close(&r);
	ofi_node_close(&n);
	free(buf);
	free(back);
	return sm_check_failures;
}

/* Protection: bad key, out of bounds, read-only region; the target is untouched; then RMA
 * works again. */
static int t_protect(int rank, int fd)
{
	struct region r;
	char buf[8192];
	struct fi_cq_err_entry err;

	ofi_node_open(&n, rma_hints(), 0);
	ofi_swap_names(&n, fd);
	region_open(&r, fd);
	if (rank == 1)
		ofi_fill(r.mem + GUARD, REGION, 42);
	ofi_sync(fd);
	if (rank == 0) {
		struct {
			const char *what;
			uint64_t addr, key;
			size_t len;
		} bad[] = {
			{"bad key", r.peer_addr, r.peer_key + 1000, 16},
			{"past the end", r.peer_addr + REGION - 8, r.peer_key, 16},
			{"before the start", r.peer_addr - 8, r.peer_key, 16},
			{"read-only region", r.peer_addr, r.peer_ro_key, 16},
		};
		memset(buf, 0xee, sizeof(buf));
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			int rc = (int)fi_write(n.ep, buf, bad[i].len, NULL, n.peer, bad[i].addr,
					       bad[i].key, buf);
			CHECK_EQ(rc, 0, "%s", bad[i].what);
			CHECK_EQ(wait_tx(&err), 0, "%s: an error completion", bad[i].what);
			CHECK_EQ(err.err, FI_EACCES, "%s", bad[i].what);
			CHECK(err.op_context == buf);
			/* a good write afterwards goes through (a new queue pair) */
			CHECK_EQ(fi_write(n.ep, "ok", 2, NULL, n.peer, r.peer_addr + 4096 + i * 8,
					  r.peer_key, buf), 0);
			CHECK_EQ(wait_tx(&err), 1, "after %s", bad[i].what);
		}
		/* a read of the read-only region is allowed */
		CHECK_EQ(fi_read(n.ep, buf, 64, NULL, n.peer, r.peer_addr, r.peer_ro_key, buf), 0);
		CHECK_EQ(wait_tx(&err), 1);
		CHECK(ofi_check(buf, 64, 42) == 0);
		ofi_sync(fd);
	} else {
		ofi_sync(fd);
		CHECK(guards_ok(&r), "nothing before or after the region was written");
		/* the region holds the pattern but for the four good writes */
		for (size_t i = 0; i < 4; i++) {
			CHECK(memcmp(r.mem + GUARD + 4096 + i * 8, "ok", 2) == 0);
			memset(r.mem + GUARD + 4096 + i * 8, 0, 2);
		}
		uint8_t *want = malloc(REGION);
		REQUIRE(want);
		ofi_fill(want, REGION, 42);
		for (size_t i = 0; i < 4; i++)
			memset(want + 4096 + i * 8, 0, 2);
		CHECK(memcmp(want, r.mem + GUARD, REGION) == 0, "the bad writes left no byte");
		free(want);
	}
	ofi_sync(fd);
	region_close(&r);
	ofi_node_close(&n);
	return sm_check_failures;
}

static uint64_t fetch64(fi_addr_t to, uint64_t addr, uint64_t key, enum fi_op op, uint64_t v)
{
	uint64_t res = 0;
	struct fi_cq_err_entry err;

	CHECK_EQ(fi_fetch_atomic(n.ep, &v, 1, NULL, &res, NULL, to, addr, key, FI_UINT64, op,
				 &res), 0);
	CHECK_EQ(wait_tx(&err), 1);
	return res;
}

/* Atomics: both processes hammer rank 1's counters (rank 1 through its own name). */
static int t_atomics(int rank, int fd)
{
	struct region r;
	struct fi_cq_err_entry err;
	const int iters = 200;

	ofi_node_open(&n, rma_hints(), 0);
	ofi_swap_names(&n, fd);
	region_open(&r, fd);
	fi_addr_t owner = rank == 1 ? n.self : n.peer;
	uint64_t base = rank == 1 ? r.addr : r.peer_addr, key = rank == 1 ? r.key : r.peer_key;
	if (rank == 1)
		memset(r.mem + GUARD, 0, 64);
	ofi_sync(fd);
	/* word 0: 64-bit sums; word 1: two 32-bit counters; word 2: 32-bit sums of -1 */
	for (int i = 0; i < iters; i++) {
		uint64_t one = 1;
		uint32_t one32 = 1, minus = 0xffffffffu;
		CHECK_EQ(fi_atomic(n.ep, &one, 1, NULL, owner, base, key, FI_UINT64, FI_SUM, &one),
			 0);
		CHECK_EQ(wait_tx(&err), 1);
		CHECK_EQ(fi_atomic(n.ep, &one32, 1, NULL, owner, base + 8 + 4 * rank, key,
				   FI_UINT32, FI_SUM, &one), 0);
		CHECK_EQ(wait_tx(&err), 1);
		CHECK_EQ(fi_atomic(n.ep, &minus, 1, NULL, owner, base + 16, key, FI_INT32, FI_SUM,
				   &one), 0);
		CHECK_EQ(wait_tx(&err), 1);
	}
	ofi_sync(fd);
	if (rank == 1) {
		uint64_t w0, w1;
		uint32_t h[2], s;
		memcpy(&w0, r.mem + GUARD, 8);
		memcpy(&w1, r.mem + GUARD + 8, 8);
		memcpy(h, r.mem + GUARD + 8, 8);
		memcpy(&s, r.mem + GUARD + 16, 4);
		CHECK_EQ(w0, 2 * iters);
		CHECK_EQ(h[0], iters, "rank 0's 32-bit counter");
		CHECK_EQ(h[1], iters, "rank 1's 32-bit counter");
		CHECK_EQ((int32_t)s, -2 * iters);
		CHECK_EQ(r.mem[GUARD + 20], 0, "the other half of the word untouched");
	}
	ofi_sync(fd);
	if (rank == 0) {
		/* fetching operations, one at a time, with their old values */
		CHECK_EQ(fetch64(owner, base, key, FI_ATOMIC_READ, 0), 2 * iters);
		CHECK_EQ(fetch64(owner, base, key, FI_ATOMIC_WRITE, 77), 2 * iters);
		CHECK_EQ(fetch64(owner, base, key, FI_SUM, 3), 77);
		CHECK_EQ(fetch64(owner, base, key, FI_MIN, 5), 80);
		CHECK_EQ(fetch64(owner, base, key, FI_MAX, 9), 5);
		CHECK_EQ(fetch64(owner, base, key, FI_BOR, 0x30), 9);
		CHECK_EQ(fetch64(owner, base, key, FI_ATOMIC_READ, 0), 0x39);
		/* compare-swap: fails, then succeeds; the old value either way */
		uint64_t cmp = 1, v = 100, res = 0;
		CHECK_EQ(fi_compare_atomic(n.ep, &v, 1, NULL, &cmp, NULL, &res, NULL, owner, base,
					   key, FI_UINT64, FI_CSWAP, &res), 0);
		CHECK_EQ(wait_tx(&err), 1);
		CHECK_EQ(res, 0x39);
		cmp = 0x39;
		CHECK_EQ(fi_compare_atomic(n.ep, &v, 1, NULL, &cmp, NULL, &res, NULL, owner, base,
					   key, FI_UINT64, FI_CSWAP, &res), 0);
		CHECK_EQ(wait_tx(&err), 1);
		CHECK_EQ(res, 0x39);
		CHECK_EQ(fetch64(owner, base, key, FI_ATOMIC_READ, 0), 100);
		/* 32-bit compare-swap and signed minimum on the upper half of word 1 */
		uint32_t c32 = iters, v32 = 5, r32 = 0;
		CHECK_EQ(fi_compare_atomic(n.ep, &v32, 1, NULL, &c32, NULL, &r32, NULL, owner,
					   base + 12, key, FI_UINT32, FI_CSWAP, &r32), 0);
		CHECK_EQ(wait_tx(&err), 1);
		CHECK_EQ(r32, iters);
		int32_t neg = -7, rs = 0;
		CHECK_EQ(fi_fetch_atomic(n.ep, &neg, 1, NULL, &rs, NULL, owner, base + 12, key,
					 FI_INT32, FI_MIN, &rs), 0);
		CHECK_EQ(wait_tx(&err), 1);
		CHECK_EQ(rs, 5);
		/* bad key and a misaligned address fail */
		uint64_t one = 1;
		CHECK_EQ(fi_atomic(n.ep, &one, 1, NULL, owner, base, key + 999, FI_UINT64, FI_SUM,
				   &one), 0);
		CHECK_EQ(wait_tx(&err), 0);
		CHECK_EQ(err.err, FI_EACCES);
		CHECK_EQ(fi_atomic(n.ep, &one, 1, NULL, owner, base + 4, key, FI_UINT64, FI_SUM,
				   &one), -FI_EINVAL);
		ofi_sync(fd);
	} else {
		ofi_sync(fd);
		int32_t hi;
		uint32_t lo;
		memcpy(&lo, r.mem + GUARD + 8, 4);
		memcpy(&hi, r.mem + GUARD + 12, 4);
		CHECK_EQ(hi, -7);
		CHECK_EQ(lo, iters, "the lower half stayed");
		CHECK(guards_ok(&r));
	}
	/* what fi_query_atomic says */
	struct fi_atomic_attr a;
	CHECK_EQ(fi_query_atomic(n.domain, FI_UINT64, FI_SUM, &a, 0), 0);
	CHECK_EQ(a.size, 8);
	CHECK_EQ(a.count, 1);
	CHECK_EQ(fi_query_atomic(n.domain, FI_UINT32, FI_ATOMIC_WRITE, &a, FI_FETCH_ATOMIC), 0);
	CHECK_EQ(fi_query_atomic(n.domain, FI_UINT64, FI_CSWAP, &a, FI_COMPARE_ATOMIC), 0);
	CHECK_EQ(fi_query_atomic(n.domain, FI_DOUBLE, FI_SUM, &a, 0), -FI_EOPNOTSUPP);
	CHECK_EQ(fi_query_atomic(n.domain, FI_UINT64, FI_CSWAP, &a, 0), -FI_EOPNOTSUPP);
	CHECK_EQ(fi_query_atomic(n.domain, FI_UINT64, FI_ATOMIC_READ, &a, 0), -FI_EOPNOTSUPP);
	ofi_sync(fd);
	region_close(&r);
	ofi_node_close(&n);
	return sm_check_failures;
}

static const char *only;

#define RUN_PAIR(fn)                                                                      \
	do {                                                                              \
		if (only && strcmp(only, #fn) != 0)                                       \
			break;                                                            \
		int rc_ = ofi_pair(120, fn);                                              \
		if (rc_)                                                                  \
			sm_check_failures++;                                              \
		printf("%s %s\n", rc_ ? "FAIL" : "ok  ", #fn);                            \
		fflush(stdout);                                                           \
	} while (0)

/* argv[1]: run that test alone */
int main(int argc, char **argv)
{
	only = argc > 1 ? argv[1] : NULL;
	RUN_PAIR(t_write_read);
	RUN_PAIR(t_protect);
	RUN_PAIR(t_atomics);
	return sm_check_result();
}
