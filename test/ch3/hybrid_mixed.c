/*
 * hybrid_mixed: the thesis's mixed MPI-1/MPI-2 program (its Figure 4.3 test), every result
 * checked, plus the one-sided cases CH3's packets and ch3:hybrid's RDMA must agree on.
 *
 * mixed:   ranks pair up (0-1, 2-3, ...; an odd last rank pairs with 0's partner role skipped).
 *          In each fence epoch both partners exchange three MPI_Isend/MPI_Irecv messages of
 *          different sizes, and each does an MPI_Put into and an MPI_Get from the other's
 *          window; MPI_Waitany/MPI_Waitall and the closing fence overlap both kinds of
 *          traffic. After the fence: the received messages, the put data in my window and the
 *          data I got are each checked byte for byte.
 * derived: vector (strided) and indexed datatypes on the origin, the target or both, for put
 *          and get, under fence and under lock.
 * pscw:    post/start/complete/wait epochs: each rank puts to and gets from both neighbours.
 * flush:   lock_all, puts, MPI_Win_flush, then a message: the target finds the data on
 *          receipt.
 * Each part prints "CHECK <what> <hash>" on rank 0; the hashes do not depend on the device.
 *   hybrid_mixed [ITERATIONS] [MAXSIZE]   (default 20, 1 MiB)
 */
#include "btl_test.h"

#include <stdint.h>

static int rank, size;

static void expect_bytes(const void *b, size_t n, uint64_t seed, const char *what, size_t arg)
{
	long bad = bt_check(b, n, seed);
	BT_EXPECT(bad < 0, "%s (%zu): %zu bytes, byte %ld wrong", what, arg, n, bad);
}

/* Seeds: who wrote it, in which iteration, what for. */
static uint64_t seed(int who, int iter, int what)
{
	return 0x1000000ull * (uint64_t)(what + 1) + 1000ull * (uint64_t)iter + (uint64_t)who;
}

