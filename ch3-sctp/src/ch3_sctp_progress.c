/*
 * ch3:sctp -- the progress engine: the core moves the packets; its completion entries are
 * read here, under MPICH's lock, and turned into CH3 upcalls (received packets into
 * MPIDI_CH3U_Handle_recv_pkt's handlers, finished sends into request completions, a lost
 * peer into the end of the job).
 */
#include "ch3_sctp.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile unsigned int MPIDI_CH3I_progress_completion_count = 0;

#ifdef MPICH_IS_THREADED
volatile int MPIDI_CH3I_progress_blocked = FALSE;
volatile int MPIDI_CH3I_progress_wakeup_signalled = FALSE;
#if (MPICH_THREAD_GRANULARITY == MPICH_THREAD_GRANULARITY__GLOBAL)
static MPID_Thread_cond_t completion_cond;
#endif
#endif

int sctpc_peer_name(MPIDI_VC_t * vc, char *buf, size_t len)
{
	char card[SCTPT_CARD_MAX];
	if (vc->ch.peer >= 0)
		sctpt_peer_name(sctpc.ep, vc->ch.peer, card, sizeof(card));
	else
		snprintf(card, sizeof(card), "no business card");
	return snprintf(buf, len, "rank %d (%s)", vc->pg_rank, card);
}

/*
 * One received packet: the header, then all of its data. The packet's handler takes the
 * data if it can place it at once; otherwise it returns a request whose IOV says where
 * the data goes (reloaded by the request's handler for non-contiguous types).
 */
static int handle_pkt(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, const char *buf, size_t len)
{
	int mpi_errno = MPI_SUCCESS, complete = 0;
	MPIR_Request *rreq = NULL;
	intptr_t n;

	MPIR_ERR_CHKANDJUMP2(pkt->type < 0 || pkt->type >= MPIDI_CH3_PKT_END_CH3, mpi_errno,
			     MPI_ERR_INTERN, "**ch3|sctp|pkt", "**ch3|sctp|pkt %d %d", vc->pg_rank,
			     (int) pkt->type);
	n = (intptr_t) len;
	mpi_errno = sctpc.pkt[pkt->type] (vc, pkt, (void *) buf, &n, &rreq);
	MPIR_ERR_CHECK(mpi_errno);
	MPIR_Assert(n >= 0 && (size_t) n <= len);
	buf += n;
	len -= (size_t) n;
	if (!rreq)
		goto check_rest;
	rreq->dev.iov_offset = 0;

	while (!complete) {
		struct iovec *iov = &rreq->dev.iov[rreq->dev.iov_offset];
		int k = rreq->dev.iov_count;
		for (; k > 0; k--, iov++) {
			MPIR_ERR_CHKANDJUMP2(len < iov->iov_len, mpi_errno, MPI_ERR_INTERN,
					     "**ch3|sctp|short", "**ch3|sctp|short %d %d",
					     vc->pg_rank, (int) len);
			if (!rreq->dev.drop_data)
				MPIR_Memcpy(iov->iov_base, buf, iov->iov_len);
			buf += iov->iov_len;
			len -= iov->iov_len;
		}
		int (*fn) (MPIDI_VC_t *, MPIR_Request *, int *) = rreq->dev.OnDataAvail;
		if (!fn) {
			MPIR_Assert(MPIDI_Request_get_type(rreq) != MPIDI_REQUEST_TYPE_GET_RESP);
			mpi_errno = MPID_Request_complete(rreq);
			MPIR_ERR_CHECK(mpi_errno);
			complete = 1;
		} else {
			mpi_errno = fn(vc, rreq, &complete);
			MPIR_ERR_CHECK(mpi_errno);
			/* not complete: the handler loaded the next part of the IOV */
			rreq->dev.iov_offset = 0;
		}
	}
  check_rest:
	/* the packet held exactly what its header announced */
	MPIR_ERR_CHKANDJUMP2(len != 0, mpi_errno, MPI_ERR_INTERN, "**ch3|sctp|long",
			     "**ch3|sctp|long %d %d", vc->pg_rank, (int) len);
  fn_fail:
	return mpi_errno;
}

