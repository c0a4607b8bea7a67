/*
 * ch3:hybrid -- the thesis's hybrid channel: every CH3 packet goes over the SCTP core as in
 * ch3:sctp (its sources, in sctp/, are compiled here unchanged or included by thin wrappers),
 * while the data of MPI one-sided operations moves as RDMA over the core's iWARP layer
 * (transport/iw) on the same associations:
 *   - MPI_Put: RDMA Writes from the origin buffer into the target window;
 *   - MPI_Get: RDMA Reads from the target window into the origin buffer;
 *   - MPI_Fetch_and_op, MPI_Get_accumulate and MPI_Accumulate of one 64-bit integer with
 *     MPI_SUM, and MPI_Compare_and_swap of one: RFC 7306 Fetch-and-Add / Compare-and-Swap;
 *     fetching MPI_NO_OP of up to 8 bytes: a Read.
 * Contiguous and derived datatypes on either side become one work request per contiguous
 * piece; operations CH3 piggybacks a lock request on, windows without registered memory,
 * and pieces beyond a limit stay on CH3's packets.
 *
 * Interception: ch3:sctp's send path hands each packet to sctph_send (the wrapper
 * ch3_hybrid_send.c renames its call to the core). A PUT, GET, FOP or CAS packet that can go
 * as RDMA becomes work requests, and what its flags ask of the target (a fence's counter, a
 * flush's or unlock's acknowledgement) follows as a data-less PUT_IMMED packet. Synchronisation
 * stays CH3's, and a packet that completes an epoch at the target (a follow-up, FLUSH,
 * UNLOCK, DECR_AT_COUNTER) must not overtake the data: it goes as an iWARP Send on the same
 * QP (RDMAP delivers a Send only after every earlier Write of the QP is placed), or, when
 * that cannot keep CH3's order (a packet of the same window and target went over the core
 * before it, or the peer's receives are used up), it waits with every other RMA packet to the
 * peer until the RDMA work issued before it has completed, Writes confirmed placed by a
 * 1-byte Read behind them (served only after every earlier segment of the QP is placed).
 * A Send may follow Reads at once: the target hands it to CH3 only when its QP has answered
 * every Read before it, so that a fence count or an unlock never lets the window change
 * under a Read still being answered.
 */
#ifndef CH3_HYBRID_H_INCLUDED
#define CH3_HYBRID_H_INCLUDED

#include "sctp/ch3_sctp.h"
#include "mpidrma.h"
#include "iw_verbs.h"

/* One piece of an operation: local and remote addresses of one work request. */
struct sctph_piece {
	void *local;
	uint64_t remote;
	uint32_t len;
};

enum sctph_kind {
	SCTPH_PUT, SCTPH_GET, SCTPH_ATOMIC, SCTPH_ACC,
	SCTPH_FENCE,                /* the ordering Read */
	SCTPH_SEND,                 /* a CH3 packet as an iWARP Send */
	SCTPH_CREDIT,               /* receives given back: a Write of the count consumed */
};

/* Receive buffers each QP keeps posted for packets sent as iWARP Sends; the sender's credit. */
#define SCTPH_RECVS 32

/* One MPI operation (or an ordering fence) on its way as work requests; the id of each. */
struct sctph_op {
	enum sctph_kind kind;
	enum iw_wr_opcode opcode;
	int peer;                   /* the core's peer id */
	uint32_t stag;              /* the target's */
	uint64_t compare_add, swap; /* atomics */
	void *cookie;               /* PUT, ACC: ch3:sctp's send record, completed as if sent */
	MPIR_Request *rreq;         /* GET, ATOMIC: the response request CH3 waits on */
	MPI_Win win;                /* GET, ATOMIC, ACC: the origin's window, for a local ack */
	int target_rank;            /* ... and the target's rank in it */
	int pkt_flags;
	int nwr, posted, pending;   /* work requests: all, posted, not completed */
	uint64_t scratch;           /* a fence Read's sink */
	size_t bytes;
	struct sctph_op *next;      /* in the peer's backlog */
	struct sctph_piece pc[];
};

/* A CH3 packet held until the RDMA work issued to its peer before it has completed. */
struct sctph_held {
	uint64_t need;              /* the peer's completed work requests it waits for */
	uint32_t context;
	int32_t tag;
	unsigned flags;
	void *cookie;
	int iovcnt;
	struct sctph_held *next;
	struct iovec iov[];
};

/* A packet that came as an iWARP Send behind a Read Request the QP has not finished
 * answering: CH3 gets it once the window is no longer read for the peer. */
struct sctph_inbound {
	struct sctph_inbound *next;
	MPIDI_CH3_Pkt_t pkt;
};

/* What this process knows about one peer (by the core's peer id). */
struct sctph_peer {
	struct iw_qp *qp;           /* NULL until a window includes the peer */
	uint32_t fence_stag;        /* the peer's fence word (readable) */
	uint64_t fence_to;
	uint64_t issued, done;      /* work requests issued (posted or in the backlog), completed */
	int dirty;                  /* Writes issued since the last fence Read */
	uint64_t last_to;           /* the last Write's target range and STag: a Terminate */
	uint32_t last_len, last_stag; /* it caused may fail a later work request */
	int busy;                   /* on the busy list */
	struct sctph_op *backlog, *backlog_tail;   /* ops with work requests not yet posted */
	uint64_t sends;             /* packets sent to it as iWARP Sends */
	uint64_t placed_at;         /* our Writes are placed once it took this many of them */
	uint32_t credit_stag;       /* where to write how many of its Sends we consumed */
	uint64_t credit_to;
	uint64_t acked;             /* our Sends it took, known from CH3's acknowledgements */
	uint64_t consumed, reported;  /* its Sends we took, and told it about */
	uint64_t consumed_word;     /* the credit Write's source */
	MPIDI_CH3_Pkt_t *rbuf;      /* SCTPH_RECVS receive buffers */
	struct sctph_held *held, *held_tail;
	struct sctph_inbound *inq, *inq_tail;  /* its Sends waiting for its Reads' answers */
	struct sctph_peer *next_busy;
};

