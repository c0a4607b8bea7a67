/*
 * The domain (fi_domain): one core endpoint, its progress, and the objects opened on it.
 * Everything the core completes for the provider's contexts comes through sctp_progress:
 * received messages go to their endpoint (SCTP_CTX_EP + index), control messages to the
 * domain, finished sends to their struct sctp_tx, events fail what waited on a lost peer.
 */
#include "sctp_prov.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

int (*sctp_core_open)(const struct sctpt_config *cfg, struct sctpt_ep **ep) = sctpt_open;

int sctp_errno(int e)
{
	switch (e) {
	case -EPIPE:
	case -ECONNRESET:
		return FI_EIO;
	case -ECANCELED:
		return FI_ECANCELED;
	case -ENOMEM:
		return FI_ENOMEM;
	case -EACCES:
		return FI_EACCES;
	case -EINVAL:
		return FI_EINVAL;
	default:
		return e < 0 ? -e : FI_EOTHER;
	}
}

/* Control messages carry their header in a buffer of their own: the cookie, low bit set. */
int sctp_send_ctrl(struct sctp_domain *d, sctpt_peer_t peer, uint8_t op, uint64_t data,
		   uint64_t ack_id)
{
	struct sctp_hdr h = {.op = op, .src_dom = d->self.nonce, .data = data, .ack_id = ack_id};
	uint8_t *buf = malloc(SCTP_HDR_LEN);
	struct iovec iov;
	int rc;

	if (!buf)
		return -FI_ENOMEM;
	sctp_hdr_encode(&h, buf);
	iov = (struct iovec){buf, SCTP_HDR_LEN};
	rc = sctpt_send(d->core, peer, SCTP_CTX_CTRL, (int32_t)op, 0, &iov, 1,
			(void *)((uintptr_t)buf | 1));
	if (rc != 0)
		free(buf);
	return rc < 0 ? -sctp_errno(rc) : 0;
}

static void ack_arrived(struct sctp_domain *d, uint64_t id)
{
	struct sctp_tx *tx;

	TAILQ_FOREACH(tx, &d->acks, link) {
		if (tx->ack_id == id) {
			TAILQ_REMOVE(&d->acks, tx, link);
			if (--tx->pending == 0)
				sctp_tx_done(tx);
			return;
		}
	}
}

static void ctrl_arrived(struct sctp_domain *d, struct sctpt_cqe *c)
{
	struct sctp_hdr h;

	if (sctp_hdr_decode(&h, c->data, c->len) != 0) {
		d->dropped++;
		return;
	}
	switch (h.op) {
	case SCTP_OP_ACK:
		ack_arrived(d, h.ack_id);
		break;
	case SCTP_OP_QP_HELLO:
	case SCTP_OP_QP_READY:
		sctp_rma_ctrl(d, c, &h);
		break;
	default:
		d->dropped++;
		break;
	}
}

/* Sends still waiting for the acknowledgement of a peer that is gone never get it. */
static void peer_gone(struct sctp_domain *d, sctpt_peer_t peer)
{
	struct sctp_tx *tx, *next;

	for (tx = TAILQ_FIRST(&d->acks); tx; tx = next) {
		next = TAILQ_NEXT(tx, link);
		if (tx->peer != peer)
			continue;
		TAILQ_REMOVE(&d->acks, tx, link);
		if (!tx->err)
			tx->err = FI_EIO;
		if (--tx->pending == 0)
			sctp_tx_done(tx);
	}
}

