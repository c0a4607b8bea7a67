/*
 * Completion queues (fi_cq_*): every format, error entries in order with the others
 * (fi_cq_read answers -FI_EAVAIL when the oldest entry is an error, fi_cq_readerr takes it),
 * fi_cq_readfrom, and fi_cq_sread, which sleeps in the core (sctpt_wait) between looks.
 * The ring grows as needed: no entry is ever lost to an overrun.
 */
#include "sctp_prov.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t format_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	}
	return 0;
}

static struct sctp_cqe *push(struct sctp_cq *cq)
{
	if (cq->count == cq->cap) {
		size_t cap = cq->cap * 2;
		struct sctp_cqe *r = malloc(cap * sizeof(*r));
		if (!r)
			return NULL;
		for (size_t i = 0; i < cq->count; i++)
			r[i] = cq->ring[(cq->head + i) & (cq->cap - 1)];
		free(cq->ring);
		cq->ring = r;
		cq->head = 0;
		cq->cap = cap;
	}
	return &cq->ring[(cq->head + cq->count++) & (cq->cap - 1)];
}

int sctp_cq_write(struct sctp_cq *cq, void *ctx, uint64_t flags, size_t len, void *buf,
		  uint64_t data, uint64_t tag, fi_addr_t src)
{
	struct sctp_cqe *e = push(cq);

	if (!e) {
		SCTP_WARN(FI_LOG_CQ, "out of memory: a completion is lost\n");
		return -FI_ENOMEM;
	}
	*e = (struct sctp_cqe){.e = {ctx, flags, len, buf, data, tag}, .src = src};
	return 0;
}

int sctp_cq_write_err(struct sctp_cq *cq, void *ctx, uint64_t flags, size_t len, void *buf,
		      uint64_t data, uint64_t tag, size_t olen, int err, int prov_errno)
{
	struct sctp_cqe *e = push(cq);

	if (!e) {
		SCTP_WARN(FI_LOG_CQ, "out of memory: an error completion is lost\n");
		return -FI_ENOMEM;
	}
	*e = (struct sctp_cqe){.e = {ctx, flags, len, buf, data, tag}, .src = FI_ADDR_NOTAVAIL,
			       .err = err ? err : FI_EOTHER, .prov_errno = prov_errno,
			       .olen = olen};
	return 0;
}

int sctp_cq_ready(struct sctp_cq *cq)
{
	return cq->count > 0;
}

/* Copies up to count ordinary entries of a queue that has some (lock held); -FI_EAVAIL if the
 * oldest is an error. */
static ssize_t take(struct sctp_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
	size_t n = 0;

	if (cq->ring[cq->head].err)
		return -FI_EAVAIL;
	while (n < count && cq->count && !cq->ring[cq->head].err) {
		struct sctp_cqe *e = &cq->ring[cq->head];
		memcpy((char *)buf + n * cq->entry_size, &e->e, cq->entry_size);
		if (src)
			src[n] = e->src;
		cq->head = (cq->head + 1) & (cq->cap - 1);
		cq->count--;
		n++;
	}
	return n ? (ssize_t)n : -FI_EAGAIN;
}

/*
 * A read progresses the domain only when it has nothing to hand out: entries already queued
 * are taken at once, and the read that follows one which emptied the queue answers
 * -FI_EAGAIN without progressing. Callers such as Open MPI's mtl ofi read one entry at a time
 * until the queue is empty; that last look would otherwise be a pass over the sockets between
 * a message's arrival and the caller's reply to it. Every read after that one progresses.
 */
static ssize_t cq_readfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src_addr)
{
	struct sctp_cq *cq = container_of(fcq, struct sctp_cq, cq);
	ssize_t n;

	SCTP_LOCK(cq->dom);
	if (cq->count == 0 && !cq->drained)
		sctp_progress(cq->dom);
	n = cq->count ? take(cq, buf, count, src_addr) : -FI_EAGAIN;
	cq->drained = n > 0 && cq->count == 0;
	SCTP_UNLOCK(cq->dom);
	return n;
}