static void mixed(int iters, size_t max)
{
	int partner = rank ^ 1;
	size_t msz[3];
	unsigned char *win_mem, *src, *got, *sbuf[3], *rbuf[3];
	uint64_t sum = 0;
	MPI_Win win;

	if (partner >= size)
		partner = MPI_PROC_NULL; /* the odd rank out only takes part in the fences */
	/* window: [0, max) receives the partner's put, [max, 2 max) is what it gets */
	MPI_Alloc_mem((MPI_Aint)(2 * max), MPI_INFO_NULL, &win_mem);
	src = malloc(max);
	got = malloc(max);
	for (int k = 0; k < 3; k++) {
		sbuf[k] = malloc(2 * max);
		rbuf[k] = malloc(2 * max);
		BT_EXPECT(sbuf[k] && rbuf[k], "malloc");
	}
	BT_EXPECT(win_mem && src && got, "malloc");
	MPI_Win_create(win_mem, (MPI_Aint)(2 * max), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	double t0 = MPI_Wtime();
	for (int it = 0; it < iters; it++) {
		size_t n = (size_t)1 << (it % 21); /* 1 B .. 1 MiB */
		MPI_Request rq[6];
		int idx;

		if (n > max)
			n = max;
		msz[0] = n / 4 + 1;
		msz[1] = n;
		msz[2] = 2 * n;
		memset(win_mem, 0, max);
		bt_fill(win_mem + max, n, seed(rank, it, 0));
		bt_fill(src, n, seed(rank, it, 1));
		memset(got, 0, n);
		for (int k = 0; k < 3; k++) {
			bt_fill(sbuf[k], msz[k], seed(rank, it, 2 + k));
			memset(rbuf[k], 0, msz[k]);
		}
		MPI_Win_fence(0, win);
		for (int k = 0; k < 3; k++)
			MPI_Irecv(rbuf[k], (int)msz[k], MPI_BYTE, partner, 100 + k, MPI_COMM_WORLD, &rq[k]);
		for (int k = 0; k < 3; k++)
			MPI_Isend(sbuf[k], (int)msz[k], MPI_BYTE, partner, 100 + k, MPI_COMM_WORLD,
				  &rq[3 + k]);
		if (partner != MPI_PROC_NULL) {
			MPI_Put(src, (int)n, MPI_BYTE, partner, 0, (int)n, MPI_BYTE, win);
			MPI_Get(got, (int)n, MPI_BYTE, partner, (MPI_Aint)max, (int)n, MPI_BYTE, win);
		}
		/* the largest receive first, then whatever finishes */
		MPI_Wait(&rq[2], MPI_STATUS_IGNORE);
		for (int k = 0; k < 5; k++)
			MPI_Waitany(6, rq, &idx, MPI_STATUS_IGNORE);
		MPI_Win_fence(0, win);
		if (partner == MPI_PROC_NULL)
			continue;
		for (int k = 0; k < 3; k++) {
			expect_bytes(rbuf[k], msz[k], seed(partner, it, 2 + k), "isend/irecv", msz[k]);
			sum += bt_hash(rbuf[k], msz[k]);
		}
		expect_bytes(win_mem, n, seed(partner, it, 1), "put", n);
		expect_bytes(got, n, seed(partner, it, 0), "get", n);
		sum += bt_hash(win_mem, n) + bt_hash(got, n);
	}
	double t = MPI_Wtime() - t0;
	MPI_Win_free(&win);
	MPI_Free_mem(win_mem);
	bt_report("mixed isend/irecv + put/get per fence epoch", sum);
	if (0 == rank)
		printf("TIME mixed %d epochs up to %zu bytes: %.3f s\n", iters, max, t);
	free(src);
	free(got);
	for (int k = 0; k < 3; k++) {
		free(sbuf[k]);
		free(rbuf[k]);
	}
}

/*
 * Derived datatypes. The window holds NI ints (and one more a lock epoch's first put goes to:
 * CH3 sends the operation that asks for the lock as a packet, the next ones go as RDMA). A
 * vector type takes blocks of 32 ints at a stride of 64, an indexed type blocks of growing
 * length at growing gaps; a fine vector (every other int) has more pieces than ch3:hybrid
 * moves as RDMA (it packs those).
 */
#define NI 8192

/* Int i of the pattern rank 'who' sends in transfer sd. */
static int pattern_at(uint64_t sd, int who, int i)
{
	return (int)(sd * 1000003u + (uint64_t)who * 7919u + (uint64_t)i);
}

/* The same transfer done locally with MPI_Pack/Unpack says what is expected: who's pattern
 * packed as (sc, st) and unpacked as (dc, dt) over want (NI ints, holding what the
 * destination held before). */
static void expect_transfer(uint64_t sd, int who, int sc, MPI_Datatype st, int dc,
			    MPI_Datatype dt, int *want)
{
	int sz, pos = 0;
	MPI_Pack_size(sc, st, MPI_COMM_WORLD, &sz);
	char *pk = malloc((size_t)sz);
	int *from = malloc(NI * sizeof(int));
	BT_EXPECT(pk && from, "malloc");
	for (int i = 0; i < NI; i++)
		from[i] = pattern_at(sd, who, i);
	MPI_Pack(from, sc, st, pk, sz, &pos, MPI_COMM_WORLD);
	pos = 0;
	MPI_Unpack(pk, sz, &pos, want, dc, dt, MPI_COMM_WORLD);
	free(pk);
	free(from);
}
static void derived(void)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int *wmem, *src, *dst, one = 1;
	MPI_Datatype vec, fine, idx, vshort;
	int blen[16], disp[16], nidx = 0, d = 0;
	uint64_t sum = 0;
	MPI_Win win;

	MPI_Win_allocate((MPI_Aint)((NI + 1) * sizeof(int)), sizeof(int), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &wmem, &win);
	src = malloc(NI * sizeof(int));
	dst = malloc(NI * sizeof(int));
	BT_EXPECT(src && dst, "malloc");
	MPI_Type_vector(NI / 64, 32, 64, MPI_INT, &vec); /* NI/2 ints in 128 blocks */
	MPI_Type_commit(&vec);
	MPI_Type_vector(NI / 2, 1, 2, MPI_INT, &fine); /* NI/2 ints, one by one */
	MPI_Type_commit(&fine);
	for (int i = 0; i < 16; i++) { /* 1, 8, 15 ... ints at gaps of 3, 4, 5 ... */
		blen[i] = 1 + i * 7;
		disp[i] = d;
		d += blen[i] + 3 + i;
		nidx += blen[i];
	}
	BT_EXPECT(d <= NI, "indexed type too long");
	MPI_Type_indexed(16, blen, disp, MPI_INT, &idx);
	MPI_Type_commit(&idx);
	MPI_Type_vector(nidx, 1, 2, MPI_INT, &vshort); /* as many ints as idx, one by one */
	MPI_Type_commit(&vshort);

	/* origin type/count, target type/count */
	const struct {
		const char *name;
		MPI_Datatype ot, tt;
		int oc, tc;
	} cases[] = {
		{"contig->vector", MPI_INT, vec, NI / 2, 1},
		{"vector->contig", vec, MPI_INT, 1, NI / 2},
		{"vector->vector", vec, vec, 1, 1},
		{"contig->indexed", MPI_INT, idx, nidx, 1},
		{"indexed->fine vector", idx, vshort, 1, 1},
		{"fine vector->contig", fine, MPI_INT, 1, NI / 2},
	};

	for (int epoch = 0; epoch < 2; epoch++) {
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			for (int op = 0; op < 2; op++) { /* put, get */
				uint64_t sd = 5000 + (uint64_t)epoch * 100 + c * 10 + (uint64_t)op;
				/* fill: the source side (mine or the window) with a pattern */
				for (int i = 0; i < NI; i++) {
					src[i] = pattern_at(sd, rank, i);
					wmem[i] = -1 - i;
					dst[i] = -7;
				}
				if (op == 1) /* get reads the target's window: its pattern there */
					memcpy(wmem, src, NI * sizeof(int));
				MPI_Barrier(MPI_COMM_WORLD);
				if (epoch == 0)
					MPI_Win_fence(0, win);
				else {
					MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
					MPI_Put(&one, 1, MPI_INT, right, NI, 1, MPI_INT, win);
				}
				if (op == 0)
					MPI_Put(src, cases[c].oc, cases[c].ot, right, 0, cases[c].tc,
						cases[c].tt, win);
				else
					MPI_Get(dst, cases[c].oc, cases[c].ot, right, 0, cases[c].tc,
						cases[c].tt, win);
				if (epoch == 0)
					MPI_Win_fence(0, win);
				else
					MPI_Win_unlock(right, win);
				MPI_Barrier(MPI_COMM_WORLD);
				int *want = malloc(NI * sizeof(int));
				BT_EXPECT(want, "malloc");
				if (op == 0) {
					/* my window got left's src through (ot -> tt) */
					for (int i = 0; i < NI; i++)
						want[i] = -1 - i;
					expect_transfer(sd, left, cases[c].oc, cases[c].ot, cases[c].tc,
							cases[c].tt, want);
					for (int i = 0; i < NI; i++)
						BT_EXPECT(wmem[i] == want[i], "%s put (%s): int %d is %d, want %d",
							  cases[c].name, epoch ? "lock" : "fence", i, wmem[i], want[i]);
					sum += bt_hash(wmem, NI * sizeof(int));
				} else {
					/* I got right's window (its pattern) through (tt -> ot) */
					for (int i = 0; i < NI; i++)
						want[i] = -7;
					expect_transfer(sd, right, cases[c].tc, cases[c].tt, cases[c].oc,
							cases[c].ot, want);
					for (int i = 0; i < NI; i++)
						BT_EXPECT(dst[i] == want[i], "%s get (%s): int %d is %d, want %d",
							  cases[c].name, epoch ? "lock" : "fence", i, dst[i], want[i]);
					sum += bt_hash(dst, NI * sizeof(int));
				}
				free(want);
			}
		}
	}
	MPI_Type_free(&vec);
	MPI_Type_free(&fine);
	MPI_Type_free(&idx);
	MPI_Type_free(&vshort);
	MPI_Win_free(&win);
	free(src);
	free(dst);
	bt_report("derived datatypes put/get, fence and lock", sum);
}