/* A message of the core: a packet (header, data), or rendezvous data alone. */
static int handle_msg(MPIDI_VC_t * vc, const struct sctpt_cqe *c)
{
	int mpi_errno = MPI_SUCCESS;
	MPIDI_CH3_Pkt_t pkt;

	if (c->context == SCTPC_CTX_RNDV) {
		if (c->cookie) {	/* the core placed it in the user's buffer (sctpc_rndv_buf) */
			sctpc.rndv_placed++;
			return MPID_Request_complete(c->cookie);
		}
		sctpc.rndv_copied++;
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = MPIDI_CH3_PKT_RNDV_SEND;
		pkt.rndv_send.receiver_req_id = c->tag;
		return handle_pkt(vc, &pkt, c->data, c->len);
	}
	MPIR_ERR_CHKANDJUMP2(c->len < sizeof(pkt), mpi_errno, MPI_ERR_INTERN, "**ch3|sctp|short",
			     "**ch3|sctp|short %d %d", vc->pg_rank, (int) c->len);
	memcpy(&pkt, c->data, sizeof(pkt));	/* aligned */
	return handle_pkt(vc, &pkt, (const char *) c->data + sizeof(pkt), c->len - sizeof(pkt));
  fn_fail:
	return mpi_errno;
}

/*
 * Where the core reassembles a large message: rendezvous data for a contiguous receive goes
 * straight into the user's buffer (the tag names the request, set up before its
 * clear-to-send left). Runs under the core's lock, maybe without MPICH's: it only reads the
 * request, which nothing changes between its clear-to-send and its data.
 */
void *sctpc_rndv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		     void **cookie)
{
	MPIR_Request *rreq = NULL;
	MPIR_Datatype *dt;
	MPI_Aint lb;
	intptr_t size;
	int contig;

	(void) arg;
	(void) peer;
	if (context != SCTPC_CTX_RNDV || HANDLE_GET_MPI_KIND(tag) != MPIR_REQUEST)
		return NULL;
	MPIR_Request_get_ptr(tag, rreq);
	if (!rreq || rreq->dev.drop_data || rreq->dev.recv_data_sz != (intptr_t) len)
		return NULL;
	MPIDI_Datatype_get_info(rreq->dev.user_count, rreq->dev.datatype, contig, size, dt, lb);
	(void) dt;
	if (!contig || size < rreq->dev.recv_data_sz)
		return NULL;	/* the handler unpacks it, or truncates */
	*cookie = rreq;
	return MPIR_get_contig_ptr(rreq->dev.user_buf, lb);
}

static MPIDI_VC_t *vc_of(sctpt_peer_t peer)
{
	return peer >= 0 && peer < sctpc.npeer_vc ? sctpc.peer_vc[peer] : NULL;
}

/*
 * A peer the core lost (crashed, unreachable): the job ends, naming it. A peer that is in
 * CH3's close protocol with us is leaving anyway: if its last CLOSE went down with the
 * association, the VC is taken as terminated so that MPI_Finalize does not wait for it.
 */
