/*
 * ch3:sctp -- the channel's own state, shared by its source files.
 *
 * One CH3 packet (the fixed-size header, then its data) travels as one message of the
 * transport core. The core's (context, tag) envelope says how it is ordered and on which
 * SCTP stream it goes:
 *   - matched point-to-point packets (eager, ready, synchronous, request-to-send, cancel
 *     request) carry their MPI context id and tag: released in send order per (source,
 *     context id), which is MPI's ordering, including MPI_ANY_TAG; the stream follows
 *     (context, tag), so unrelated messages never wait behind each other in SCTP;
 *   - rendezvous data (RNDV_SEND) goes on its own context, tagged with the receiver's
 *     request, without a header (the tag says all): a large transfer holds up no eager
 *     message or control packet, and a contiguous one lands in the user's buffer;
 *   - RMA packets share one context per peer (CH3's RMA assumes they arrive in order);
 *   - every other CH3 packet (clear-to-send, acknowledgements, close) shares another.
 */
#ifndef CH3_SCTP_H_INCLUDED
#define CH3_SCTP_H_INCLUDED

#include "mpidi_ch3_impl.h"
#include "sctpt.h"

/* Core contexts above MPI's 16-bit context ids. */
#define SCTPC_CTX_CTRL 0x10000u
#define SCTPC_CTX_RMA 0x10001u
#define SCTPC_CTX_RNDV 0x10002u
/* Contexts from here on are left to other layers on the same endpoint (ch3:hybrid's
 * iWARP layer). */
#define SCTPC_CTX_END 0x10003u

/* Environment settings (MPICH_SCTP_*), read at MPI_Init. */
struct sctpc_env {
	const char *addrs;          /* MPICH_SCTP_ADDRS: local addresses to bind */
	const char *multihome_file; /* MPICH_SCTP_MULTIHOME_FILE: "host addr addr ..." lines */
	const char *multihome_host; /* MPICH_SCTP_MULTIHOME_HOST: this host's name in it */
	const char *fnn_table;      /* MPICH_SCTP_FNN_TABLE + _ADDRS: stripe over FNN rails */
	const char *fnn_addrs;
	int verbose;                /* MPICH_SCTP_VERBOSE: 1 endpoint, 2 + per-peer stats */
	int spin_us;                /* MPICH_SCTP_SPIN_US: poll this long before blocking */
};

struct sctpc_fnn;

/* The channel's process-wide state. */
struct sctpc {
	struct sctpt_ep *ep;
	struct sctpc_env env;
	struct sctpc_fnn *fnn;
	MPIDI_PG_t *pg;
	int rank;
	char card[SCTPT_CARD_MAX];
	MPIDI_VC_t **peer_vc;       /* core peer id -> VC */
	int npeer_vc;
	MPIDI_CH3_PktHandler_Fcn *pkt[MPIDI_CH3_PKT_END_CH3 + 1];
	unsigned long rndv_placed;	/* rendezvous data the core put in the user's buffer */
	unsigned long rndv_copied;	/* ... that went through the packet handler */
};

extern struct sctpc sctpc;

/* ch3_sctp_config.c: the endpoint's configuration from the environment (and the FNN
 * tables when given); message for the user in err on failure. */
int sctpc_config(struct sctpt_config *cfg, char *err, size_t errlen);
void sctpc_config_free(void);

/* ch3_sctp_send.c */
int sctpc_send_done(const struct sctpt_cqe *c);
void sctpc_send_pool_free(void);

/* ch3_sctp_progress.c */
int sctpc_peer_name(MPIDI_VC_t * vc, char *buf, size_t len);
uint64_t sctpc_now_us(void);	/* CLOCK_MONOTONIC */
void *sctpc_rndv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		     void **cookie);

#endif /* CH3_SCTP_H_INCLUDED */
