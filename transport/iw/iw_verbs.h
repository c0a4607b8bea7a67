/*
 * iw_verbs.h: iWARP (RDMAP RFC 5040, DDP RFC 5041 over SCTP RFC 5043, atomics RFC 7306) as a
 * software RNIC on top of an sctpt endpoint (transport/sctpt.h, public API only).
 *
 * Objects: an RNIC (struct iw_rnic) attached to one endpoint; protection domains; memory
 * regions named by steering tags (STags) with access rights and bounds; completion queues that
 * many queue pairs share; queue pairs (send and receive queues) attached to one core peer.
 *
 * The RNIC's share of the endpoint: iw_open claims the contexts context_base .. context_base +
 * IW_QPN_MAX (iw_rnic_attr; both sides must use the same base) with a handler of its own
 * (sctpt_handler_add): segments, the completions of the sends that carried them, and the
 * endpoint's events (a lost peer fails its QPs) come to the RNIC straight from the core. The
 * endpoint's owner keeps every other context.
 * Progress: the owner keeps calling sctpt_progress/sctpt_wait (which deliver to the RNIC) and
 * iw_progress; or iw_rnic_attr.progress_thread starts a thread that does it (an RNIC working
 * on its own).
 *
 * Connection set-up (the thesis's register_fd spirit): both sides create a QP, exchange QP
 * numbers through their own channel, and each calls iw_qp_connect(qp, peer, remote_qpn) before
 * the other side sends. Segments arriving for an unconnected QP, or from another peer, are
 * dropped (counted in iw_rnic_stats).
 *
 * Wire: one DDP segment = one sctpt message on context context_base + remote qpn (iw_proto.h).
 * Ordering over SCTP streams (the tag given to sctpt_send picks the stream):
 *   - tagged segments that are not the Last of their message (Write, Read Response) carry
 *     independent placement: they go SCTPT_SEND_UNORDERED, spread over the streams;
 *   - every other segment (untagged: Send, Read Request, Terminate, atomics; and the Last
 *     tagged segment) goes ordered, and its sctpt tag is a fence: the number (mod 2^31) of
 *     unordered segments the QP sent before it. The receiver handles an ordered segment only
 *     once it has received that many unordered segments on the QP (it holds a copy until
 *     then), so a Last segment completes, and a Send is delivered, only after all data of
 *     earlier tagged messages is placed (RFC 5040 s5.5 ordering rules).
 *   Untagged messages are placed in order (they are ordered messages).
 *
 * Validation of every received segment (RFC 5040 s7, RFC 5041 s7): on any error the data never
 * touches memory, the QP goes to IW_QPS_ERROR, a Terminate names layer/etype/ecode, all posted
 * work is flushed, and the peer's QP, on receiving the Terminate, goes to error and completes
 * its oldest outstanding send work request (or, if none, a IW_WC_TERMINATE completion) with an
 * error status carrying the codes. A peer that is lost, restarts or closes its endpoint puts
 * every QP connected to it in error the same way (IW_WC_PEER_LOST, then flushes).
 *
 * Threading: every function may be called from any thread, also from the complete() of the
 * endpoint's other handlers; one lock per RNIC, never held while calling the core.
 * Errors are negative errno values; iw_last_error() gives a message.
 */
#ifndef IW_VERBS_H
#define IW_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include "sctpt.h"
#include "iw_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

struct iw_rnic;
struct iw_pd;
struct iw_cq;
struct iw_qp;

#define IW_QPN_MAX 1023u /* QP numbers are 1..IW_QPN_MAX */
#define IW_CONTEXT_BASE 0xfff00000u /* iw_rnic_attr.context_base's default */
#define IW_MAX_SGE 4

struct iw_rnic_attr {
	size_t seg_size;        /* payload bytes per DDP segment (60 KiB: fits one core fragment) */
	unsigned tx_slots;      /* segments handed to the core and not yet done (512) */
	size_t max_held_bytes;  /* received ordered segments held for their fence (64 MiB) */
	int progress_thread;    /* 1: a thread runs sctpt_wait + iw_progress (0) */
	int progress_interval_ms; /* that thread's sctpt_wait timeout (1) */
	uint32_t context_base;  /* the RNIC's contexts: this + QP number (IW_CONTEXT_BASE) */
	/* 1: iw_post_send queues its segments and the next iw_progress (or core completion)
	 * hands them to the core, so work posted in a row leaves in few messages (0) */
	int defer_tx;
	/* iw_dereg_mr of an IW_ACCESS_READ_IN_PLACE region waits this long at most for the core
	 * to let go of the Read Responses sent from it (10000; 0: no wait) */
	int dereg_wait_ms;
};

