/*
 * Same-host peers that go wrong, between real processes: a peer killed with sends and pulls
 * in flight to it (its peers get ASSOC_DOWN, every queued send one completion, nothing left
 * behind), peers that scribble over the ring they write (bounds, kind, stream, sequence, a
 * write position with nothing behind it, pulls naming too many iovecs or memory that is not
 * there, a bad envelope, random bytes) or over the read position of the ring they read, and
 * peers that cannot or will not use shared memory (SCTP instead). The faulty peer must be
 * failed with -EPROTO, the others keep working, and (under ASan) nothing is read or written
 * outside the segment.
 * Usage: test_sctpt_shm_fault [killed|scribble_<how>|readpos|fallback|mixed]...
 */
#include "test_sctpt_shm_harness.h"
#include "sctpt_proto.h"
#include "sctpt_shm_proto.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* This process's mapping of a ring (memfd "sctpt-ring"): the sender's one read-write
 * mapping of header and records, or the receiver's read-write header page. */
static uint8_t *find_ring(int sender, size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint8_t *found = NULL;
	CHECK(f, "/proc/self/maps");
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 ||
		    !strstr(line, "/memfd:sctpt-ring") || perms[0] != 'r' || perms[1] != 'w')
			continue;
		if (sender ? hi - lo > SCTPT_SHM_HDR_SIZE : hi - lo == SCTPT_SHM_HDR_SIZE) {
			found = (uint8_t *)lo;
			*len = hi - lo;
		}
	}
	fclose(f);
	CHECK(found, "no %s mapping of a ring", sender ? "sender's" : "receiver's");
	return found;
}

/* Segments with names: there must be none of ours. */
static int named_segments(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += strncmp(e->d_name, "sctpt", 5) == 0;
	if (d)
		closedir(d);
	return n;
}

static int down_of(struct sh_rank *r, int who, int *err)
{
	for (int i = 0; i < lg.n; i++)
		if (lg.m[i].kind == SCTPT_CQE_EVENT && lg.m[i].ev == SCTPT_EV_ASSOC_DOWN &&
		    lg.m[i].peer == r->peer[who]) {
			*err = lg.m[i].ev_error;
			return 1;
		}
	return 0;
}

static int recvs_from(struct sh_rank *r, int who)
{
	int n = 0;
	for (int i = 0; i < lg.n; i++)
		if (lg.m[i].kind == SCTPT_CQE_RECV && lg.m[i].status == 0 &&
		    lg.m[i].peer == r->peer[who]) {
			CHECK(lg.m[i].intact, "a message from rank %d arrived corrupt", who);
			n++;
		}
	return n;
}

/* Ranks 0 and 2 still talk to each other (after rank 1 went wrong). */
static void others_work(struct sh_rank *r)
{
	int other = r->rank == 0 ? 2 : 0;
	int before = recvs_from(r, other);
	for (int i = 0; i < 10; i++)
		CHECK(sh_send(r, other, 5, 1000 + i, 0, (size_t)i * 9000, 1) >= 0, "send to %d",
		      other);
	while (recvs_from(r, other) < before + 10 || sctpt_pending(r->ep, r->peer[other]))
		sctpt_wait(r->ep, 5);
	CHECK(lg.sends_failed == 0 || r->rank == 0, "rank %d: sends failed", r->rank);
}

/* ---- a peer killed with sends in flight to it ---- */

#define KILL_PULLS 4
#define KILL_SMALL 60