static ssize_t cq_read(struct fid_cq *fcq, void *buf, size_t count)
{
	return cq_readfrom(fcq, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct sctp_cq *cq = container_of(fcq, struct sctp_cq, cq);
	struct fi_cq_err_entry err;
	ssize_t rc = -FI_EAGAIN;

	(void)flags;
	SCTP_LOCK(cq->dom);
	if (cq->count && cq->ring[cq->head].err) {
		struct sctp_cqe *e = &cq->ring[cq->head];
		err = (struct fi_cq_err_entry){
			.op_context = e->e.op_context, .flags = e->e.flags, .len = e->e.len,
			.buf = e->e.buf, .data = e->e.data, .tag = e->e.tag, .olen = e->olen,
			.err = e->err, .prov_errno = e->prov_errno};
		cq->head = (cq->head + 1) & (cq->cap - 1);
		cq->count--;
		rc = 1;
	}
	SCTP_UNLOCK(cq->dom);
	if (rc != 1)
		return rc;
	/* before 1.5 the entry ended at err_data; since, err_data is the caller's buffer */
	if (FI_VERSION_LT(cq->dom->api_version, FI_VERSION(1, 5))) {
		memcpy(buf, &err, offsetof(struct fi_cq_err_entry, err_data_size));
	} else {
		void *data = buf->err_data;
		*buf = err;
		buf->err_data = data;
		buf->err_data_size = 0;
	}
	return 1;
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static ssize_t cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src_addr,
			    const void *cond, int timeout)
{
	struct sctp_cq *cq = container_of(fcq, struct sctp_cq, cq);
	size_t threshold = cond ? *(const size_t *)cond : 1;
	struct timespec t0;

	if (cq->wait_obj == FI_WAIT_NONE)
		return -FI_ENOSYS;
	if (threshold > count)
		threshold = count;
	if (threshold == 0)
		threshold = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left;
		SCTP_LOCK(cq->dom);
		sctp_progress(cq->dom);
		if (cq->count >= threshold || (cq->count && cq->ring[cq->head].err)) {
			ssize_t n = take(cq, buf, count, src_addr);
			SCTP_UNLOCK(cq->dom);
			return n;
		}
		SCTP_UNLOCK(cq->dom);
		if (atomic_exchange(&cq->signaled, 0))
			return -FI_EAGAIN;
		left = timeout < 0 ? 50 : timeout - elapsed_ms(&t0);
		if (left <= 0)
			return -FI_EAGAIN;
		sctp_sleep(cq->dom, left < 50 ? (int)left : 50);
	}
}

static ssize_t cq_sread(struct fid_cq *fcq, void *buf, size_t count, const void *cond,
			int timeout)
{
	return cq_sreadfrom(fcq, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *fcq)
{
	struct sctp_cq *cq = container_of(fcq, struct sctp_cq, cq);

	atomic_store(&cq->signaled, 1);
	if (cq->wait)
		atomic_store(&cq->wait->signaled, 1);
	return 0;
}

static const char *cq_strerror(struct fid_cq *fcq, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	(void)fcq, (void)err_data;
	const char *s = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);
	if (buf && len) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	return s;
}

static int cq_close(struct fid *fid)
{
	struct sctp_cq *cq = container_of(fid, struct sctp_cq, cq.fid);

	if (atomic_load(&cq->refs))
		return -FI_EBUSY;
	if (cq->wait)
		sctp_wait_del(cq->wait, &cq->cq.fid);
	atomic_fetch_sub(&cq->dom->refs, 1);
	free(cq->ring);
	free(cq);
	return 0;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = sctp_no_bind,
	.control = sctp_no_control, /* FI_GETWAIT: no file descriptor to hand out */
	.ops_open = sctp_no_ops_open,
	.tostr = sctp_no_tostr,
	.ops_set = sctp_no_ops_set,
};

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

int sctp_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **fcq,
		 void *context)
{
	struct sctp_domain *d = container_of(domain, struct sctp_domain, dom);
	struct sctp_cq *cq;

	if (!attr || format_size(attr->format) == 0 || (attr->flags & ~FI_AFFINITY) ||
	    (attr->wait_cond != FI_CQ_COND_NONE && attr->wait_cond != FI_CQ_COND_THRESHOLD))
		return -FI_EINVAL;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_YIELD:
		break;
	case FI_WAIT_SET:
		if (!attr->wait_set)
			return -FI_EINVAL;
		break;
	default:
		return -FI_ENOSYS; /* no file descriptor or mutex/cond to hand out */
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	/* a power of two: positions wrap with a mask */
	for (cq->cap = 16; cq->cap < attr->size && cq->cap < ((size_t)1 << 30);)
		cq->cap *= 2;
	if (!attr->size)
		cq->cap = 1024;
	cq->ring = malloc(cq->cap * sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return -FI_ENOMEM;
	}
	cq->dom = d;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->entry_size = format_size(cq->format);
	cq->wait_obj = attr->wait_obj;
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	if (attr->wait_obj == FI_WAIT_SET) {
		cq->wait = container_of(attr->wait_set, struct sctp_wait, w);
		if (sctp_wait_add(cq->wait, &cq->cq.fid) != 0) {
			free(cq->ring);
			free(cq);
			return -FI_ENOSPC;
		}
	}
	atomic_fetch_add(&d->refs, 1);
	*fcq = &cq->cq;
	return 0;
}