/* One core entry; returns 1 if the entry was kept (an unexpected message). */
static int handle(struct sctp_domain *d, struct sctpt_cqe *c)
{
	struct sctp_tx *tx;
	struct sctp_hdr h;

	switch (c->kind) {
	case SCTPT_CQE_RECV:
		if (c->cookie) { /* placed (or abandoned) into a receive */
			sctp_msg_placed(d, c);
			return 0;
		}
		if (c->status < 0)
			return 0;
		if (c->context == SCTP_CTX_CTRL) {
			ctrl_arrived(d, c);
			return 0;
		}
		if (c->context < SCTP_CTX_EP || c->context >= SCTP_CTX_EP + SCTP_MAX_EPS ||
		    !d->eps[c->context - SCTP_CTX_EP] || !d->eps[c->context - SCTP_CTX_EP]->enabled ||
		    sctp_hdr_decode(&h, c->data, c->len) != 0 ||
		    (h.op != SCTP_OP_MSG && h.op != SCTP_OP_TAGGED)) {
			d->dropped++;
			return 0;
		}
		if (h.flags & SCTP_HF_ACK_REQ)
			sctp_send_ctrl(d, c->peer, SCTP_OP_ACK, 0, h.ack_id);
		sctp_msg_arrived(d->eps[c->context - SCTP_CTX_EP], c, &h);
		return 1;
	case SCTPT_CQE_SEND:
		if ((uintptr_t)c->cookie & 1) {
			free((void *)((uintptr_t)c->cookie & ~(uintptr_t)1));
			return 0;
		}
		tx = c->cookie;
		if (!tx)
			return 0;
		if (c->status < 0 && !tx->err)
			tx->err = sctp_errno(c->status);
		if (--tx->pending == 0)
			sctp_tx_done(tx);
		return 0;
	case SCTPT_CQE_EVENT:
		if (c->ev.type == SCTPT_EV_ASSOC_DOWN || c->ev.type == SCTPT_EV_PEER_CLOSED ||
		    c->ev.type == SCTPT_EV_ASSOC_RESTART) {
			SCTP_WARN(FI_LOG_EP_DATA, "peer %s: %s\n", c->ev.what ? c->ev.what : "?",
				  c->ev.type == SCTPT_EV_PEER_CLOSED ? "closed" : "lost");
			peer_gone(d, c->ev.peer);
		}
		return 0;
	}
	return 0;
}

/* Everything the core holds for us; out of line, so that a progress with nothing to take
 * needs no stack frame this size. */
static __attribute__((noinline)) int drain(struct sctp_domain *d)
{
	struct sctpt_cqe c[32];
	int n, total = 0;

	do {
		n = sctpt_cq_read(d->core, 0, c, 32);
		for (int i = 0; i < n; i++) {
			if (!handle(d, &c[i]))
				sctpt_cq_release(d->core, &c[i], 1);
		}
		total += n > 0 ? n : 0;
	} while (n == 32);
	return total;
}

/*
 * Direct placement. The core asks, under its lock, where a message goes once everything
 * earlier on its context was read (sctpt_cq_read); the provider has matched all of that when
 * nobody holds dom->lock, or when this thread holds it and is inside the core's progress
 * (sctp_progress, whose drain takes everything before it returns). The progress of another
 * thread (automatic progress, sctpt_wait) only trylocks: the application may hold dom->lock
 * while it waits for the core's lock.
 */
static __thread struct sctp_domain *t_progress __attribute__((tls_model("initial-exec")));

static int place_hook(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
		      const void *head, size_t head_len, struct iovec iov[2], void **cookie)
{
	struct sctp_domain *d = arg;
	int k;

	(void)peer, (void)tag;
	if (t_progress == d)
		return sctp_msg_place(d, context, len, head, head_len, iov, cookie);
	if (!sctp_trylock(d))
		return 0;
	k = sctp_msg_place(d, context, len, head, head_len, iov, cookie);
	sctp_unlock(d);
	return k;
}

