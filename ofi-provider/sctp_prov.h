/*
 * sctp_prov.h: the libfabric provider `sctp` (libsctp-fi.so) inside: its objects and what each
 * file offers the others. The provider is a thin adapter over the SCTP core (transport/sctpt.h)
 * and its iWARP layer (transport/iw/iw_verbs.h); libfabric's own util code is private to
 * libfabric, so nothing here comes from it.
 *
 * - A domain owns one core endpoint (one UDP port, one set of SCTP associations) whose
 *   default handler is polled (sctpt_cq_read): received messages stay in the core's buffers
 *   until matched, and are copied once, into the receive buffer. An fi_endpoint is an index
 *   into its domain's endpoint table and owns core context SCTP_CTX_EP + index.
 * - One lock per domain (dom->lock) guards every object of the domain (endpoints, AVs, CQs,
 *   counters, MRs): FI_THREAD_SAFE. The core and the iWARP layer never call back into the
 *   provider, so the core is called with dom->lock held -- except sctpt_wait, which sleeps,
 *   and is called without it, so the core keeps its own lock. Unless dom->single: the
 *   application serializes its calls into the whole domain (FI_THREAD_DOMAIN) and the
 *   domain's thread never sleeps in the core (manual progress), so every call into the core
 *   is made under dom->lock, sctpt_wait included, and the core takes no lock of its own
 *   (cfg.single_thread).
 * - Progress: sctp_progress() moves the core, takes what it completed (messages, finished
 *   sends, events, iWARP work completions) and turns it into CQ entries and counter
 *   updates. FI_PROGRESS_MANUAL: the application's CQ/counter calls run it, and a thread
 *   per domain keeps SCTP itself moving while the application is away. FI_PROGRESS_AUTO:
 *   that thread runs all of it.
 */
#ifndef SCTP_PROV_H
#define SCTP_PROV_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include "sctpt.h"
#include "iw/iw_verbs.h"
#include "sctp_proto.h"
#include "fi_sctp.h"

#define SCTP_PROV_NAME "sctp"
#define SCTP_PROV_VERSION FI_VERSION(1, 0)
#define SCTP_FI_VERSION FI_VERSION(1, 17)

#define SCTP_IOV_LIMIT 4
#define SCTP_INJECT_SIZE 4096
#define SCTP_TX_SMALL 64      /* inject payloads a send carries in itself */
#define SCTP_QUEUE_SIZE 65536 /* advertised tx/rx sizes: queues grow, nothing is refused */
#define SCTP_MAX_MSG ((size_t)UINT32_MAX - SCTP_HDR_LEN)
#define SCTP_MR_KEY_SIZE 4    /* STags */
#define SCTP_ATOMIC_MAX 1     /* elements per atomic operation */

/* What the provider can do (every bit claimed here works). */
#define SCTP_MSG_CAPS (FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE | \
		       FI_MULTI_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM)
#define SCTP_RMA_CAPS (FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define SCTP_CAPS (SCTP_MSG_CAPS | SCTP_RMA_CAPS)
#define SCTP_TX_CAPS (FI_MSG | FI_TAGGED | FI_SEND | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE)
#define SCTP_RX_CAPS (FI_MSG | FI_TAGGED | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE | \
		      FI_MULTI_RECV | FI_RMA | FI_ATOMIC | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define SCTP_MR_MODE (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY) /* needed for RMA targets only */

extern struct fi_provider sctp_prov;

#define SCTP_WARN(subsys, ...) FI_WARN(&sctp_prov, subsys, __VA_ARGS__)
#define SCTP_INFO(subsys, ...) FI_INFO(&sctp_prov, subsys, __VA_ARGS__)
#define SCTP_DBG(subsys, ...) FI_DBG(&sctp_prov, subsys, __VA_ARGS__)

