/*
 * Runner for the shared-memory tests: forked ranks with an endpoint each (a configuration per
 * rank), every card added everywhere, a progress-driven barrier and flags in shared memory,
 * and a log of each rank's completions (payloads checked as they arrive).
 */
#ifndef TEST_SCTPT_SHM_HARNESS_H
#define TEST_SCTPT_SHM_HARNESS_H

#include "harness.h"
#include "sctpt.h"

#define SH_MAX 16
#define SH_MSGS 8192

struct sh_rank {
	int rank, n;
	struct sctpt_ep *ep;
	sctpt_peer_t peer[SH_MAX];
};

struct sh_shared {
	char cards[SH_MAX][SCTPT_CARD_MAX];
	int arrived, generation;
	int flag[16];
	uint64_t addr[4];
};
extern struct sh_shared *sh;

/* One completion as the rank saw it. */
struct sh_msg {
	enum sctpt_cqe_kind kind;
	int status;
	sctpt_peer_t peer;
	uint32_t context;
	int32_t tag;
	uint16_t stream;
	size_t len;
	int intact;             /* RECV: the payload matched sh_seed(context, tag, len) */
	int in_own_buf;         /* RECV: delivered into the buffer recv_buf gave */
	void *cookie;
	enum sctpt_event_type ev;
	int ev_error;
};

struct sh_log {
	struct sh_msg m[SH_MSGS];
	int n;
	int recvs, sends, sends_failed, downs, closed, ups;
	int bufs_back;          /* recv_buf buffers handed back unfilled */
};
extern struct sh_log lg;

/* Ranks with a per-rank configuration (conf may be NULL); killed: the rank that is meant to
 * die by SIGKILL (-1: none). Returns 0 when every other rank exited 0 within seconds. */
/* Called (when set) with each card a rank is about to add, which it may change. */
extern void (*sh_card_filter)(int rank, int peer, char *card);
int sh_run(const char *name, int n, int seconds, void (*conf)(int rank, struct sctpt_config *),
	   int (*body)(struct sh_rank *), int killed);
void sh_barrier(struct sh_rank *r);
/* Waits until flag[i] >= v, progressing (or not: the rank's rings then fill up). */
void sh_wait_flag(struct sh_rank *r, int i, int v, int progress);
void sh_set_flag(int i, int v);

uint32_t sh_seed(uint32_t context, int32_t tag, size_t len);
/* Sends len bytes of the pattern as iovcnt pieces; the buffer is freed at its completion (or
 * now when sctpt_send returns 1). Returns what sctpt_send returned. */
int sh_send(struct sh_rank *r, int to, uint32_t context, int32_t tag, unsigned flags, size_t len,
	    int iovcnt);
/* Progresses until the log has want RECV entries (and every send completed). */
void sh_drain(struct sh_rank *r, int want_recvs);
/* Called (when set) with every intact message after the log took it, still inside the
 * handler: the data must stay as it is until the handler returns. */
extern void (*sh_on_recv)(const struct sctpt_cqe *c);
/* Contexts from 100 up get their large messages in buffers of their own (recv_buf). */
#define SH_OWN_BUF_CTX 100

/* The rank's peer stats for rank `to`. */
struct sctpt_peer_stats *sh_stats(struct sh_rank *r, int to);

#endif