static int peer_lost(MPIDI_VC_t * vc, const struct sctpt_event *ev)
{
	char name[SCTPT_CARD_MAX + 64], msg[2 * SCTPT_CARD_MAX + 256];
	/* after the close protocol the peer is gone by design */
	if (vc->state == MPIDI_VC_STATE_INACTIVE || vc->state == MPIDI_VC_STATE_CLOSED ||
	    vc->state == MPIDI_VC_STATE_INACTIVE_CLOSED || vc->state == MPIDI_VC_STATE_MORIBUND)
		return MPI_SUCCESS;
	vc->ch.failed = 1;
	sctpc_peer_name(vc, name, sizeof(name));
	if (vc->state == MPIDI_VC_STATE_LOCAL_CLOSE || vc->state == MPIDI_VC_STATE_REMOTE_CLOSE ||
	    vc->state == MPIDI_VC_STATE_CLOSE_ACKED) {
		if (sctpc.env.verbose)
			fprintf(stderr, "ch3:sctp: rank %d: %s left during the close protocol: %s\n",
				sctpc.rank, name, ev->what ? ev->what : strerror(-ev->error));
		return MPIDI_CH3U_Handle_connection(vc, MPIDI_VC_EVENT_TERMINATED);
	}
	snprintf(msg, sizeof(msg), "ch3:sctp: rank %d lost the connection to %s: %s", sctpc.rank,
		 name, ev->what ? ev->what : strerror(-ev->error));
	/*
	 * Hydra's server exits on PMI abort without draining what the proxies still hold of
	 * our stderr: MPID_Abort's own print (right before its PMI_Abort) is often lost. Print,
	 * give the forwarding a moment, then abort through PMI.
	 */
	fprintf(stderr, "%s\n", msg);
	fflush(stderr);
	usleep(200 * 1000);
	MPIR_pmi_abort(1, msg);
	MPL_exit(1);
	return MPI_SUCCESS;
}

static int handle_event(const struct sctpt_event *ev)
{
	MPIDI_VC_t *vc = vc_of(ev->peer);
	switch (ev->type) {
	case SCTPT_EV_ASSOC_DOWN:
		if (vc)
			return peer_lost(vc, ev);
		break;
	case SCTPT_EV_PATH_UP:
	case SCTPT_EV_PATH_DOWN:
	case SCTPT_EV_PATH_PRIMARY:
	case SCTPT_EV_ASSOC_RESTART:
		if (sctpc.env.verbose)
			fprintf(stderr, "ch3:sctp: rank %d: %s\n", sctpc.rank, ev->what);
		break;
	default:
		break;
	}
	return MPI_SUCCESS;
}

static int handle_cqe(const struct sctpt_cqe *c)
{
	MPIDI_VC_t *vc;
	switch (c->kind) {
	case SCTPT_CQE_RECV:
		if (c->status < 0)
			return MPI_SUCCESS;	/* a message abandoned: the peer's loss says why */
		vc = vc_of(c->peer);
		if (!vc)
			return MPI_SUCCESS;	/* not ours: cannot happen with the cards we add */
		if (vc->state == MPIDI_VC_STATE_INACTIVE)
			MPIDI_CHANGE_VC_STATE(vc, ACTIVE);
		return handle_msg(vc, c);
	case SCTPT_CQE_SEND:
		return sctpc_send_done(c);
	case SCTPT_CQE_EVENT:
		return handle_event(&c->ev);
	}
	return MPI_SUCCESS;
}

/* Handles what the core has queued; returns how many entries. */
static int drain(int *mpi_errno)
{
	struct sctpt_cqe c[32];
	int total = 0, n;
	while (*mpi_errno == MPI_SUCCESS && (n = sctpt_cq_read(sctpc.ep, 0, c, 32)) > 0) {
		for (int i = 0; i < n && *mpi_errno == MPI_SUCCESS; i++)
			*mpi_errno = handle_cqe(&c[i]);
		sctpt_cq_release(sctpc.ep, c, n);
		total += n;
	}
	return total;
}

static int poll_once(int *mpi_errno)
{
	int n = sctpt_progress(sctpc.ep);
	return n + drain(mpi_errno);
}

uint64_t sctpc_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

#ifdef MPICH_IS_THREADED
static void progress_delay(unsigned int count)
{
#if (MPICH_THREAD_GRANULARITY == MPICH_THREAD_GRANULARITY__GLOBAL)
	int err;
	while (count == MPIDI_CH3I_progress_completion_count)
		MPID_Thread_cond_wait(&completion_cond, &MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX, &err);
#else
	(void) count;
#endif
}

static void progress_continue(void)
{
#if (MPICH_THREAD_GRANULARITY == MPICH_THREAD_GRANULARITY__GLOBAL)
	int err;
	MPIR_THREAD_CHECK_BEGIN;
	MPID_Thread_cond_broadcast(&completion_cond, &err);
	MPIR_THREAD_CHECK_END;
#endif
}