/* ---- provider parameters (sctp_init.c) ---- */
struct sctp_params {
	char *addrs, *backend, *config_file, *config_host, *fnn_table, *fnn_addrs;
	int streams, cmt, crc32c, shm;
	size_t frag_size, inject_size;
};
extern struct sctp_params sctp_params;
int sctp_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		 const struct fi_info *hints, struct fi_info **info);

/* ---- FNN striping (sctp_fnn.c): the core's ops.rails from routing/fnn ---- */
struct sctp_fnn;
/* 0 with *out NULL when neither parameter is set. */
int sctp_fnn_load(const char *table, const char *addrs, struct sctp_fnn **out);
void sctp_fnn_free(struct sctp_fnn *f);
int sctp_fnn_rails(void *arg, const char *card, const uint32_t *peer_addrs, int npeer,
		   const uint32_t *mine, int nmine, struct sctpt_rail *out, int max);

/* ---- fabric (sctp_fabric.c) ---- */
struct sctp_fabric {
	struct fid_fabric fab;
	uint32_t api_version;
};
int sctp_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);

/* wait sets: the CQs and counters bound to one, and fi_wait over them */
struct sctp_wait {
	struct fid_wait w;
	struct sctp_fabric *fab;
	pthread_mutex_t lock;
	struct fid *members[64];
	int n;
	atomic_int signaled;
};
int sctp_wait_add(struct sctp_wait *w, struct fid *f);
void sctp_wait_del(struct sctp_wait *w, struct fid *f);

/* ---- domain (sctp_domain.c) ---- */

/* A free list of objects of one size (dom->lock held): the sends, posted receives and
 * unexpected messages on every message's path come from here, not from malloc. Up to
 * SCTP_POOL_KEEP objects are kept; the rest go back to malloc. */
struct sctp_pool {
	void *head;
	unsigned n;
	size_t size;
};
#define SCTP_POOL_KEEP 1024

static inline void *sctp_pool_get(struct sctp_pool *p)
{
	void *o = p->head;

	if (!o)
		return malloc(p->size);
	p->head = *(void **)o;
	p->n--;
	return o;
}

static inline void sctp_pool_put(struct sctp_pool *p, void *o)
{
	if (p->n >= SCTP_POOL_KEEP) {
		free(o);
		return;
	}
	*(void **)o = p->head;
	p->head = o;
	p->n++;
}

void sctp_pool_fini(struct sctp_pool *p);

struct sctp_ep;
struct sctp_av;
struct sctp_cq;
struct sctp_tx;
struct sctp_rqp;

struct sctp_domain {
	struct fid_domain dom;
	struct sctp_fabric *fab;
	pthread_mutex_t lock;
	atomic_int busy;             /* dom->lock when single (see SCTP_LOCK) */
	uint32_t api_version;
	struct sctpt_ep *core;
	struct sctp_fnn *fnn;        /* striping, when FI_SCTP_FNN_* are set */
	struct sctp_addr self;       /* ep index 0; each endpoint puts its own */
	char card[SCTPT_CARD_MAX];
	enum fi_progress progress;   /* data progress */
	enum fi_threading threading;
	int single;                  /* every call into the core under dom->lock (see above) */
	int mr_mode;
	uint64_t caps;
	pthread_t thread;
	atomic_int stop;
	int thread_started;
	atomic_uint progressed;      /* sctp_progress calls so far: the thread sees the
				      * application at work by this moving */
	struct sctp_ep *eps[SCTP_MAX_EPS];
	atomic_int refs;             /* objects opened on the domain */
	TAILQ_HEAD(, sctp_tx) acks;  /* sends waiting for their delivery acknowledgement */
	uint64_t next_ack;
	uint64_t dropped;            /* messages no endpoint could take */
	uint64_t rx_seq;             /* receives posted so far */
	uint64_t placed, copied;     /* messages received into the receive buffer by the core,
				      * and copied there from the core's buffer */
	TAILQ_HEAD(, sctp_rx) placing; /* receives the core is filling */
	struct sctp_pool txs, rxs, ins; /* struct sctp_tx, sctp_rx, sctp_in */
	/* RMA over the iWARP layer (sctp_rma.c) */
	struct iw_rnic *rnic;
	struct iw_pd *pd;
	struct iw_cq *iwcq;
	uint32_t local_stag;
	uint32_t fence_stag;          /* peers' delivery-complete reads land here */
	uint8_t fence_byte;
	struct sctp_rqp **rqps;
	int nrqps, cap_rqps;
};

