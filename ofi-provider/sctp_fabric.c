/*
 * The fabric object (fi_fabric) and wait sets (fi_wait_open, fi_wait): a wait set collects
 * completion queues (cq_attr.wait_obj = FI_WAIT_SET) and fi_wait sleeps in the core until
 * one of them has an entry.
 */
#include "sctp_prov.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int wait_close(struct fid *fid)
{
	struct sctp_wait *w = container_of(fid, struct sctp_wait, w.fid);

	if (w->n)
		return -FI_EBUSY;
	pthread_mutex_destroy(&w->lock);
	free(w);
	return 0;
}

int sctp_wait_add(struct sctp_wait *w, struct fid *f)
{
	int rc = 0;

	pthread_mutex_lock(&w->lock);
	if (w->n == (int)(sizeof(w->members) / sizeof(w->members[0])))
		rc = -FI_ENOSPC;
	else
		w->members[w->n++] = f;
	pthread_mutex_unlock(&w->lock);
	return rc;
}

void sctp_wait_del(struct sctp_wait *w, struct fid *f)
{
	pthread_mutex_lock(&w->lock);
	for (int i = 0; i < w->n; i++) {
		if (w->members[i] == f) {
			w->members[i] = w->members[--w->n];
			break;
		}
	}
	pthread_mutex_unlock(&w->lock);
}

/* 1 when a member CQ has something to read; *d gets a domain to sleep in. */
static int wait_ready(struct sctp_wait *w, struct sctp_domain **d)
{
	struct sctp_cq *cqs[64];
	int n, ready = 0;

	pthread_mutex_lock(&w->lock);
	n = w->n;
	for (int i = 0; i < n; i++)
		cqs[i] = container_of(w->members[i], struct sctp_cq, cq.fid);
	pthread_mutex_unlock(&w->lock);
	*d = n ? cqs[0]->dom : NULL;
	for (int i = 0; i < n && !ready; i++) {
		SCTP_LOCK(cqs[i]->dom);
		sctp_progress(cqs[i]->dom);
		ready = sctp_cq_ready(cqs[i]);
		SCTP_UNLOCK(cqs[i]->dom);
	}
	return ready;
}

static int wait_wait(struct fid_wait *waitset, int timeout)
{
	struct sctp_wait *w = container_of(waitset, struct sctp_wait, w);
	struct timespec t0, t;
	struct sctp_domain *d;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (wait_ready(w, &d))
			return 0;
		if (atomic_exchange(&w->signaled, 0))
			return -FI_EINTR;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (timeout >= 0 && ms >= timeout)
			return -FI_ETIMEDOUT;
		int slice = timeout < 0 ? 50 : (int)(timeout - ms < 50 ? timeout - ms : 50);
		if (d) {
			sctp_sleep(d, slice);
		} else {
			struct timespec ts = {0, slice * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
}

static struct fi_ops wait_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = wait_close,
	.bind = sctp_no_bind,
	.control = sctp_no_control, /* FI_GETWAIT: no file descriptor to hand out */
	.ops_open = sctp_no_ops_open,
	.tostr = sctp_no_tostr,
	.ops_set = sctp_no_ops_set,
};

static struct fi_ops_wait wait_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = wait_wait,
};

static int fabric_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			    struct fid_wait **waitset)
{
	struct sctp_wait *w;

	if (attr->flags || (attr->wait_obj != FI_WAIT_UNSPEC && attr->wait_obj != FI_WAIT_YIELD))
		return -FI_ENOSYS;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -FI_ENOMEM;
	w->fab = container_of(fabric, struct sctp_fabric, fab);
	pthread_mutex_init(&w->lock, NULL);
	w->w.fid.fclass = FI_CLASS_WAIT;
	w->w.fid.ops = &wait_fi_ops;
	w->w.ops = &wait_ops;
	*waitset = &w->w;
	return 0;
}

/* ---- fabric ---- */

static int fabric_close(struct fid *fid)
{
	free(container_of(fid, struct sctp_fabric, fab.fid));
	return 0;
}

static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric, (void)fids, (void)count;
	return 0; /* nothing to arm: sleeping is sctpt_wait's */
}

static int no_passive_ep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
			 void *context)
{
	(void)fabric, (void)info, (void)pep, (void)context;
	return -FI_ENOSYS; /* FI_EP_RDM only: no connections to listen for */
}

static int fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
			  struct fid_domain **dom, uint64_t flags, void *context)
{
	if (flags)
		return -FI_EINVAL;
	return sctp_domain_open(fabric, info, dom, context);
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = sctp_no_bind,
	.control = sctp_no_control,
	.ops_open = sctp_no_ops_open,
	.tostr = sctp_no_tostr,
	.ops_set = sctp_no_ops_set,
};

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = sctp_domain_open,
	.passive_ep = no_passive_ep,
	.eq_open = sctp_eq_open,
	.wait_open = fabric_wait_open,
	.trywait = fabric_trywait,
	.domain2 = fabric_domain2,
};

int sctp_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	struct sctp_fabric *f;

	if (attr->name && strcmp(attr->name, SCTP_PROV_NAME) != 0)
		return -FI_EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -FI_ENOMEM;
	f->api_version = attr->api_version ? attr->api_version : SCTP_FI_VERSION;
	f->fab.fid.fclass = FI_CLASS_FABRIC;
	f->fab.fid.context = context;
	f->fab.fid.ops = &fabric_fi_ops;
	f->fab.ops = &fabric_ops;
	*fabric = &f->fab;
	return 0;
}