static int body_killed(struct sh_rank *r)
{
	if (r->rank == 1) {
		CHECK(sh_send(r, 0, 1, 0, 0, 100, 1) >= 0, "warm-up");
		sh_drain(r, 1);
		sh_set_flag(0, 1);
		sh_wait_flag(r, 1, 1, 0); /* reads nothing from here on */
		kill(getpid(), SIGKILL);
		return 1;
	}
	if (r->rank == 2) {
		sh_wait_flag(r, 2, 1, 1);
		others_work(r);
		sh_set_flag(3, 1);
		return 0;
	}
	CHECK(sh_send(r, 1, 1, 0, 0, 100, 1) >= 0, "warm-up");
	sh_drain(r, 1);
	sh_wait_flag(r, 0, 1, 1);
	int queued = 0;
	for (int i = 0; i < KILL_PULLS; i++) /* read by rank 1 from our memory: never */
		queued += sh_send(r, 1, 2, i, 0, 1u << 20, 1) == 0;
	for (int i = 0; i < KILL_SMALL; i++) /* more than its ring holds */
		queued += sh_send(r, 1, 3, i, 0, 3000, 1) == 0;
	for (int k = 0; k < 50; k++)
		sctpt_progress(r->ep);
	int done_before = lg.sends;
	CHECK(sctpt_pending(r->ep, r->peer[1]), "nothing queued behind rank 1's full ring");
	sh_set_flag(1, 1);
	int err = 0;
	while (!down_of(r, 1, &err))
		sctpt_wait(r->ep, 10);
	for (int k = 0; k < 20; k++) /* a late or second completion would show now */
		sctpt_wait(r->ep, 5);
	CHECK(err < 0, "ASSOC_DOWN without an error");
	CHECK(lg.downs == 1, "%d ASSOC_DOWN events", lg.downs);
	CHECK(lg.sends == queued + 1 /* the warm-up */ || lg.sends == queued,
	      "%d completions for %d queued sends", lg.sends, queued);
	CHECK(lg.sends_failed >= KILL_PULLS, "only %d sends failed: the pulls were never read",
	      lg.sends_failed);
	CHECK(sctpt_peer_state(r->ep, r->peer[1]) == SCTPT_PEER_FAILED, "peer state");
	/* its rings are gone; what went through them still counts */
	CHECK(sh_stats(r, 1)->shm == 3, "shared memory with the dead peer: %d, not both ways",
	      sh_stats(r, 1)->shm);
	int rc = sh_send(r, 1, 1, 99, 0, 10, 1);
	CHECK(rc == -EPIPE, "send to the dead peer returned %d", rc);
	printf("  survivor: ASSOC_DOWN (%s); %d queued sends: %d done before, %d failed\n",
	       strerror(-err), queued, done_before, lg.sends_failed);
	sh_set_flag(2, 1);
	others_work(r);
	sh_wait_flag(r, 3, 1, 1);
	CHECK(named_segments() == 0, "segments named sctpt* in /dev/shm");
	return 0;
}

/* ---- a sender that scribbles over its ring ---- */

enum how { S_LEN, S_KIND, S_STREAM, S_SEQ, S_CLAIM, S_NIOV, S_FAULT, S_ENVELOPE, S_RANDOM };
static const char *hows[] = {"len", "kind", "stream", "seq", "claim", "niov", "fault",
			     "envelope", "random"};
static enum how g_how;

static void put_env(uint8_t *b, uint64_t len)
{
	struct sctpt_hdr h = {.version = SCTPT_PROTO_VERSION, .op = SCTPT_OP_DATA,
			      .flags = SCTPT_F_FIRST | SCTPT_F_LAST | SCTPT_F_UNORDERED,
			      .context = 1, .tag = 5, .msg_len = len};
	sctpt_hdr_encode(&h, b);
}