/* How a domain opens its core endpoint (sctpt_open; a fuzz target puts a socketless one). */
extern int (*sctp_core_open)(const struct sctpt_config *cfg, struct sctpt_ep **ep);
int sctp_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		     void *context);
/* Moves everything (dom->lock held); returns how many things it handled. */
int sctp_progress(struct sctp_domain *d);
/* Sleeps in the core up to ms (called without dom->lock). */
void sctp_sleep(struct sctp_domain *d, int ms);
/* Sends one control message (SCTP_CTX_CTRL) to a core peer; dom->lock held. */
int sctp_send_ctrl(struct sctp_domain *d, sctpt_peer_t peer, uint8_t op, uint64_t data,
		   uint64_t ack_id);
int sctp_errno(int neg_errno); /* core/iw -errno to a positive FI_* error */

/* ---- address vectors (sctp_av.c) ---- */
struct sctp_av_entry {
	int used;
	struct sctp_addr addr;
	sctpt_peer_t peer;
	struct sctp_rqp *rqp;         /* RMA queue pair to its domain, once used */
	int next;                     /* hash chain by (nonce, ep) */
};

struct sctp_av {
	struct fid_av av;
	struct sctp_domain *dom;
	enum fi_av_type type;
	struct sctp_av_entry *e;
	size_t n, cap;
	int *hash;                    /* heads, nbuckets of them */
	size_t nbuckets;
	int free_head;                /* FI_AV_MAP reuses removed entries */
	atomic_int refs;
};
int sctp_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av,
		 void *context);
/* The entry of fi_addr, or NULL (dom->lock held). */
struct sctp_av_entry *sctp_av_get(struct sctp_av *av, fi_addr_t a);
/* The fi_addr of the endpoint that sent a message, or FI_ADDR_NOTAVAIL. */
fi_addr_t sctp_av_lookup_src(struct sctp_av *av, uint64_t nonce, uint32_t ep);

/* ---- completion queues (sctp_cq.c) ---- */
struct sctp_cqe {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	int err, prov_errno;          /* error entry when err != 0 */
	size_t olen;
};

struct sctp_cq {
	struct fid_cq cq;
	struct sctp_domain *dom;
	enum fi_cq_format format;
	size_t entry_size;
	struct sctp_cqe *ring;
	size_t head, count, cap;
	int drained;                  /* the last read emptied it: the next one skips progress */
	enum fi_wait_obj wait_obj;
	struct sctp_wait *wait;
	atomic_int signaled;
	atomic_int refs;
};
int sctp_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		 void *context);
/* Adds an entry (dom->lock held); the ring grows, nothing is lost. */
int sctp_cq_write(struct sctp_cq *cq, void *ctx, uint64_t flags, size_t len, void *buf,
		  uint64_t data, uint64_t tag, fi_addr_t src);
int sctp_cq_write_err(struct sctp_cq *cq, void *ctx, uint64_t flags, size_t len, void *buf,
		      uint64_t data, uint64_t tag, size_t olen, int err, int prov_errno);
int sctp_cq_ready(struct sctp_cq *cq);

/* ---- counters (sctp_cntr.c) ---- */
struct sctp_cntr {
	struct fid_cntr cntr;
	struct sctp_domain *dom;
	atomic_uint_fast64_t val, err;
	struct sctp_wait *wait;
	atomic_int refs;
};
int sctp_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cntr,
		   void *context);
void sctp_cntr_inc(struct sctp_cntr *c);
void sctp_cntr_inc_err(struct sctp_cntr *c);

