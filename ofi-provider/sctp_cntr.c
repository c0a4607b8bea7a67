/*
 * Counters (fi_cntr_*): successes and errors of the operations of the endpoints bound to them.
 * Reading progresses the domain (FI_PROGRESS_MANUAL); fi_cntr_wait sleeps in the core.
 */
#include "sctp_prov.h"

#include <stdlib.h>
#include <time.h>

void sctp_cntr_inc(struct sctp_cntr *c)
{
	if (c)
		atomic_fetch_add(&c->val, 1);
}

void sctp_cntr_inc_err(struct sctp_cntr *c)
{
	if (c)
		atomic_fetch_add(&c->err, 1);
}

static void poll_domain(struct sctp_cntr *c)
{
	SCTP_LOCK(c->dom);
	sctp_progress(c->dom);
	SCTP_UNLOCK(c->dom);
}

static uint64_t cntr_read(struct fid_cntr *fc)
{
	struct sctp_cntr *c = container_of(fc, struct sctp_cntr, cntr);

	poll_domain(c);
	return atomic_load(&c->val);
}

static uint64_t cntr_readerr(struct fid_cntr *fc)
{
	struct sctp_cntr *c = container_of(fc, struct sctp_cntr, cntr);

	poll_domain(c);
	return atomic_load(&c->err);
}

static int cntr_add(struct fid_cntr *fc, uint64_t v)
{
	atomic_fetch_add(&container_of(fc, struct sctp_cntr, cntr)->val, v);
	return 0;
}

static int cntr_set(struct fid_cntr *fc, uint64_t v)
{
	atomic_store(&container_of(fc, struct sctp_cntr, cntr)->val, v);
	return 0;
}

static int cntr_adderr(struct fid_cntr *fc, uint64_t v)
{
	atomic_fetch_add(&container_of(fc, struct sctp_cntr, cntr)->err, v);
	return 0;
}

static int cntr_seterr(struct fid_cntr *fc, uint64_t v)
{
	atomic_store(&container_of(fc, struct sctp_cntr, cntr)->err, v);
	return 0;
}

/* Until the value reaches threshold (0), an error is counted (-FI_EAVAIL) or timeout ms pass
 * (-FI_ETIMEDOUT). */
static int cntr_wait(struct fid_cntr *fc, uint64_t threshold, int timeout)
{
	struct sctp_cntr *c = container_of(fc, struct sctp_cntr, cntr);
	uint64_t err0 = atomic_load(&c->err);
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		poll_domain(c);
		if (atomic_load(&c->val) >= threshold)
			return 0;
		if (atomic_load(&c->err) != err0)
			return -FI_EAVAIL;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (timeout >= 0 && ms >= timeout)
			return -FI_ETIMEDOUT;
		sctp_sleep(c->dom, timeout < 0 || timeout - ms > 50 ? 50 : (int)(timeout - ms));
	}
}

static int cntr_close(struct fid *fid)
{
	struct sctp_cntr *c = container_of(fid, struct sctp_cntr, cntr.fid);

	if (atomic_load(&c->refs))
		return -FI_EBUSY;
	atomic_fetch_sub(&c->dom->refs, 1);
	free(c);
	return 0;
}

static struct fi_ops cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cntr_close,
	.bind = sctp_no_bind,
	.control = sctp_no_control,
	.ops_open = sctp_no_ops_open,
	.tostr = sctp_no_tostr,
	.ops_set = sctp_no_ops_set,
};

static struct fi_ops_cntr cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = cntr_read,
	.readerr = cntr_readerr,
	.add = cntr_add,
	.set = cntr_set,
	.wait = cntr_wait,
	.adderr = cntr_adderr,
	.seterr = cntr_seterr,
};

int sctp_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **fc,
		   void *context)
{
	struct sctp_domain *d = container_of(domain, struct sctp_domain, dom);
	struct sctp_cntr *c;

	if (attr && (attr->events != FI_CNTR_EVENTS_COMP || attr->flags))
		return -FI_EINVAL;
	if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_YIELD)
		return -FI_ENOSYS; /* no file descriptor, mutex or wait set */
	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	c->dom = d;
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &cntr_fi_ops;
	c->cntr.ops = &cntr_ops;
	atomic_fetch_add(&d->refs, 1);
	*fc = &c->cntr;
	return 0;
}
