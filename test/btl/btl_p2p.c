/*
 * Point-to-point over whatever BTL mpirun selected: blocking and non-blocking sends from 0 B to
 * 16 MiB, MPI_ANY_SOURCE/MPI_ANY_TAG non-overtaking order across eager and rendezvous sizes,
 * probe/iprobe, derived datatypes (vector, indexed, struct), MPI_Ssend, and cancelled receives.
 * Every received byte is checked; rank 0 prints "CHECK <section> <sum>" lines that must be the
 * same whichever BTL carried the data.
 */
#include <stddef.h>
#include "btl_test.h"

static int rank, size;

static uint64_t seed_of(int src, int dst, int what)
{
	return ((uint64_t)src << 40) ^ ((uint64_t)dst << 20) ^ (uint64_t)what;
}

/* Ring exchange of every size, with MPI_Sendrecv and then with Isend/Irecv. */
static void test_sizes(size_t max)
{
	static const size_t sizes[] = {0, 1, 7, 64, 1000, 4096, 32767, 32768, 32769, 65536,
				       65537, 262144, 262145, 1 << 20, 4 << 20};
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	uint64_t sum = 0;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]) && sizes[k] <= max; k++) {
		size_t n = sizes[k];
		unsigned char *s = malloc(n + 1), *r = malloc(n + 1);
		MPI_Request req[2];
		MPI_Status st;
		int count;

		bt_fill(s, n, seed_of(rank, next, (int)k));
		memset(r, 0, n + 1);
		MPI_Sendrecv(s, (int)n, MPI_BYTE, next, (int)k, r, (int)n + 1, MPI_BYTE, prev,
			     (int)k, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		BT_EXPECT((size_t)count == n, "sendrecv %zu: got %d bytes", n, count);
		BT_EXPECT(bt_check(r, n, seed_of(prev, rank, (int)k)) < 0, "sendrecv %zu: bad data at %ld",
			  n, bt_check(r, n, seed_of(prev, rank, (int)k)));
		sum += bt_hash(r, n);

		memset(r, 0, n + 1);
		MPI_Irecv(r, (int)n, MPI_BYTE, prev, 1000 + (int)k, MPI_COMM_WORLD, &req[0]);
		MPI_Isend(s, (int)n, MPI_BYTE, next, 1000 + (int)k, MPI_COMM_WORLD, &req[1]);
		MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
		BT_EXPECT(bt_check(r, n, seed_of(prev, rank, (int)k)) < 0, "isend %zu: bad data", n);
		sum += bt_hash(r, n);
		free(s);
		free(r);
	}
	bt_report("sizes", sum);
}