/* ---- event queues (sctp_eq.c) ---- */
int sctp_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq,
		 void *context);

/* ---- memory regions (sctp_mr.c) ---- */
struct sctp_mr {
	struct fid_mr mr;
	struct sctp_domain *dom;
	uint32_t stag;
	uint64_t access;
};
extern struct fi_ops_mr sctp_mr_ops;

/* ---- endpoints (sctp_ep.c) ---- */

/* A message that arrived and waits to be matched (or was claimed with FI_PEEK|FI_CLAIM). */
struct sctp_in {
	TAILQ_ENTRY(sctp_in) link;
	struct sctpt_cqe cqe;         /* the core's entry: holds the data until released */
	struct sctp_hdr hdr;
	const uint8_t *data;
	size_t len;
	fi_addr_t src;
};
TAILQ_HEAD(sctp_in_q, sctp_in);

/* A posted receive. */
struct sctp_rx {
	TAILQ_ENTRY(sctp_rx) link;    /* its endpoint's queue; dom->placing while placed */
	void *context;
	uint64_t flags;               /* FI_MSG or FI_TAGGED, FI_MULTI_RECV, FI_COMPLETION */
	fi_addr_t src;
	uint64_t tag, ignore;
	uint64_t seq;                 /* posting order, to requeue it where it was */
	struct iovec iov[SCTP_IOV_LIMIT];
	size_t count, total, used;    /* used: bytes a multi-receive buffer gave away */
	struct sctp_ep *ep;           /* placed: the core is filling it (see sctp_msg_place) */
	uint8_t hdr[SCTP_HDR_LEN];    /* placed: the message's header lands here */
};
TAILQ_HEAD(sctp_rx_q, sctp_rx);

/* A send in flight. */
struct sctp_tx {
	TAILQ_ENTRY(sctp_tx) link;    /* dom->acks while its acknowledgement is awaited */
	struct sctp_ep *ep;
	sctpt_peer_t peer;
	void *context;
	uint64_t flags;               /* FI_SEND | FI_MSG/FI_TAGGED, FI_COMPLETION, ... */
	uint64_t ack_id;
	int pending;                  /* the core's SEND entry, the ack: what is still to come */
	int err;                      /* first error, positive FI_* */
	void *copy;                   /* FI_INJECT: the payload's copy (malloc) */
	uint8_t hdr[SCTP_HDR_LEN];
	struct iovec iov[1 + SCTP_IOV_LIMIT];
	uint8_t small[SCTP_TX_SMALL]; /* FI_INJECT: a payload this short is copied here */
};

struct sctp_ep {
	struct fid_ep ep;
	struct sctp_domain *dom;
	uint32_t idx;
	uint64_t caps;
	uint64_t tx_op_flags, rx_op_flags;
	int enabled;
	struct sctp_av *av;
	struct sctp_cq *tx_cq, *rx_cq;
	int tx_selective, rx_selective;
	struct sctp_cntr *send_cntr, *recv_cntr, *read_cntr, *write_cntr;
	struct sctp_cntr *rem_read_cntr, *rem_write_cntr;
	struct fid_eq *eq;
	size_t min_multi_recv;
	struct sctp_rx_q rx_msg, rx_tag;   /* posted receives */
	struct sctp_in_q un_msg, un_tag;   /* unexpected messages */
	struct sctp_in_q claimed;          /* FI_PEEK | FI_CLAIM took them out of un_tag */
	int inflight;                      /* sends and placed receives not yet completed */
	int closed;                        /* closed while sends were in flight */
};

/* Provider-specific operation flag (bits 60..63): an fi_inject* call, which never completes
 * into the CQ. */
#define SCTP_TXF_NOCOMP (1ULL << 60)

int sctp_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
		 void *context);
/* A send's completion (entry and counter), when the core and the ack are done with it. */
void sctp_tx_done(struct sctp_tx *tx);