/* A window's RDMA state (MPIR_Win's sctph field). */
struct sctph_win {
	uint32_t stag;              /* this rank's window memory, 0: none */
	int own_stag;               /* registered for this window (not MPI_Alloc_mem's) */
	int size;
	uint32_t *stags;            /* by window rank: the target's STag, 0: no RDMA to it */
	int *rank_of;               /* by process-group rank: window rank, or -1 */
	unsigned char *core_acc;    /* by window rank: an accumulate went as a CH3 packet */
	unsigned char *core_op;     /* by window rank: an operation went as a CH3 packet since the
				     * last packet that closes an epoch (its order matters) */
	uint64_t *close_sends;      /* by window rank: the peer's Send count once a flush or unlock
				     * went as a Send, until CH3's acknowledgement of it (0: none) */
};

struct sctph_stats {
	uint64_t puts, gets, atomics, fences, put_bytes, get_bytes, wrs, held, fallback;
	uint64_t qp_sends, qp_recvs;
	uint64_t lone_waits, lone_packets;  /* Puts that waited; of them, went as packets */
};

/* Environment settings (MPICH_HYBRID_*), read when the iWARP layer opens. */
struct sctph_env {
	int rdma;                   /* MPICH_HYBRID_RDMA: 0 keeps one-sided on CH3's packets (1) */
	int atomics;                /* MPICH_HYBRID_ATOMICS: RFC 7306 atomics (1) */
	int max_wrs;                /* MPICH_HYBRID_MAX_PIECES: more pieces go as packets (256) */
	int stats;                  /* MPICH_HYBRID_STATS: per-rank RDMA counts at MPI_Finalize */
	int sends;                  /* MPICH_HYBRID_SENDS: closing packets as iWARP Sends (1) */
	int lone_wait_us;           /* MPICH_HYBRID_LONE_WAIT_US: how long a Put that may yet
				     * close its epoch alone waits for what follows it (50; 0: not) */
	long lone_max;              /* MPICH_HYBRID_LONE_MAX: a Put or Get that closes its epoch
				     * with nothing in flight before it goes as a packet up to
				     * this many bytes (256 KiB) */
};

struct sctph {
	struct iw_rnic *rnic;
	struct iw_pd *pd;
	struct iw_cq *cq;
	uint32_t local_stag;        /* the whole address space, local access only */
	uint32_t fence_stag;        /* fence_word, readable by peers */
	uint64_t fence_word;
	uint64_t *credits;          /* by process-group rank: how many of our Sends it consumed */
	uint32_t credit_stag;
	struct sctph_peer *peer;    /* by core peer id (sctpc.npeer_vc) */
	struct sctph_peer *busy;    /* peers with a backlog or held packets */
	struct sctph_env env;
	struct sctph_stats st;
	int opened;                 /* 1 open, -1 failed (no RDMA), 0 not tried */
};

extern struct sctph sctph;

/* ch3_hybrid_rnic.c: the iWARP layer, queue pairs, work, completions, held packets */
int sctph_open(void);
int sctph_qp(MPIDI_VC_t * vc);
struct sctph_op *sctph_op_new(enum sctph_kind kind, int peer, int npieces);
void sctph_issue(struct sctph_peer *p, struct sctph_op *op);
int sctph_hold(struct sctph_peer *p, uint32_t context, int32_t tag, unsigned flags,
	       const struct iovec *iov, int iovcnt, void *cookie);
int sctph_peer_quiet(const struct sctph_peer *p);
int sctph_send_packet(struct sctph_peer *p, const MPIDI_CH3_Pkt_t * pkt, void *cookie);
void sctph_sends_taken(struct sctph_peer *p, uint64_t n);
void sctph_send_done(void *cookie, int status);
void sctph_fatal(const char *fmt, ...) ATTRIBUTE((format(printf, 1, 2), noreturn));

/* ch3_hybrid_rma.c: the send path's packets, taken over as RDMA or passed on; the
 * acknowledgement handler that lets atomics go as RDMA again */
void sctph_rma_init(void);
int sctph_send(struct sctpt_ep *ep, sctpt_peer_t peer, uint32_t context, int32_t tag,
	       unsigned flags, const struct iovec *iov, int iovcnt, void *cookie);
/* Sends the Put that waits for what follows it (as RDMA): always with idle set (the progress
 * engine is about to sleep, or closing), else when the poll found nothing to do and no
 * message to its target suggests the epoch is being closed, or when it waited long enough.
 * 1 if it sent one. */
int sctph_lone_release(int idle, int polled_nothing);
/* ch3_hybrid_rnic.c, called by ch3:sctp's progress engine in place of the core's */
int sctph_progress(struct sctpt_ep *ep);
/* ... its iWARP part alone (before and after ch3:sctp's progress engine sleeps in the core) */
int sctph_rdma_progress(void);
void sctph_close(struct sctpt_ep *ep);

/* ch3_hybrid_win.c */
void sctph_win_forget_regs(void);

#endif /* CH3_HYBRID_H_INCLUDED */