static void scribble(enum how how)
{
	size_t len;
	uint8_t *base = find_ring(1, &len);
	struct sctpt_shm_ring_hdr *hd = (void *)base;
	uint8_t *data = base + SCTPT_SHM_HDR_SIZE;
	uint32_t size = hd->size;
	CHECK(size + SCTPT_SHM_HDR_SIZE == len, "ring of %u bytes in a mapping of %zu", size, len);
	uint64_t wp = atomic_load(&hd->write_pos);
	struct sctpt_shm_rec *rec = (void *)(data + (wp & (size - 1)));
	uint8_t *body = (uint8_t *)rec + SCTPT_SHM_REC_LEN;
	uint32_t seq = SCTPT_SHM_SEQ(wp);
	struct sctpt_shm_pull *pl = (void *)(body + SCTPT_HDR_LEN);
	rec->kind = SCTPT_SHM_DATA;
	rec->stream = 1;
	rec->len = SCTPT_HDR_LEN + 8;
	put_env(body, 8);
	switch (how) {
	case S_LEN:
		rec->len = 3 * size;
		break;
	case S_KIND:
		rec->kind = 77;
		break;
	case S_STREAM:
		rec->stream = 60000;
		break;
	case S_SEQ:
		seq = 0x12345678;
		break;
	case S_CLAIM: /* says it wrote a record, leaves its seq 0 */
		seq = 0;
		atomic_store(&hd->write_pos, wp + 64);
		break;
	case S_NIOV:
		rec->kind = SCTPT_SHM_PULL;
		rec->len = SCTPT_HDR_LEN + 8 + 16;
		pl->niov = 100000;
		put_env(body, 100);
		break;
	case S_FAULT: /* a pull of memory this process does not have */
		rec->kind = SCTPT_SHM_PULL;
		rec->len = SCTPT_HDR_LEN + 8 + 16;
		pl->niov = 1;
		pl->iov[0] = (struct sctpt_shm_iov){0x1000, 100};
		put_env(body, 100);
		break;
	case S_ENVELOPE:
		body[0] = 77; /* version */
		break;
	case S_RANDOM: {
		uint32_t x = 2463534242u;
		for (uint32_t i = 0; i < size; i += 4) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			memcpy(data + i, &x, 4);
		}
		atomic_store(&hd->write_pos, (uint64_t)x << 20 | x);
		memcpy(&seq, data + (wp & (size - 1)), 4);
		break;
	}
	}
	__atomic_store_n((uint32_t *)&rec->seq, seq, __ATOMIC_RELEASE);
}

static int body_scribble(struct sh_rank *r)
{
	if (r->rank == 1) {
		CHECK(sh_send(r, 0, 1, 0, 0, 100, 1) >= 0, "warm-up");
		sh_wait_flag(r, 0, 1, 1);
		scribble(g_how);
		sh_set_flag(1, 1);
		sh_wait_flag(r, 2, 1, 1);
		return 0;
	}
	if (r->rank == 2) {
		sh_wait_flag(r, 1, 1, 1);
		others_work(r);
		sh_set_flag(3, 1);
		return 0;
	}
	sh_drain(r, 1);
	sh_set_flag(0, 1);
	int err = 0;
	while (!down_of(r, 1, &err))
		sctpt_wait(r->ep, 10);
	CHECK(err == -EPROTO, "rank 1 failed with %d, not -EPROTO", err);
	CHECK(recvs_from(r, 1) == 1, "%d messages from the scribbler", recvs_from(r, 1));
	CHECK(sh_send(r, 1, 1, 1, 0, 10, 1) == -EPIPE, "the scribbler is still sendable");
	printf("  rank 1 failed with %s\n", strerror(-err));
	others_work(r);
	sh_wait_flag(r, 3, 1, 1);
	sh_set_flag(2, 1);
	return 0;
}

/* ---- a sender caught between a record's seq and write_pos ---- */

/* What a sender leaves when it stops (preempted, say) right after making a record valid: a
 * PAD to the ring's end with write_pos past it, then a record at the ring's start whose seq
 * is stored but whose write_pos is not yet. The receiver must take the record and, when it
 * arms its tripwire and finds write_pos behind it, wait rather than call the ring corrupt. */