/* ---- messages (sctp_msg.c): the send and receive engine both interfaces share ---- */
extern struct fi_ops_msg sctp_msg_ops;
ssize_t sctp_send_common(struct sctp_ep *ep, uint8_t op, const struct iovec *iov, size_t count,
			 fi_addr_t dest, uint64_t tag, uint64_t data, uint64_t flags, void *context);
ssize_t sctp_recv_common(struct sctp_ep *ep, const struct iovec *iov, size_t count,
			 fi_addr_t src, uint64_t tag, uint64_t ignore, uint64_t flags,
			 void *context);
/* A message arrived for ep (dom->lock held): matched now or kept as unexpected. */
void sctp_msg_arrived(struct sctp_ep *ep, struct sctpt_cqe *c, const struct sctp_hdr *h);
/*
 * The core's place hook, dom->lock held, every earlier message of the endpoint matched: a
 * message of len bytes (header included) whose first head_len bytes are at head goes
 * straight into the receive it matches -- its header into the receive's hdr, its payload
 * into the receive's buffer -- when that receive is one contiguous buffer with room for
 * all of it; the receive leaves its queue for dom->placing. Returns the core's answer (2,
 * or 0: the core keeps the message, the usual path matches it later).
 */
int sctp_msg_place(struct sctp_domain *d, uint32_t context, size_t len, const void *head,
		   size_t head_len, struct iovec iov[2], void **cookie);
/* The RECV entry of a placed message (dom->lock held): its receive completes; or, the
 * message abandoned (status < 0), the receive is posted again where it was. */
void sctp_msg_placed(struct sctp_domain *d, const struct sctpt_cqe *c);
/* Domain close: receives the core never finished. */
void sctp_msg_place_fini(struct sctp_domain *d);
/* Data of in into rx; writes the completion; releases in. */
void sctp_msg_deliver(struct sctp_ep *ep, struct sctp_rx *rx, struct sctp_in *in);
int sctp_rx_match(const struct sctp_rx *rx, const struct sctp_in *in);
void sctp_in_free(struct sctp_domain *d, struct sctp_in *in);
/* A posted receive from the domain's pool (dom->lock held; count <= SCTP_IOV_LIMIT), NULL
 * when out of memory; sctp_rx_free gives it back. */
struct sctp_rx *sctp_rx_new(struct sctp_domain *d, const struct iovec *iov, size_t count,
			    fi_addr_t src, uint64_t tag, uint64_t ignore, uint64_t flags,
			    void *context);
static inline void sctp_rx_free(struct sctp_domain *d, struct sctp_rx *rx)
{
	sctp_pool_put(&d->rxs, rx);
}

/* ---- tagged (sctp_tagged.c) ---- */
extern struct fi_ops_tagged sctp_tagged_ops;

/* ---- RMA and atomics (sctp_rma.c, sctp_atomic.c) ---- */

/*
 * RMA runs on the iWARP layer: one queue pair per pair of domains, set up on first use by
 * SCTP_OP_QP_HELLO / SCTP_OP_QP_READY on the control context (and again after an error put
 * it in the error state). Keys are STags, checked with their bounds and rights by the target's
 * iWARP layer; local buffers need no registration (a local-only STag spans the address space).
 */
enum sctp_rma_kind { SCTP_RMA_READ, SCTP_RMA_WRITE, SCTP_RMA_FADD, SCTP_RMA_CSWAP, SCTP_RMA_LOOP };

