/* iw_int.h: the software RNIC's internals, shared by iw_rnic.c, iw_mr.c, iw_qp.c, iw_rx.c. */
#ifndef IW_INT_H
#define IW_INT_H

#include <pthread.h>
#include <sys/uio.h>

#include "iw_verbs.h"

#define IW_MAX_QP (IW_QPN_MAX + 1)
#define IW_MAX_MR 4096
#define IW_RSP_DEPTH 64     /* inbound Read/Atomic requests awaiting their response (IRD) */
#define IW_FENCE_MASK 0x7fffffffu
/* Unordered segments may arrive this far ahead of the oldest missing one (the sender has at
 * most its tx slots plus two socket buffers in flight, far fewer). */
#define IW_RX_WINDOW 8192u
#define IW_SLOT_HDR (IW_UNTAGGED_HLEN + IW_ATOMIC_REQ_LEN + IW_UNTAGGED_HLEN)
/* Bundles (iw_proto.h): consecutive ordered segments of one QP with the same fence. */
#define IW_BUNDLE_MAX 32      /* segments */
#define IW_BUNDLE_BYTES 16384 /* segment bytes: small segments only (large ones go alone) */
/* Read Response payload copies above IW_RSP_POOL_MIN bytes come from a pool of seg_size
 * buffers kept for reuse (a fresh one per segment costs page faults on every large Read). */
#define IW_RSP_POOL 32
#define IW_RSP_POOL_MIN 4096

struct iw_mr {
	int used, valid;
	uint8_t key;
	struct iw_pd *pd;
	uint64_t base, len;
	unsigned access;
	unsigned inflight;    /* segments the core may still read from it (Read Responses sent in
			       * place) or write into it (tagged segments being placed) */
};

struct iw_pd {
	struct iw_rnic *r;
	struct iw_pd *next; /* the RNIC's list */
	int users;          /* regions and QPs */
};

struct iw_cq {
	struct iw_rnic *r;
	struct iw_cq *next; /* the RNIC's list */
	struct iw_wc *ring;
	unsigned depth, head, count;
	int users;
	int full;           /* a completion found no room: polling retries its QP's queues */
	uint32_t refill_next; /* the QP number that retry starts at (round robin) */
};

struct iw_swqe {
	struct iw_send_wr wr;
	struct iw_sge sge[IW_MAX_SGE];
	uint64_t len;         /* message length */
	uint64_t sent;        /* payload bytes already cut into segments */
	unsigned outstanding; /* segments the core holds */
	int all_sent;         /* every segment generated */
	int done;             /* finished (completes at the head once outstanding is 0) */
	enum iw_wc_status status;
	struct iw_term term;
	uint32_t atomic_id;
};

struct iw_rwqe {
	struct iw_recv_wr wr;
	struct iw_sge sge[IW_MAX_SGE];
	uint64_t len;
	struct iw_wc wc;      /* once finished: its completion, waiting for room in the CQ */
};

/* A response this QP owes its peer: a Read Response stream or an Atomic Response. */
struct iw_rsp {
	int atomic;
	struct iw_read_req rd;
	uint64_t sent;
	struct iw_atomic_resp at;
};

struct iw_held {
	struct iw_held *next;
	uint32_t fence;
	size_t len;
	uint8_t data[];
};

struct iw_qp {
	struct iw_rnic *r;
	struct iw_pd *pd;
	struct iw_cq *scq, *rcq;
	uint32_t qpn, rqpn;
	sctpt_peer_t peer;
	enum iw_qp_state state;
	struct iw_swqe *sq;
	unsigned sq_size, sq_head, sq_count, sq_cur; /* sq_cur: next WR to cut (count from head) */
	struct iw_rwqe *rq;
	unsigned rq_size, rq_head, rq_count; /* rq_count: posted and not yet retired */
	unsigned rq_done;              /* of those, finished from the head (waiting for the CQ) */
	struct iw_rsp rsp[IW_RSP_DEPTH];
	unsigned rsp_head, rsp_count;
	unsigned rsp_in_place;         /* Read Response segments the core still reads from their
					* region (IW_ACCESS_READ_IN_PLACE) */
	uint32_t tx_msn[4], rx_msn[4];
	uint32_t tx_unord, rx_unord;   /* rx_unord: every unordered index below it arrived */
	uint64_t rx_seen[IW_RX_WINDOW / 64]; /* arrived unordered indexes at and above rx_unord */
	struct iw_held *held, *held_tail;
	size_t held_bytes;
	int term_pending;
	uint8_t term_hdr[IW_UNTAGGED_HLEN]; /* the offending segment's header, sent back */
	size_t term_hdr_len;
	struct iw_term term_sent, term_recv;
	int term_wc_pending;           /* term_wc goes to the send CQ after the send queue */
	struct iw_wc term_wc;
	uint32_t atomic_next;
};