struct iw_rnic_stats {
	uint64_t segs_sent, segs_recv, bytes_placed;
	uint64_t dropped;       /* segments for unknown/unconnected QPs or from another peer */
	uint64_t held;          /* ordered segments that waited for their fence */
	uint64_t terms_sent, terms_recv;
	uint64_t bundles;       /* core messages that carried several ordered segments */
	uint64_t rsp_in_place;  /* Read Response segments sent from the region, not a copy */
	uint64_t dereg_waits;   /* iw_dereg_mr calls that found such segments still held */
	uint64_t segs_placed;   /* tagged segments the core read straight into their region */
};

void iw_rnic_attr_init(struct iw_rnic_attr *attr);
/* -EEXIST (with iw_last_error naming the range): another handler has some of the contexts. */
int iw_open(struct sctpt_ep *ep, const struct iw_rnic_attr *attr, struct iw_rnic **out);
/* Destroys what is left (QPs, CQs, regions, PDs: their pointers become invalid); waits up to
 * 2 s for segments the core still holds (dereg_wait_ms while some are Read Responses sent in
 * place), then gives the contexts back. Call it before sctpt_close, and while no other thread
 * progresses the endpoint (its handler may be running). */
void iw_close(struct iw_rnic *r);
/* Internal work (segments waiting for a free slot); returns how many things it did. */
int iw_progress(struct iw_rnic *r);
int iw_rnic_stats(struct iw_rnic *r, struct iw_rnic_stats *st);
const char *iw_last_error(void);

/* Protection domains and memory regions. */
enum iw_access {
	IW_ACCESS_LOCAL_READ = 0x1,   /* source of local sends/writes */
	IW_ACCESS_LOCAL_WRITE = 0x2,  /* receive buffers, read sinks, atomic results */
	IW_ACCESS_REMOTE_READ = 0x4,
	IW_ACCESS_REMOTE_WRITE = 0x8,
	IW_ACCESS_REMOTE_ATOMIC = 0x10,
	/* Read Response segments of 4 KiB and more are sent from the region itself, not from a
	 * copy made when the Read Request is served: they carry the memory as it is when the core
	 * takes them (a Write or atomic handled after the Request may show; wait for the Read's
	 * completion to order later updates behind it), and iw_dereg_mr waits until the core
	 * has let go of them */
	IW_ACCESS_READ_IN_PLACE = 0x20,
};

int iw_pd_alloc(struct iw_rnic *r, struct iw_pd **out);
int iw_pd_free(struct iw_pd *pd); /* -EBUSY while regions or QPs use it */
/* Registers [addr, addr+len): the STag's tagged offsets are addresses (TO = (uintptr_t)p). */
int iw_reg_mr(struct iw_pd *pd, void *addr, size_t len, unsigned access, uint32_t *stag);
/* An IW_ACCESS_READ_IN_PLACE region with Read Responses still held by the core is first made
 * invalid (no further segment is cut from it), then waited for, at most attr.dereg_wait_ms:
 * progressing the endpoint (sctpt_wait and iw_progress; so other handlers' completions may
 * run) or, with the RNIC's progress thread, sleeping. 0 once the memory is no longer
 * referenced (free it then); -EBUSY if the wait ran out (the peer neither took the data nor
 * was declared lost, or the call came from a handler's complete(), where no completion is
 * delivered): the region stays registered and invalid, its memory must stay; call again. */
int iw_dereg_mr(struct iw_rnic *r, uint32_t stag);
/* Local invalidate: the STag stays registered but is refused until iw_dereg_mr. */
int iw_invalidate_stag(struct iw_rnic *r, uint32_t stag);
/* 1 if the STag is registered and valid, 0 if invalidated, -ENOENT if unknown. */
int iw_stag_valid(struct iw_rnic *r, uint32_t stag);

/* Completion queues. */
enum iw_wc_status {
	IW_WC_SUCCESS = 0,
	IW_WC_LOC_PROT_ERR,     /* a local SGE/STag was refused */
	IW_WC_LOC_LEN_ERR,
	IW_WC_REM_ACCESS_ERR,   /* the peer's Terminate: RDMAP remote protection / DDP tagged */
	IW_WC_REM_INV_REQ_ERR,  /* ... DDP untagged buffer error (no/too small receive) */
	IW_WC_REM_OP_ERR,       /* ... any other Terminate */
	IW_WC_LOC_QP_OP_ERR,    /* this side detected a protocol error and sent a Terminate */
	IW_WC_WR_FLUSH_ERR,     /* flushed: the QP went to error before this request finished */
	IW_WC_PEER_LOST,        /* the peer was lost, restarted or closed its endpoint */
};