int sctp_progress(struct sctp_domain *d)
{
	int total = 0, n;

	/* under dom->lock: no other writer */
	atomic_store_explicit(&d->progressed,
			      atomic_load_explicit(&d->progressed, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	/* the core counts the entries queued for us in what it returns, those queued before
	 * (by sctpt_wait, sctpt_send) too: 0 means there is nothing to read */
	t_progress = d;
	n = sctpt_progress(d->core);
	t_progress = NULL;
	if (n > 0)
		total += 1 + drain(d);
	if (d->rnic)
		total += sctp_rma_progress(d);
	return total;
}

void sctp_pool_fini(struct sctp_pool *p)
{
	void *o;

	while ((o = p->head)) {
		p->head = *(void **)o;
		free(o);
	}
	p->n = 0;
}

static void domain_free(struct sctp_domain *d)
{
	sctp_pool_fini(&d->txs);
	sctp_pool_fini(&d->rxs);
	sctp_pool_fini(&d->ins);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

void sctp_sleep(struct sctp_domain *d, int ms)
{
	/* single: the application makes no other call meanwhile; the lock keeps the domain's
	 * thread out of the core while we are in it */
	if (d->single) {
		SCTP_LOCK(d);
		t_progress = d; /* nothing read is left unmatched: drains are done under the lock */
	}
	sctpt_wait(d->core, ms);
	if (d->single) {
		t_progress = NULL;
		SCTP_UNLOCK(d);
	}
}

/*
 * The domain's thread. FI_PROGRESS_AUTO: it sleeps in the core and progresses everything,
 * so completions appear while the application computes. FI_PROGRESS_MANUAL: SCTP lives in
 * this process (the core's engine), so its handshakes, retransmissions, acknowledgements and
 * timers stop when the application stops calling the provider; a send the provider called
 * complete could then never leave, and a peer whose data goes unacknowledged for seconds
 * declares us lost. The thread naps SCTP_AWAY_MS at a time and does nothing while the
 * application progressed meanwhile; once it did not, the thread progresses in its place
 * (trylock: never in the application's way): sleeping in the core until packets or a timer
 * want it, or, when the core has no lock of its own (dom->single), once per nap under
 * dom->lock.
 */
#define SCTP_AWAY_MS 10

static void *progress_thread(void *arg)
{
	struct sctp_domain *d = arg;
	struct timespec nap = {0, SCTP_AWAY_MS * 1000000L};
	unsigned seen = atomic_load_explicit(&d->progressed, memory_order_relaxed), now;
	int away = 0;

	while (!atomic_load(&d->stop)) {
		if (d->progress == FI_PROGRESS_AUTO) {
			sctpt_wait(d->core, SCTP_AWAY_MS);
			SCTP_LOCK(d);
			sctp_progress(d);
			SCTP_UNLOCK(d);
			continue;
		}
		if (away && !d->single)
			sctpt_wait(d->core, SCTP_AWAY_MS);
		else
			nanosleep(&nap, NULL);
		now = atomic_load_explicit(&d->progressed, memory_order_relaxed);
		away = now == seen;
		seen = now;
		if (away && sctp_trylock(d)) {
			sctp_progress(d);
			seen = atomic_load_explicit(&d->progressed, memory_order_relaxed);
			SCTP_UNLOCK(d);
		}
	}
	return NULL;
}

static int domain_close(struct fid *fid)
{
	struct sctp_domain *d = container_of(fid, struct sctp_domain, dom.fid);

	if (atomic_load(&d->refs))
		return -FI_EBUSY;
	if (d->thread_started) {
		atomic_store(&d->stop, 1);
		pthread_join(d->thread, NULL);
	}
	sctp_rma_fini(d); /* before the core, with no thread progressing it */
	sctpt_close(d->core);
	sctp_msg_place_fini(d);
	SCTP_INFO(FI_LOG_DOMAIN, "domain: %llu messages received into the receive buffer by the "
		  "core, %llu copied there, %llu dropped\n", (unsigned long long)d->placed,
		  (unsigned long long)d->copied, (unsigned long long)d->dropped);
	sctp_fnn_free(d->fnn);
	domain_free(d);
	return 0;
}

static int domain_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid, (void)flags;
	/* an EQ for asynchronous registrations: ours complete synchronously */
	return bfid && bfid->fclass == FI_CLASS_EQ && !(flags & FI_REG_MR) ? 0 : -FI_ENOSYS;
}

static int no_scalable_ep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep,
			  void *context)
{
	(void)domain, (void)info, (void)sep, (void)context;
	return -FI_ENOSYS;
}

static int no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
			struct fid_poll **pollset)
{
	(void)domain, (void)attr, (void)pollset;
	return -FI_ENOSYS;
}

static int no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx,
		      void *context)
{
	(void)domain, (void)attr, (void)stx, (void)context;
	return -FI_ENOSYS;
}

static int no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
		      void *context)
{
	(void)domain, (void)attr, (void)rx_ep, (void)context;
	return -FI_ENOSYS;
}

static int no_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			       struct fi_collective_attr *attr, uint64_t flags)
{
	(void)domain, (void)coll, (void)attr, (void)flags;
	return -FI_ENOSYS;
}