/* Post/start/complete/wait: each rank exposes to and accesses both neighbours. */
static void pscw(void)
{
	const size_t n = 3 * 65536 + 17;
	int right = (rank + 1) % size, left = (rank + size - 1) % size, nb[2] = {left, right};
	unsigned char *wmem, *src, *got;
	MPI_Group world, g;
	uint64_t sum = 0;
	MPI_Win win;

	if (size < 2)
		return;
	wmem = calloc(3, n);
	src = malloc(n);
	got = malloc(2 * n);
	BT_EXPECT(wmem && src && got, "malloc");
	MPI_Win_create(wmem, (MPI_Aint)(3 * n), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, size == 2 ? 1 : 2, size == 2 ? &right : nb, &g);
	for (int round = 0; round < 5; round++) {
		bt_fill(src, n, 700 + (uint64_t)rank * 3 + (uint64_t)round);
		bt_fill(wmem + 2 * n, n, 900 + (uint64_t)rank * 3 + (uint64_t)round);
		memset(wmem, 0, 2 * n);
		memset(got, 0, 2 * n);
		MPI_Win_post(g, 0, win);
		MPI_Win_start(g, 0, win);
		/* to the right into its first slot, to the left into its second */
		MPI_Put(src, (int)n, MPI_BYTE, right, 0, (int)n, MPI_BYTE, win);
		MPI_Get(got, (int)n, MPI_BYTE, right, (MPI_Aint)(2 * n), (int)n, MPI_BYTE, win);
		if (size > 2) {
			MPI_Put(src, (int)n, MPI_BYTE, left, (MPI_Aint)n, (int)n, MPI_BYTE, win);
			MPI_Get(got + n, (int)n, MPI_BYTE, left, (MPI_Aint)(2 * n), (int)n, MPI_BYTE, win);
		}
		MPI_Win_complete(win);
		MPI_Win_wait(win);
		expect_bytes(wmem, n, 700 + (uint64_t)left * 3 + (uint64_t)round, "pscw put", n);
		expect_bytes(got, n, 900 + (uint64_t)right * 3 + (uint64_t)round, "pscw get", n);
		sum += bt_hash(wmem, n) + bt_hash(got, n);
		if (size > 2) {
			expect_bytes(wmem + n, n, 700 + (uint64_t)right * 3 + (uint64_t)round,
				     "pscw put from the right", n);
			expect_bytes(got + n, n, 900 + (uint64_t)left * 3 + (uint64_t)round,
				     "pscw get from the left", n);
			sum += bt_hash(wmem + n, n) + bt_hash(got + n, n);
		}
		MPI_Barrier(MPI_COMM_WORLD); /* nobody refills before every check is done */
	}
	MPI_Group_free(&g);
	MPI_Group_free(&world);
	MPI_Win_free(&win);
	free(wmem);
	free(src);
	free(got);
	bt_report("pscw put/get both neighbours", sum);
}