/* 16 MiB once: rank 0 -> 1 with MPI_Send, back with Isend/Irecv. */
static void test_huge(void)
{
	const size_t n = 16u << 20;
	unsigned char *b;
	uint64_t sum = 0;

	if (size < 2 || rank > 1) {
		bt_report("huge", 0);
		return;
	}
	b = malloc(n);
	if (0 == rank) {
		MPI_Request rq;
		bt_fill(b, n, 16);
		MPI_Send(b, (int)n, MPI_BYTE, 1, 16, MPI_COMM_WORLD);
		memset(b, 0, n);
		MPI_Irecv(b, (int)n, MPI_BYTE, 1, 17, MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		BT_EXPECT(bt_check(b, n, 17) < 0, "16 MiB echo: bad data at %ld", bt_check(b, n, 17));
	} else {
		MPI_Request rq;
		MPI_Recv(b, (int)n, MPI_BYTE, 0, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		BT_EXPECT(bt_check(b, n, 16) < 0, "16 MiB: bad data at %ld", bt_check(b, n, 16));
		sum = bt_hash(b, n);
		bt_fill(b, n, 17);
		MPI_Isend(b, (int)n, MPI_BYTE, 0, 17, MPI_COMM_WORLD, &rq);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	}
	free(b);
	bt_report("huge", sum);
}

/*
 * Every rank but 0 sends a burst of messages with mixed sizes (eager and rendezvous) and
 * increasing tags; rank 0 receives them with MPI_ANY_SOURCE/MPI_ANY_TAG and checks that each
 * sender's messages arrive in the order they were sent (MPI's non-overtaking rule).
 */
static void test_any_order(void)
{
	enum { K = 24 };
	static const size_t sz[] = {8, 40000, 100, 300000, 16, 70000};
	uint64_t sum = 0;

	if (0 == rank) {
		int *next_seq = calloc((size_t)size, sizeof(int));
		unsigned char *r = malloc(300000);
		for (int m = 0; m < K * (size - 1); m++) {
			MPI_Status st;
			int count, seq;
			MPI_Recv(r, 300000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_BYTE, &count);
			memcpy(&seq, r, sizeof(seq));
			BT_EXPECT(seq == next_seq[st.MPI_SOURCE],
				  "from %d: message %d arrived before %d (overtaking)", st.MPI_SOURCE,
				  seq, next_seq[st.MPI_SOURCE]);
			BT_EXPECT(st.MPI_TAG == 500 + seq, "tag %d for seq %d", st.MPI_TAG, seq);
			BT_EXPECT((size_t)count == sz[seq % 6], "size %d for seq %d", count, seq);
			BT_EXPECT(bt_check(r + sizeof(seq), (size_t)count - sizeof(seq),
					   seed_of(st.MPI_SOURCE, 0, seq)) < 0, "bad data from %d seq %d",
				  st.MPI_SOURCE, seq);
			next_seq[st.MPI_SOURCE]++;
			sum += bt_hash(r, (size_t)count) ^ (uint64_t)st.MPI_SOURCE;
		}
		free(r);
		free(next_seq);
	} else {
		MPI_Request rq[K];
		unsigned char *s[K];
		for (int seq = 0; seq < K; seq++) {
			size_t n = sz[seq % 6];
			s[seq] = malloc(n);
			memcpy(s[seq], &seq, sizeof(seq));
			bt_fill(s[seq] + sizeof(seq), n - sizeof(seq), seed_of(rank, 0, seq));
			MPI_Isend(s[seq], (int)n, MPI_BYTE, 0, 500 + seq, MPI_COMM_WORLD, &rq[seq]);
		}
		MPI_Waitall(K, rq, MPI_STATUSES_IGNORE);
		for (int seq = 0; seq < K; seq++)
			free(s[seq]);
	}
	bt_report("any_order", sum);
}

/* MPI_Probe then MPI_Iprobe for messages whose size the receiver learns from the probe. */
static void test_probe(void)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	uint64_t sum = 0;

	for (int round = 0; round < 2; round++) {
		size_t n = 100 + (size_t)rank * 9000 + (size_t)round * 50000;
		unsigned char *s = malloc(n), *r;
		MPI_Request rq;
		MPI_Status st;
		int count, flag = 0;

		bt_fill(s, n, seed_of(rank, next, 77 + round));
		MPI_Isend(s, (int)n, MPI_BYTE, next, 77 + round, MPI_COMM_WORLD, &rq);
		if (0 == round) {
			MPI_Probe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &st);
		} else {
			while (!flag)
				MPI_Iprobe(prev, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		}
		BT_EXPECT(st.MPI_SOURCE == prev, "probe: source %d, expected %d", st.MPI_SOURCE, prev);
		MPI_Get_count(&st, MPI_BYTE, &count);
		BT_EXPECT((size_t)count == 100 + (size_t)prev * 9000 + (size_t)round * 50000,
			  "probe: count %d", count);
		r = malloc((size_t)count);
		MPI_Recv(r, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		BT_EXPECT(bt_check(r, (size_t)count, seed_of(prev, rank, 77 + round)) < 0, "probe: bad data");
		sum += bt_hash(r, (size_t)count);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		free(r);
		free(s);
	}
	bt_report("probe", sum);
}

struct particle {
	int id;
	double pos[3];
	char kind;
};

/* Vector, indexed and struct datatypes on the send side, contiguous or typed on the receive. */
static void test_datatypes(void)
{
	enum { ROWS = 300, COLS = 40 };
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	double *m = malloc(sizeof(double) * ROWS * COLS), *col = malloc(sizeof(double) * ROWS);
	MPI_Datatype vec, idx, pt;
	uint64_t sum = 0;
	int blens[3] = {1, 3, 1}, ilens[4] = {3, 1, 50, 7}, idisp[4] = {0, 10, 100, 2000};
	MPI_Aint disps[3] = {offsetof(struct particle, id), offsetof(struct particle, pos),
			     offsetof(struct particle, kind)};
	MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};

	for (int i = 0; i < ROWS * COLS; i++)
		m[i] = rank * 100000.0 + i;
	/* vector: column 3 of the matrix (ROWS doubles, stride COLS) */
	MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &vec);
	MPI_Type_commit(&vec);
	MPI_Sendrecv(m + 3, 1, vec, next, 31, col, ROWS, MPI_DOUBLE, prev, 31, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	for (int i = 0; i < ROWS; i++)
		BT_EXPECT(col[i] == prev * 100000.0 + i * COLS + 3, "vector: element %d", i);
	sum += bt_hash(col, sizeof(double) * ROWS);

	/* indexed on both sides */
	MPI_Type_indexed(4, ilens, idisp, MPI_DOUBLE, &idx);
	MPI_Type_commit(&idx);
	{
		double *r = calloc(ROWS * COLS, sizeof(double));
		MPI_Sendrecv(m, 1, idx, next, 32, r, 1, idx, prev, 32, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		for (int b = 0; b < 4; b++)
			for (int j = 0; j < ilens[b]; j++)
				BT_EXPECT(r[idisp[b] + j] == prev * 100000.0 + idisp[b] + j,
					  "indexed: block %d element %d", b, j);
		BT_EXPECT(r[5] == 0.0, "indexed: a hole was written");
		sum += bt_hash(r, sizeof(double) * ROWS * COLS);
		free(r);
	}

	/* struct, 5000 of them (rendezvous size) */
	MPI_Type_create_struct(3, blens, disps, types, &pt);
	MPI_Type_commit(&pt);
	{
		enum { NP = 5000 };
		struct particle *s = calloc(NP, sizeof(*s)), *r = calloc(NP, sizeof(*r));
		for (int i = 0; i < NP; i++) {
			s[i].id = rank * NP + i;
			s[i].pos[0] = i;
			s[i].pos[1] = -i;
			s[i].pos[2] = rank;
			s[i].kind = (char)('a' + i % 26);
		}
		MPI_Sendrecv(s, NP, pt, next, 33, r, NP, pt, prev, 33, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		for (int i = 0; i < NP; i++) {
			BT_EXPECT(r[i].id == prev * NP + i && r[i].pos[0] == i && r[i].pos[1] == -i &&
					  r[i].pos[2] == prev && r[i].kind == (char)('a' + i % 26),
				  "struct: element %d", i);
			sum += (uint64_t)r[i].id * 31 + (uint64_t)r[i].kind;
		}
		free(s);
		free(r);
	}
	MPI_Type_free(&vec);
	MPI_Type_free(&idx);
	MPI_Type_free(&pt);
	free(m);
	free(col);
	bt_report("datatypes", sum);
}

/* MPI_Ssend around the ring (even ranks send first), small and rendezvous sizes. */
static void test_ssend(void)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	uint64_t sum = 0;
	static const size_t sizes[] = {0, 512, 200000};

	for (size_t k = 0; k < 3; k++) {
		size_t n = sizes[k];
		unsigned char *s = malloc(n + 1), *r = malloc(n + 1);
		MPI_Request rq;
		bt_fill(s, n, seed_of(rank, next, 900 + (int)k));
		MPI_Irecv(r, (int)n, MPI_BYTE, prev, 900, MPI_COMM_WORLD, &rq);
		MPI_Ssend(s, (int)n, MPI_BYTE, next, 900, MPI_COMM_WORLD);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		BT_EXPECT(bt_check(r, n, seed_of(prev, rank, 900 + (int)k)) < 0, "ssend %zu: bad data", n);
		sum += bt_hash(r, n);
		free(s);
		free(r);
	}
	bt_report("ssend", sum);
}

/* A receive nobody matches is cancelled; a later message with the same tag still arrives. */
static void test_cancel(void)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	int buf = -1, flag = 0, got = -1, mine = rank;
	MPI_Request rq;
	MPI_Status st;

	MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &rq);
	MPI_Cancel(&rq);
	MPI_Wait(&rq, &st);
	MPI_Test_cancelled(&st, &flag);
	BT_EXPECT(flag, "the receive was not cancelled");
	BT_EXPECT(buf == -1, "a cancelled receive wrote its buffer");
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Sendrecv(&mine, 1, MPI_INT, next, 4242, &got, 1, MPI_INT, prev, 4242, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
	BT_EXPECT(got == prev, "after cancel: got %d", got);
	bt_report("cancel", (uint64_t)got + 1);
}

int main(int argc, char **argv)
{
	size_t max = 4u << 20;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		max = strtoul(argv[1], NULL, 0);
	test_sizes(max);
	test_huge();
	test_any_order();
	test_probe();
	test_datatypes();
	test_ssend();
	test_cancel();
	MPI_Barrier(MPI_COMM_WORLD);
	if (0 == rank)
		printf("p2p: %d ranks ok\n", size);
	MPI_Finalize();
	return 0;
}