struct sctp_rma_op {
	TAILQ_ENTRY(sctp_rma_op) link;  /* its queue pair's queue until posted */
	struct sctp_ep *ep;
	struct sctp_rqp *rqp;
	void *context;
	uint64_t flags;                 /* FI_RMA or FI_ATOMIC, FI_READ or FI_WRITE, op flags */
	int kind;
	int fence;                      /* a write completes with a 1-byte read behind it */
	int out;                        /* work requests not yet completed */
	int err;                        /* first error, positive FI_* */
	struct iovec iov[SCTP_IOV_LIMIT];
	size_t count;
	uint64_t addr;                  /* remote address (FI_MR_VIRT_ADDR) */
	uint32_t stag;
	void *copy;                     /* FI_INJECT: the payload's copy */
	/* atomics (one element): done as fetch-add, compare-swap, or a compare-swap loop on
	 * the element's aligned 64-bit word */
	enum fi_datatype dt;
	enum fi_op op;
	uint64_t operand, compare;
	void *result;                   /* the element's old value goes here (NULL: not asked) */
	uint64_t guess;                 /* what the word is thought to hold */
	unsigned shift;                 /* the element's bit position within its word */
	uint64_t scratch;               /* sink of fence reads and atomics */
};

struct sctp_rqp {
	uint64_t nonce;                 /* the remote domain */
	sctpt_peer_t peer;              /* where its control messages go */
	struct iw_qp *qp;
	uint32_t rqpn;                  /* its queue pair, once connected */
	uint32_t fence_stag;            /* its fence region (a readable byte) */
	uint64_t fence_addr;
	int connected, ready;           /* ours connected to its; its connected to ours */
	TAILQ_HEAD(, sctp_rma_op) pending;
};

extern struct fi_ops_rma sctp_rma_ops;
extern struct fi_ops_atomic sctp_atomic_ops;
int sctp_rma_init(struct sctp_domain *d);
void sctp_rma_fini(struct sctp_domain *d);
int sctp_rma_progress(struct sctp_domain *d);
void sctp_rma_ctrl(struct sctp_domain *d, const struct sctpt_cqe *c, const struct sctp_hdr *h);
/* Queues op (filled in, ep set) for dest and posts it when its queue pair is up (lock held);
 * -FI_* if it cannot be sent at all (op freed then). */
int sctp_rma_submit(struct sctp_ep *ep, fi_addr_t dest, struct sctp_rma_op *op);
/* Atomics: the compare-swap to try next for a loop op, and what its old value means
 * (1: done, the result is stored; 0: try again with op->guess updated). */
void sctp_atomic_next(struct sctp_rma_op *op, uint64_t *cmp, uint64_t *swap);
int sctp_atomic_seen(struct sctp_rma_op *op, uint64_t orig);
void sctp_atomic_store(struct sctp_rma_op *op, uint64_t word);
int sctp_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
		      struct fi_atomic_attr *attr, uint64_t flags);

/* ---- ops that are not offered (sctp_init.c) ---- */
int sctp_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int sctp_no_control(struct fid *fid, int command, void *arg);
int sctp_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
		     void *context);
int sctp_no_tostr(const struct fid *fid, char *buf, size_t len);
int sctp_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context);

/*
 * dom->lock. When single, the application never contends with itself and the domain's thread
 * only ever trylocks, so a flag does: one atomic exchange to take it (the application yields
 * while the thread has it, for the length of one progress) and a store to give it back, where
 * a mutex costs two locked operations and some fifty instructions on every call and poll.
 */
static inline void sctp_lock(struct sctp_domain *d)
{
	if (!d->single) {
		pthread_mutex_lock(&d->lock);
		return;
	}
	while (atomic_exchange_explicit(&d->busy, 1, memory_order_acquire))
		sched_yield();
}

static inline int sctp_trylock(struct sctp_domain *d)
{
	if (!d->single)
		return pthread_mutex_trylock(&d->lock) == 0;
	return !atomic_exchange_explicit(&d->busy, 1, memory_order_acquire);
}

static inline void sctp_unlock(struct sctp_domain *d)
{
	if (!d->single)
		pthread_mutex_unlock(&d->lock);
	else
		atomic_store_explicit(&d->busy, 0, memory_order_release);
}

#define SCTP_LOCK(d) sctp_lock(d)
#define SCTP_UNLOCK(d) sctp_unlock(d)

#endif /* SCTP_PROV_H */