static void lag(void)
{
	size_t len;
	uint8_t *base = find_ring(1, &len);
	struct sctpt_shm_ring_hdr *hd = (void *)base;
	uint8_t *data = base + SCTPT_SHM_HDR_SIZE;
	uint32_t size = hd->size;
	uint64_t wp = atomic_load(&hd->write_pos);
	uint64_t start = wp - (wp & (size - 1)) + size; /* the ring's start, after the PAD */
	struct sctpt_shm_rec *pad = (void *)(data + (wp & (size - 1)));
	struct sctpt_shm_rec *rec = (void *)data;
	uint64_t need = SCTPT_SHM_REC_LEN + SCTPT_HDR_LEN + 8;
	need = (need + SCTPT_SHM_LINE - 1) / SCTPT_SHM_LINE * SCTPT_SHM_LINE;
	CHECK(wp & (size - 1), "write position %llu at the ring's start", (unsigned long long)wp);
	pad->kind = SCTPT_SHM_PAD;
	pad->stream = 0;
	pad->len = (uint32_t)(start - wp - SCTPT_SHM_REC_LEN);
	atomic_store(&rec->seq, 0);
	__atomic_store_n((uint32_t *)&pad->seq, SCTPT_SHM_SEQ(wp), __ATOMIC_RELEASE);
	atomic_store(&hd->write_pos, start);
	rec->kind = SCTPT_SHM_DATA;
	rec->stream = 1;
	rec->len = SCTPT_HDR_LEN + 8;
	put_env((uint8_t *)rec + SCTPT_SHM_REC_LEN, 8);
	fill_pattern((uint8_t *)rec + SCTPT_SHM_REC_LEN + SCTPT_HDR_LEN, 8, sh_seed(1, 5, 8));
	atomic_store((_Atomic uint32_t *)(data + need), 0);
	__atomic_store_n((uint32_t *)&rec->seq, SCTPT_SHM_SEQ(start), __ATOMIC_RELEASE);
}

static int body_lag(struct sh_rank *r)
{
	if (r->rank == 1) {
		CHECK(sh_send(r, 0, 1, 0, 0, 100, 1) >= 0, "warm-up");
		sh_wait_flag(r, 0, 1, 1);
		lag();
		sh_set_flag(1, 1);
		sh_wait_flag(r, 2, 1, 1);
		return 0;
	}
	sh_drain(r, 1);
	sh_set_flag(0, 1);
	sh_wait_flag(r, 1, 1, 1);
	int err = 0, waits = 0;
	/* armed waits (each one checks write_pos) until the record is in, and a few more */
	for (int quiet = 0; quiet < 5 && !down_of(r, 1, &err) && waits < 2000; waits++) {
		sctpt_wait(r->ep, 20);
		quiet += recvs_from(r, 1) == 2;
	}
	CHECK(!down_of(r, 1, &err), "rank 1 reported lost: %s", strerror(-err));
	CHECK(recvs_from(r, 1) == 2, "%d messages from rank 1 of 2", recvs_from(r, 1));
	printf("  the record behind write_pos delivered; %d armed waits, no error\n", waits);
	sh_set_flag(2, 1);
	return 0;
}

/* ---- a receiver that scribbles over the read position ---- */

static int body_readpos(struct sh_rank *r)
{
	if (r->rank == 0) {
		sh_drain(r, 1);
		size_t len;
		struct sctpt_shm_ring_hdr *hd = (void *)find_ring(0, &len);
		atomic_store(&hd->read_pos, 12345); /* not a line, and past what was written */
		sh_set_flag(0, 1);
		sh_wait_flag(r, 1, 1, 0); /* no publishing over it meanwhile */
		int err = 0;
		while (!down_of(r, 1, &err))
			sctpt_wait(r->ep, 10);
		sh_wait_flag(r, 2, 1, 1);
		return 0;
	}
	if (r->rank == 2) {
		sh_wait_flag(r, 2, 1, 1);
		return 0;
	}
	CHECK(sh_send(r, 0, 1, 0, 0, 100, 1) >= 0, "warm-up");
	sh_wait_flag(r, 0, 1, 1);
	int err = 0;
	for (int i = 0; i < 1000 && !down_of(r, 0, &err); i++) { /* until the ring looks full */
		int rc = sh_send(r, 0, 2, i, 0, 4000, 1);
		CHECK(rc >= 0 || rc == -EPIPE, "send %d: %d", i, rc);
		sctpt_progress(r->ep);
	}
	CHECK(down_of(r, 0, &err) && err == -EPROTO, "the reader's bad read position went unseen "
	      "(%d)", err);
	printf("  the sender failed its reader with %s\n", strerror(-err));
	sh_set_flag(1, 1);
	sh_set_flag(2, 1);
	return 0;
}