/* Flush is remote completion: a message after MPI_Win_flush finds the data at the target. */
static void flush_notify(void)
{
	const size_t n = 200000;
	int right = (rank + 1) % size, left = (rank + size - 1) % size, token = 0;
	unsigned char *wmem, *src;
	uint64_t sum = 0;
	MPI_Win win;

	MPI_Win_allocate((MPI_Aint)(4 * n), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wmem, &win);
	src = malloc(4 * n);
	BT_EXPECT(src, "malloc");
	for (int round = 0; round < 6; round++) {
		for (int j = 0; j < 4; j++)
			bt_fill(src + j * n, n, 40000 + (uint64_t)round * 100 + (uint64_t)rank * 4 + (uint64_t)j);
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
		memset(wmem, 0, 4 * n);
		MPI_Win_unlock(rank, win);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_lock_all(0, win);
		for (int j = 0; j < 4; j++)
			MPI_Put(src + j * n, (int)n, MPI_BYTE, right, (MPI_Aint)(j * n), (int)n, MPI_BYTE, win);
		MPI_Win_flush(right, win);
		MPI_Send(&token, 1, MPI_INT, right, 9, MPI_COMM_WORLD);
		MPI_Recv(&token, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Win_sync(win);
		for (int j = 0; j < 4; j++)
			expect_bytes(wmem + j * n, n,
				     40000 + (uint64_t)round * 100 + (uint64_t)left * 4 + (uint64_t)j,
				     "put before flush, read after the message", n);
		sum += bt_hash(wmem, 4 * n);
		MPI_Win_unlock_all(win);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Win_free(&win);
	free(src);
	bt_report("lock_all put + flush then notify", sum);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	size_t max = argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : (size_t)1 << 20;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	mixed(iters, max);
	derived();
	pscw();
	flush_notify();
	MPI_Finalize();
	return 0;
}