static int domain_endpoint2(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
			    uint64_t flags, void *context)
{
	return flags ? -FI_EINVAL : sctp_ep_open(domain, info, ep, context);
}

static int domain_stats(struct fid_domain *domain, struct fi_sctp_stats *s)
{
	struct sctp_domain *d = container_of(domain, struct sctp_domain, dom);

	SCTP_LOCK(d);
	*s = (struct fi_sctp_stats){.placed = d->placed, .copied = d->copied,
				    .dropped = d->dropped};
	SCTP_UNLOCK(d);
	return 0;
}

static struct fi_sctp_ops_domain domain_ext = {
	.size = sizeof(struct fi_sctp_ops_domain),
	.stats = domain_stats,
};

static int domain_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
			   void *context)
{
	(void)fid, (void)flags, (void)context;
	if (!name || strcmp(name, FI_SCTP_DOMAIN_OPS) != 0)
		return -FI_ENOSYS;
	*ops = &domain_ext;
	return 0;
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = domain_bind,
	.control = sctp_no_control,
	.ops_open = domain_ops_open,
	.tostr = sctp_no_tostr,
	.ops_set = sctp_no_ops_set,
};

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = sctp_av_open,
	.cq_open = sctp_cq_open,
	.endpoint = sctp_ep_open,
	.scalable_ep = no_scalable_ep,
	.cntr_open = sctp_cntr_open,
	.poll_open = no_poll_open,
	.stx_ctx = no_stx_ctx,
	.srx_ctx = no_srx_ctx,
	.query_atomic = sctp_query_atomic,
	.query_collective = no_query_collective,
	.endpoint2 = domain_endpoint2,
};

/* The domain's own name for itself, from the core's business card. */
static int parse_card(const char *card, struct sctp_addr *a)
{
	char copy[SCTPT_CARD_MAX], *save = NULL, *tok;
	unsigned u, s;

	snprintf(copy, sizeof(copy), "%s", card);
	if (sscanf(card, "sctpt1 %u %u", &u, &s) != 2 || !u || u > 65535 || !s || s > 65535)
		return -FI_EINVAL;
	a->udp_port = (uint16_t)u;
	a->sctp_port = (uint16_t)s;
	a->naddrs = 0;
	strtok_r(copy, " ", &save);
	strtok_r(NULL, " ", &save);
	strtok_r(NULL, " ", &save);
	while ((tok = strtok_r(NULL, " ", &save))) {
		struct in_addr in;
		unsigned long long host;
		unsigned pid, nonce;
		if (strncmp(tok, "shm=", 4) == 0) {
			/* the core's token "<host>.<pid>.<nonce>", carried in binary */
			if (sscanf(tok + 4, "%16llx.%u.%8x", &host, &pid, &nonce) == 3) {
				a->shm = 1;
				a->shm_host = host;
				a->shm_pid = pid;
				a->shm_nonce = nonce;
			} else {
				SCTP_WARN(FI_LOG_DOMAIN, "shared-memory token %s not understood: "
					  "same-host peers will use SCTP\n", tok);
			}
			continue;
		}
		if (inet_pton(AF_INET, tok, &in) != 1)
			return -FI_EINVAL;
		if (a->naddrs < SCTP_ADDR_IPS)
			a->ips[a->naddrs++] = in.s_addr;
	}
	return a->naddrs ? 0 : -FI_EINVAL;
}

