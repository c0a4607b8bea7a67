/*
 * One side of a checked bulk transfer over the core, for tests across network namespaces.
 *   sctpt_xfer --addrs A[,B] --card-out F --card-in G (--send N | --recv N)
 *              [--msg SIZE] [--progress FILE]
 * Cards are swapped through files. The receiver checks every byte and the order of the
 * messages, writes its byte count to the progress file as it goes, answers with an ack, and
 * prints path statistics; both sides print path events. Exit 0 only if all N bytes arrived.
 */
#include "harness.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t received, next_index;
static int acked, bad, down;
static FILE *progress;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}
static double t0;

static void on_recv(const struct sctpt_cqe *m)
{
	if (m->status < 0) {
		fprintf(stderr, "message %d abandoned: %d\n", m->tag, m->status);
		bad = 1;
		return;
	}
	if (m->tag == -1) {
		acked = 1;
		return;
	}
	if ((uint64_t)m->tag != next_index || check_pattern(m->data, m->len, (uint32_t)m->tag) != 0) {
		fprintf(stderr, "message %d (expected %llu, %zu bytes) corrupt or out of order\n",
			m->tag, (unsigned long long)next_index, m->len);
		bad = 1;
	}
	next_index++;
	received += m->len;
	if (progress) {
		rewind(progress);
		fprintf(progress, "%llu\n", (unsigned long long)received);
		fflush(progress);
	}
}

static void on_event(const struct sctpt_event *ev)
{
	fprintf(stderr, "[%6.3f s] event: %s\n", now_s() - t0, ev->what);
	if (ev->type == SCTPT_EV_ASSOC_DOWN)
		down = 1;
}

/* Sends are either handed over at once or waited for with sctpt_pending: nothing to do for
 * their completions. */
static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	if (c->kind == SCTPT_CQE_RECV)
		on_recv(c);
	else if (c->kind == SCTPT_CQE_EVENT)
		on_event(&c->ev);
}

static void write_card(struct sctpt_ep *ep, const char *file)
{
	char card[SCTPT_CARD_MAX], tmp[4096];
	sctpt_card(ep, card, sizeof(card));
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	FILE *f = fopen(tmp, "w");
	CHECK(f && fputs(card, f) >= 0 && fclose(f) == 0, "writing %s", tmp);
	CHECK(rename(tmp, file) == 0, "rename to %s", file);
}

static void read_card(const char *file, char *card, size_t len)
{
	for (int i = 0; i < 2000; i++) { /* 20 s */
		FILE *f = fopen(file, "r");
		if (f) {
			char *ok = fgets(card, (int)len, f);
			fclose(f);
			if (ok)
				return;
		}
		usleep(10000);
	}
	CHECK(0, "no card in %s after 20 s", file);
}

static void print_stats(struct sctpt_ep *ep, sctpt_peer_t p)
{
	struct sctpt_peer_stats st;
	sctpt_peer_stats(ep, p, &st);
	printf("[%6.3f s] out association: state %d rwnd %u unacked %u pending %u rto %u ms cwnd %u; "
	       "in association: rwnd %u unacked %u pending %u; queued here: %d; fragments in %llu, "
	       "held %u, reassembling %u, next message %llu\n", now_s() - t0,
	       st.sctp_state, st.sctp_rwnd, st.sctp_unacked, st.sctp_pending, st.sctp_rto_ms,
	       st.sctp_cwnd, st.sctp_in_rwnd, st.sctp_in_unacked, st.sctp_in_pending,
	       sctpt_pending(ep, p), (unsigned long long)st.sctp_msgs_in, st.held_now,
	       st.reassembling, (unsigned long long)next_index);
	for (int i = 0; i < st.npaths; i++)
		printf("path %s -> %s: %s%s, out %llu bytes, in %llu bytes\n", st.paths[i].local,
		       st.paths[i].remote, st.paths[i].up ? "up" : "down",
		       st.paths[i].primary ? " (in use)" : "",
		       (unsigned long long)st.paths[i].bytes_out,
		       (unsigned long long)st.paths[i].bytes_in);
}