/* ---- peers that do not or cannot use shared memory ---- */

/* Rank 1 has rank 0's card with a socket name that is not there: it cannot set up a ring and
 * sends through SCTP (rank 0, whose card it does not know, could not reach it back). */
static void mangle(int rank, int peer, char *card)
{
	char *nonce = strrchr(card, '.');
	if (rank == 1 && peer == 0 && nonce && nonce[1])
		nonce[1] = nonce[1] == '0' ? '1' : '0';
}

static int body_fallback(struct sh_rank *r)
{
	if (r->rank == 1) {
		for (int i = 0; i < 20; i++)
			CHECK(sh_send(r, 0, 1, i, 0, (size_t)i * 30000, 1) >= 0, "send");
		sh_drain(r, 0);
		CHECK(lg.sends_failed == 0, "sends failed");
		struct sctpt_peer_stats *st = sh_stats(r, 0);
		CHECK(st->shm == 0 && st->msgs_sent == 20, "shm %d, %llu sent", st->shm,
		      (unsigned long long)st->msgs_sent);
		printf("  20 messages through SCTP to a peer whose socket was not there\n");
	} else {
		sh_drain(r, 20);
		CHECK(recvs_from(r, 1) == 20, "messages");
	}
	sh_barrier(r);
	return 0;
}

static void conf_mixed(int rank, struct sctpt_config *c)
{
	c->shm = rank == 1;
}

static int body_mixed(struct sh_rank *r)
{
	int other = 1 - r->rank;
	for (int i = 0; i < 20; i++)
		CHECK(sh_send(r, other, 1, i, 0, (size_t)i * 30000, 1) >= 0, "send");
	sh_drain(r, 20);
	CHECK(recvs_from(r, other) == 20 && lg.sends_failed == 0, "rank %d: messages", r->rank);
	CHECK(sh_stats(r, other)->shm == 0, "shared memory with a peer that has it off");
	sh_barrier(r);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *all[] = {"killed", "scribble_len", "scribble_kind", "scribble_stream",
				    "scribble_seq", "scribble_claim", "scribble_niov",
				    "scribble_fault", "scribble_envelope", "scribble_random",
				    "lag", "readpos", "fallback", "mixed"};
	int failed = 0, n = argc > 1 ? argc - 1 : (int)(sizeof(all) / sizeof(all[0]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < n; i++) {
		const char *t = argc > 1 ? argv[i + 1] : all[i];
		if (!strcmp(t, "killed")) {
			failed |= sh_run(t, 3, 60, NULL, body_killed, 1);
		} else if (!strncmp(t, "scribble_", 9)) {
			int k = 0;
			while (k < (int)(sizeof(hows) / sizeof(hows[0])) && strcmp(hows[k], t + 9))
				k++;
			if (k == (int)(sizeof(hows) / sizeof(hows[0]))) {
				fprintf(stderr, "unknown test %s\n", t);
				return 2;
			}
			g_how = (enum how)k;
			failed |= sh_run(t, 3, 60, NULL, body_scribble, -1);
		} else if (!strcmp(t, "lag")) {
			failed |= sh_run(t, 2, 60, NULL, body_lag, -1);
		} else if (!strcmp(t, "readpos")) {
			failed |= sh_run(t, 3, 60, NULL, body_readpos, -1);
		} else if (!strcmp(t, "fallback")) {
			sh_card_filter = mangle;
			failed |= sh_run(t, 2, 60, NULL, body_fallback, -1);
			sh_card_filter = NULL;
		} else if (!strcmp(t, "mixed")) {
			failed |= sh_run(t, 2, 60, conf_mixed, body_mixed, -1);
		} else {
			fprintf(stderr, "unknown test %s\n", t);
			return 2;
		}
	}
	return failed;
}