int sctp_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		     void *context)
{
	struct sctp_fabric *f = container_of(fabric, struct sctp_fabric, fab);
	struct sctpt_config cfg;
	struct sctp_domain *d;
	int rc;

	if (!info || !info->domain_attr || !info->ep_attr || info->ep_attr->type != FI_EP_RDM ||
	    (info->domain_attr->name && strcmp(info->domain_attr->name, SCTP_PROV_NAME) != 0) ||
	    (info->caps & ~SCTP_CAPS))
		return -FI_EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	d->fab = f;
	d->api_version = f->api_version;
	d->caps = info->caps ? info->caps : SCTP_CAPS;
	d->progress = info->domain_attr->data_progress == FI_PROGRESS_AUTO ? FI_PROGRESS_AUTO
									  : FI_PROGRESS_MANUAL;
	d->threading = info->domain_attr->threading;
	/* FI_THREAD_DOMAIN: one application thread in the domain at a time, so dom->lock may be
	 * held while it sleeps in the core; the thread of manual progress takes dom->lock for
	 * everything it does (automatic progress sleeps in the core beside the application) */
	d->single = d->threading == FI_THREAD_DOMAIN && d->progress == FI_PROGRESS_MANUAL;
	d->mr_mode = info->domain_attr->mr_mode;
	pthread_mutex_init(&d->lock, NULL);
	TAILQ_INIT(&d->acks);
	TAILQ_INIT(&d->placing);
	d->next_ack = 1;
	d->txs.size = sizeof(struct sctp_tx);
	d->rxs.size = sizeof(struct sctp_rx);
	d->ins.size = sizeof(struct sctp_in);

	sctpt_config_init(&cfg);
	cfg.addrs = sctp_params.addrs && *sctp_params.addrs ? sctp_params.addrs : NULL;
	cfg.config_file = sctp_params.config_file && *sctp_params.config_file
				  ? sctp_params.config_file : NULL;
	cfg.config_host = sctp_params.config_host && *sctp_params.config_host
				  ? sctp_params.config_host : NULL;
	cfg.backend = sctp_params.backend && *sctp_params.backend ? sctp_params.backend : NULL;
	cfg.streams = (uint16_t)sctp_params.streams;
	cfg.cmt = sctp_params.cmt;
	cfg.crc32c = sctp_params.crc32c;
	cfg.shm = sctp_params.shm;
	/* the parameter counts the application's bytes: a message of frag_size bytes and our
	 * header still travel as one core fragment */
	cfg.frag_size = sctp_params.frag_size + SCTP_HDR_LEN;
	cfg.single_thread = d->single;
	cfg.accept_unknown = 1; /* RDM: anyone who knows our name may send to us */
	cfg.handler.complete = NULL; /* polled: messages wait in the core's buffers */
	cfg.handler.events = 1;
	cfg.handler.place = place_hook;
	cfg.handler.arg = d;
	rc = sctp_fnn_load(sctp_params.fnn_table, sctp_params.fnn_addrs, &d->fnn);
	if (rc != 0) {
		pthread_mutex_destroy(&d->lock);
		free(d);
		return rc;
	}
	if (d->fnn) {
		cfg.ops.rails = sctp_fnn_rails;
		cfg.ops.arg = d->fnn;
	}
	rc = sctp_core_open(&cfg, &d->core);
	if (rc != 0) {
		SCTP_WARN(FI_LOG_DOMAIN, "cannot open the SCTP endpoint: %s\n", sctpt_last_error());
		sctp_fnn_free(d->fnn);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return -sctp_errno(rc);
	}
	sctpt_card(d->core, d->card, sizeof(d->card));
	if (parse_card(d->card, &d->self) != 0 ||
	    getrandom(&d->self.nonce, sizeof(d->self.nonce), 0) != sizeof(d->self.nonce)) {
		SCTP_WARN(FI_LOG_DOMAIN, "unusable business card %s\n", d->card);
		rc = -FI_EINVAL;
		goto fail;
	}
	if ((d->caps & SCTP_RMA_CAPS) && (rc = sctp_rma_init(d)) != 0)
		goto fail;
	if (pthread_create(&d->thread, NULL, progress_thread, d) != 0) {
		rc = -FI_ENOMEM;
		goto fail;
	}
	d->thread_started = 1;
	SCTP_INFO(FI_LOG_DOMAIN, "domain: threading %d, %s progress, core lock %s\n", d->threading,
		  d->progress == FI_PROGRESS_AUTO ? "automatic" : "manual",
		  d->single ? "off" : "on");
	d->dom.fid.fclass = FI_CLASS_DOMAIN;
	d->dom.fid.context = context;
	d->dom.fid.ops = &domain_fi_ops;
	d->dom.ops = &domain_ops;
	d->dom.mr = &sctp_mr_ops;
	*dom = &d->dom;
	return 0;
fail:
	sctp_rma_fini(d);
	sctpt_close(d->core);
	sctp_fnn_free(d->fnn);
	domain_free(d);
	return rc;
}