struct iw_slot {
	struct iw_slot *next;
	struct iw_qp *qp;     /* NULL once the QP is gone */
	struct iw_swqe *wqe;  /* the send WR this segment belongs to, or NULL */
	sctpt_peer_t peer;
	uint32_t context;
	int32_t tag;
	unsigned flags;
	int iovcnt;
	struct iovec iov[1 + IW_MAX_SGE];
	uint8_t hdr[IW_SLOT_HDR];
	void *buf;            /* payload copy this slot owns (Read Responses), or NULL */
	struct iw_mr *mr;     /* or the region its payload lies in (IW_ACCESS_READ_IN_PLACE) */
	int pooled;           /* buf is seg_size bytes from the RNIC's pool */
	struct iw_slot *bnext; /* the next slot of its bundle (one core message, one completion) */
	uint8_t blen[4];      /* its length inside a bundle */
};

struct iw_rnic {
	pthread_mutex_t lock;
	struct sctpt_ep *ep;
	struct iw_rnic_attr attr;
	struct iw_rnic_stats st;
	struct iw_mr mr[IW_MAX_MR];
	struct iw_qp *qp[IW_MAX_QP];
	uint32_t qp_end;      /* above every QP number handed out: iw_engine's scan stops there */
	uint32_t next_qpn;
	struct iw_pd *pds;
	struct iw_cq *cqs;
	int handler;          /* our handler's id on the endpoint */
	struct iw_slot *slots, *free_slots, *outq, *outq_tail;
	unsigned slots_busy;
	unsigned in_place;    /* of those, Read Responses sent from their region */
	void *rsp_pool[IW_RSP_POOL];
	unsigned rsp_pooled;
	int flushing;         /* a thread is in iw_flush's loop */
	pthread_t thread;
	int thread_on, stop;
};

/* iw_rnic.c */
int iw_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct iw_slot *iw_slot_get(struct iw_rnic *r);
void iw_slot_queue(struct iw_rnic *r, struct iw_slot *s);
void iw_slot_done(struct iw_rnic *r, struct iw_slot *s, int status);
void *iw_rsp_buf(struct iw_rnic *r, struct iw_slot *s, size_t n); /* s->buf for n bytes */
void iw_flush(struct iw_rnic *r); /* without the lock: hands queued segments to the core */
double iw_now(void);             /* seconds, monotonic */

/* iw_mr.c */
struct iw_mr *iw_mr_find(struct iw_rnic *r, uint32_t stag);
/* 0, or -1 if the CQ is full (the caller keeps the completion and retries: iw_poll_cq). */
int iw_cq_push(struct iw_cq *cq, const struct iw_wc *wc);

/* iw_qp.c (all with the lock held) */
void iw_engine(struct iw_rnic *r);           /* cuts segments while slots are free */
void iw_qp_fail(struct iw_qp *qp, const struct iw_term *send_term, const uint8_t *hdr,
		size_t hdrlen, const struct iw_term *recvd);
void iw_qp_lost(struct iw_qp *qp);           /* the peer is gone */
void iw_sq_retire(struct iw_qp *qp);         /* finished WRs at the head into the CQs */
void iw_rq_retire(struct iw_qp *qp);
int iw_sge_copy(const struct iw_sge *sge, int n, uint64_t off, const void *src, size_t len);
void iw_qp_free(struct iw_qp *qp);

/* iw_rx.c */
void iw_rx_segment(struct iw_qp *qp, const uint8_t *data, size_t len);
/* Direct placement (iw_rnic.c): whether a tagged segment's n payload bytes may go straight
 * into the region its header names (0: yes); the segment once the core placed its payload
 * there, from its header alone. */
int iw_rx_place_ok(struct iw_qp *qp, const struct iw_hdr *h, uint64_t n);
void iw_rx_placed(struct iw_qp *qp, const uint8_t *hdr, size_t hlen, size_t n);

#endif