enum iw_wc_opcode {
	IW_WC_SEND, IW_WC_WRITE, IW_WC_READ, IW_WC_FETCH_ADD, IW_WC_COMP_SWAP,
	IW_WC_RECV,      /* a Send received into a posted receive */
	IW_WC_TERMINATE, /* a Terminate arrived while no send request was outstanding */
};

#define IW_WC_WITH_INV 0x1u /* RECV of a Send with Invalidate: invalidated_stag is set */

struct iw_wc {
	uint64_t wr_id;
	enum iw_wc_status status;
	enum iw_wc_opcode opcode;
	uint32_t qpn;
	uint32_t byte_len;          /* RECV: message length; READ: bytes read */
	unsigned flags;
	uint32_t invalidated_stag;
	struct iw_term term;        /* the Terminate's codes for REM_* and LOC_QP_OP_ERR */
};

int iw_cq_create(struct iw_rnic *r, unsigned depth, struct iw_cq **out);
int iw_cq_destroy(struct iw_cq *cq); /* -EBUSY while QPs use it */
/* Fills up to n completions; returns how many. A completion that finds its CQ full waits, its
 * work request still on its queue (so the QP's queues fill up and posting slows down), and is
 * added, in its queue's order, when polling makes room: a CQ smaller than the work of its QPs
 * slows them down but loses nothing. */
int iw_poll_cq(struct iw_cq *cq, int n, struct iw_wc *wc);

/* Queue pairs. */
enum iw_qp_state { IW_QPS_IDLE, IW_QPS_RTS, IW_QPS_ERROR };

struct iw_qp_attr {
	struct iw_cq *send_cq, *recv_cq;
	unsigned max_send_wr, max_recv_wr; /* queue depths (defaults 256 when 0) */
	uint32_t qpn; /* this number (1..1023), e.g. the peer's rank + 1 so that both sides know
		       * each other's QP without an exchange; 0: any free one; -EBUSY if taken */
};

int iw_qp_create(struct iw_pd *pd, const struct iw_qp_attr *attr, struct iw_qp **out);
int iw_qp_destroy(struct iw_qp *qp);
uint32_t iw_qp_num(const struct iw_qp *qp);
int iw_qp_connect(struct iw_qp *qp, sctpt_peer_t peer, uint32_t remote_qpn);
/* 1 once every Read Request (and atomic) the QP received is answered and the core no longer
 * reads an answer from its region: from then on the region may change without altering what
 * the peer reads. A Send that came after a Read Request is delivered once the Request is
 * queued, not answered: a peer's "done with your memory" Send waits for this. */
int iw_qp_reads_served(struct iw_qp *qp);
/* The QP's state; with term non-NULL, the last Terminate sent or received (zeros if none). */
enum iw_qp_state iw_qp_state(struct iw_qp *qp, struct iw_term *sent, struct iw_term *recvd);

struct iw_sge {
	void *addr;
	uint32_t length;
	uint32_t stag; /* the local region's STag (checked: same PD, bounds, local right) */
};

enum iw_wr_opcode {
	IW_WR_SEND, IW_WR_SEND_INV, IW_WR_WRITE, IW_WR_READ, IW_WR_FETCH_ADD, IW_WR_COMP_SWAP,
};

#define IW_SEND_SOLICITED 0x1u

struct iw_send_wr {
	uint64_t wr_id;
	enum iw_wr_opcode opcode;
	unsigned flags;
	const struct iw_sge *sg_list; /* READ: one SGE, the sink; atomics: one 8-byte result SGE */
	int num_sge;
	uint32_t invalidate_stag;     /* SEND_INV: the peer's STag to invalidate */
	uint32_t remote_stag;         /* WRITE/READ/atomics */
	uint64_t remote_to;
	uint64_t compare_add;         /* FETCH_ADD: the addend; COMP_SWAP: the compare value */
	uint64_t swap;                /* COMP_SWAP */
};

struct iw_recv_wr {
	uint64_t wr_id;
	const struct iw_sge *sg_list;
	int num_sge;
};

/* Copies the request (the SGE list too). -ENOSPC: queue full; -EINVAL/-EACCES: bad request or
 * local STag refused (no completion); -EPIPE: QP in error. */
int iw_post_send(struct iw_qp *qp, const struct iw_send_wr *wr);
int iw_post_recv(struct iw_qp *qp, const struct iw_recv_wr *wr);

#ifdef __cplusplus
}
#endif
#endif /* IW_VERBS_H */