int main(int argc, char **argv)
{
	const char *addrs = NULL, *card_out = NULL, *card_in = NULL;
	uint64_t send_bytes = 0, recv_bytes = 0;
	size_t msg = 1 << 20;
	static const struct option opts[] = {
		{"addrs", 1, 0, 'a'}, {"card-out", 1, 0, 'o'}, {"card-in", 1, 0, 'i'},
		{"send", 1, 0, 's'},  {"recv", 1, 0, 'r'},     {"msg", 1, 0, 'm'},
		{"progress", 1, 0, 'p'}, {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a': addrs = optarg; break;
		case 'o': card_out = optarg; break;
		case 'i': card_in = optarg; break;
		case 's': send_bytes = strtoull(optarg, NULL, 0); break;
		case 'r': recv_bytes = strtoull(optarg, NULL, 0); break;
		case 'm': msg = strtoul(optarg, NULL, 0); break;
		case 'p': progress = fopen(optarg, "w"); break;
		default: return 2;
		}
	}
	if (!card_out || !card_in || (!send_bytes == !recv_bytes) || msg == 0) {
		fprintf(stderr, "usage: %s --addrs A[,B] --card-out F --card-in G "
				"(--send N | --recv N) [--msg SIZE] [--progress FILE]\n", argv[0]);
		return 2;
	}
	alarm(120);
	t0 = now_s();
	struct sctpt_config cfg;
	struct sctpt_ep *ep;
	sctpt_config_init(&cfg);
	cfg.addrs = addrs;
	cfg.handler.complete = on_complete;
	CHECK(sctpt_open(&cfg, &ep) == 0, "open");
	write_card(ep, card_out);
	char card[SCTPT_CARD_MAX];
	read_card(card_in, card, sizeof(card));
	sctpt_peer_t p = sctpt_peer_add(ep, card);
	CHECK(p >= 0, "peer %s", card);
	if (send_bytes) {
		unsigned char *buf = malloc(msg);
		uint64_t sent = 0;
		for (int32_t idx = 0; sent < send_bytes && !down; idx++) {
			size_t n = send_bytes - sent < msg ? (size_t)(send_bytes - sent) : msg;
			fill_pattern(buf, n, (uint32_t)idx);
			struct iovec iov = {buf, n};
			int r = sctpt_send(ep, p, 1, idx, 0, &iov, 1, NULL);
			CHECK(r >= 0, "send %d", idx);
			double since = now_s();
			while (sctpt_pending(ep, p) && !down) {
				sctpt_wait(ep, 10); /* buf is reused: wait until it is handed to SCTP */
				if (now_s() - since > 3) {
					print_stats(ep, p);
					fflush(stdout);
					since = now_s();
				}
			}
			sent += n;
		}
		while (!acked && !down)
			sctpt_wait(ep, 10);
		if (acked)
			down = 0; /* the receiver may close first now */
		printf("sent %llu bytes in %.2f s, receiver acknowledged: %s\n",
		       (unsigned long long)sent, now_s() - t0, acked ? "yes" : "no");
		print_stats(ep, p);
		free(buf);
		sctpt_close(ep);
		return acked ? 0 : 1;
	}
	uint64_t last = 0;
	double since = now_s();
	while (received < recv_bytes && !bad && !down) {
		sctpt_wait(ep, 10);
		if (received != last) {
			last = received;
			since = now_s();
		} else if (now_s() - since > 3) {
			printf("stalled at %llu bytes\n", (unsigned long long)received);
			print_stats(ep, p);
			fflush(stdout);
			since = now_s();
		}
	}
	int32_t ack = 0;
	struct iovec iov = {&ack, sizeof(ack)};
	if (!bad && !down)
		sctpt_send(ep, p, 0, -1, 0, &iov, 1, NULL);
	double t = now_s() - t0;
	for (int i = 0; i < 1000 && !down; i++) /* until the sender has the ack and closes */
		sctpt_wait(ep, 10);
	printf("received %llu of %llu bytes %s in %.2f s\n", (unsigned long long)received,
	       (unsigned long long)recv_bytes, bad ? "CORRUPT" : "intact", t);
	print_stats(ep, p);
	sctpt_close(ep);
	return received == recv_bytes && !bad ? 0 : 1;
}