void MPIDI_CH3I_Progress_wakeup(void)
{
	/* a thread blocked in block() looks at the completion counter every millisecond */
}
#endif

/* Work of a layer above the core on the same endpoint (ch3:hybrid's RDMA), under MPICH's
 * lock: what it posted leaves before the core sleeps, what came is taken up after. */
#ifndef SCTPC_RDMA_PROGRESS
#define SCTPC_RDMA_PROGRESS() 0
#endif

/*
 * Progresses the core, sleeping in it (MPICH's lock released) until it has something or a
 * while passed, then handles what it has. sctpt_wait progresses before it sleeps: no
 * progress call of our own comes first, which would only read the sockets once more.
 * With threads, another thread may complete what this one waits for without the network
 * (a message to itself, a request it cancels): the core cannot be woken for that, so the
 * wait goes in 1 ms slices, each checking the completion counter.
 */
static int block(int *mpi_errno)
{
	int n = SCTPC_RDMA_PROGRESS();
	if (n > 0)	/* not asleep while that layer has work: the core moves it */
		return n + poll_once(mpi_errno);
	if (MPIR_IS_THREADED) {
#ifdef MPICH_IS_THREADED
		unsigned int c0 = MPIDI_CH3I_progress_completion_count;
		MPIDI_CH3I_progress_blocked = TRUE;
		MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
		for (int i = 0; i < 100 && c0 == MPIDI_CH3I_progress_completion_count; i++)
			if ((n = sctpt_wait(sctpc.ep, 1)) > 0)
				break;
		MPID_THREAD_CS_ENTER(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
		MPIDI_CH3I_progress_blocked = FALSE;
		MPIDI_CH3I_progress_wakeup_signalled = FALSE;
#endif
	} else {
		n = sctpt_wait(sctpc.ep, 100);
	}
	n += drain(mpi_errno);
	return n + SCTPC_RDMA_PROGRESS();
}

static int progress_wait(MPID_Progress_state * state)
{
	int mpi_errno = MPI_SUCCESS, made = 0;
	uint64_t spin_until = 0;

	do {
		mpi_errno = MPIR_Progress_hook_exec_all(&made);
		MPIR_ERR_CHECK(mpi_errno);
		if (made) {
			MPIDI_CH3_Progress_signal_completion();
			break;
		}
#ifdef MPICH_IS_THREADED
		if (MPIR_IS_THREADED && MPIDI_CH3I_progress_blocked == TRUE) {
			/* another thread waits in the core: take what is queued, else wait for
			 * its news */
			if (poll_once(&mpi_errno) > 0 || mpi_errno)
				continue;
			progress_delay((unsigned) state->ch.completion_count);
			goto fn_exit;
		}
#endif
		/* poll a little before sleeping: a reply is often microseconds away, and so is
		 * the rest of a message that is coming in */
		if (sctpc.env.spin_us > 0) {
			if (!spin_until)
				spin_until = sctpc_now_us() + (uint64_t) sctpc.env.spin_us;
			if (poll_once(&mpi_errno) > 0 || mpi_errno || sctpc_now_us() < spin_until)
				continue;	/* the loop test sees a completion */
		}
		if (block(&mpi_errno) > 0)
			spin_until = 0;
	} while (mpi_errno == MPI_SUCCESS &&
		 (unsigned) state->ch.completion_count == MPIDI_CH3I_progress_completion_count);
	MPIR_ERR_CHECK(mpi_errno);
#ifdef MPICH_IS_THREADED
	progress_continue();
#endif
  fn_exit:
	state->ch.completion_count = MPIDI_CH3I_progress_completion_count;
	return mpi_errno;
  fn_fail:
	goto fn_exit;
}

static int progress_test(void)
{
	int mpi_errno = MPI_SUCCESS, made = 0;
	mpi_errno = MPIR_Progress_hook_exec_all(&made);
	MPIR_ERR_CHECK(mpi_errno);
	if (made)
		goto fn_exit;
#ifdef MPICH_IS_THREADED
	if (MPIR_IS_THREADED && MPIDI_CH3I_progress_blocked == TRUE)
		goto fn_exit;	/* the blocked thread moves things */
#endif
	poll_once(&mpi_errno);
  fn_exit:
	return mpi_errno;
  fn_fail:
	goto fn_exit;
}

int MPIDI_CH3I_Progress(int blocking, MPID_Progress_state * state)
{
	return blocking ? progress_wait(state) : progress_test();
}

int MPIDI_CH3I_Progress_init(void)
{
	int mpi_errno;
#if defined(MPICH_IS_THREADED) && (MPICH_THREAD_GRANULARITY == MPICH_THREAD_GRANULARITY__GLOBAL)
	MPIR_THREAD_CHECK_BEGIN;
	int err;
	MPID_Thread_cond_create(&completion_cond, &err);
	MPIR_Assert(err == 0);
	MPIR_THREAD_CHECK_END;
#endif
	mpi_errno = MPIDI_CH3_PktHandler_Init(sctpc.pkt, MPIDI_CH3_PKT_END_CH3 + 1);
	return mpi_errno;
}

static void print_stats(void)
{
	struct sctpt_peer_stats st;
	fprintf(stderr, "ch3:sctp: rank %d rendezvous data: %lu placed in the receive buffer, %lu "
		"copied\n", sctpc.rank, sctpc.rndv_placed, sctpc.rndv_copied);
	for (int i = 0; i < sctpc.npeer_vc; i++) {
		MPIDI_VC_t *vc = sctpc.peer_vc[i];
		if (!vc || sctpt_peer_stats(sctpc.ep, i, &st) != 0 || (!st.msgs_sent && !st.msgs_recv))
			continue;
		char streams[1024];
		int off = 0;
		for (unsigned s = 0; s < sctpt_streams(sctpc.ep) && off < (int) sizeof(streams) - 16; s++)
			off += snprintf(streams + off, sizeof(streams) - (size_t) off, " %llu",
					(unsigned long long) st.stream_msgs_sent[s]);
		fprintf(stderr, "ch3:sctp: rank %d stats for rank %d: sent %llu msgs %llu bytes, "
			"received %llu msgs %llu bytes, held for order %llu, rails %d; msgs per "
			"stream:%s\n", sctpc.rank, vc->pg_rank, (unsigned long long) st.msgs_sent,
			(unsigned long long) st.bytes_sent, (unsigned long long) st.msgs_recv,
			(unsigned long long) st.bytes_recv, (unsigned long long) st.held_for_order,
			st.nrails, streams);
	}
}

int MPIDI_CH3I_Progress_finalize(void)
{
	int mpi_errno = MPI_SUCCESS;
	if (sctpc.ep) {
		if (sctpc.env.verbose > 1)
			print_stats();
		/* flushes what is still queued (the last close acknowledgements) */
		sctpt_close(sctpc.ep);
		sctpc.ep = NULL;
	}
	sctpc_send_pool_free();
#if defined(MPICH_IS_THREADED) && (MPICH_THREAD_GRANULARITY == MPICH_THREAD_GRANULARITY__GLOBAL)
	MPIR_THREAD_CHECK_BEGIN;
	int err;
	MPID_Thread_cond_destroy(&completion_cond, &err);
	MPIR_Assert(err == 0);
	MPIR_THREAD_CHECK_END;
#endif
	return mpi_errno;
}

/* The close protocol is over (CH3 sent and got CLOSE): the association itself stays until
 * MPI_Finalize closes the endpoint, which flushes what is still queued. */
int MPIDI_CH3_Connection_terminate(MPIDI_VC_t * vc)
{
	if (vc->state == MPIDI_VC_STATE_MORIBUND || vc->state == MPIDI_VC_STATE_INACTIVE_CLOSED)
		return MPI_SUCCESS;
	return MPIDI_CH3U_Handle_connection(vc, MPIDI_VC_EVENT_TERMINATED);
}
