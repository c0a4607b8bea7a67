/*
 * Event queues (fi_eq_*). The provider itself has no asynchronous control events to report
 * (address vectors and registrations complete synchronously, RDM endpoints do not connect),
 * so an EQ carries what the application writes (fi_eq_write), in order, and never an error
 * entry; fi_eq_sread sleeps on a condition variable.
 */
#include "sctp_prov.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct eq_event {
	STAILQ_ENTRY(eq_event) link;
	uint32_t event;
	size_t len;
	uint8_t data[];
};

struct sctp_eq {
	struct fid_eq eq;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	STAILQ_HEAD(, eq_event) q;
	enum fi_wait_obj wait_obj;
};

static ssize_t eq_read(struct fid_eq *feq, uint32_t *event, void *buf, size_t len,
		       uint64_t flags)
{
	struct sctp_eq *eq = container_of(feq, struct sctp_eq, eq);
	struct eq_event *e;
	ssize_t rc;

	pthread_mutex_lock(&eq->lock);
	e = STAILQ_FIRST(&eq->q);
	if (!e) {
		rc = -FI_EAGAIN;
	} else if (len < e->len) {
		rc = -FI_ETOOSMALL;
	} else {
		if (event)
			*event = e->event;
		memcpy(buf, e->data, e->len);
		rc = (ssize_t)e->len;
		if (!(flags & FI_PEEK)) {
			STAILQ_REMOVE_HEAD(&eq->q, link);
			free(e);
		}
	}
	pthread_mutex_unlock(&eq->lock);
	return rc;
}

static ssize_t eq_readerr(struct fid_eq *feq, struct fi_eq_err_entry *buf, uint64_t flags)
{
	(void)feq, (void)buf, (void)flags;
	return -FI_EAGAIN;
}

static ssize_t eq_write(struct fid_eq *feq, uint32_t event, const void *buf, size_t len,
			uint64_t flags)
{
	struct sctp_eq *eq = container_of(feq, struct sctp_eq, eq);
	struct eq_event *e;

	if (flags)
		return -FI_EBADFLAGS;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return -FI_ENOMEM;
	e->event = event;
	e->len = len;
	memcpy(e->data, buf, len);
	pthread_mutex_lock(&eq->lock);
	STAILQ_INSERT_TAIL(&eq->q, e, link);
	pthread_cond_broadcast(&eq->cond);
	pthread_mutex_unlock(&eq->lock);
	return (ssize_t)len;
}

static ssize_t eq_sread(struct fid_eq *feq, uint32_t *event, void *buf, size_t len, int timeout,
			uint64_t flags)
{
	struct sctp_eq *eq = container_of(feq, struct sctp_eq, eq);
	struct timespec until;

	if (eq->wait_obj == FI_WAIT_NONE)
		return -FI_ENOSYS;
	clock_gettime(CLOCK_REALTIME, &until);
	if (timeout >= 0) {
		until.tv_sec += timeout / 1000;
		until.tv_nsec += (long)(timeout % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&eq->lock);
	while (STAILQ_EMPTY(&eq->q)) {
		int rc = timeout < 0 ? pthread_cond_wait(&eq->cond, &eq->lock)
				     : pthread_cond_timedwait(&eq->cond, &eq->lock, &until);
		if (rc == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&eq->lock);
	return eq_read(feq, event, buf, len, flags);
}

static const char *eq_strerror(struct fid_eq *feq, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	(void)feq, (void)err_data;
	const char *s = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);
	if (buf && len) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	return s;
}

static int eq_close(struct fid *fid)
{
	struct sctp_eq *eq = container_of(fid, struct sctp_eq, eq.fid);
	struct eq_event *e;

	while ((e = STAILQ_FIRST(&eq->q))) {
		STAILQ_REMOVE_HEAD(&eq->q, link);
		free(e);
	}
	pthread_cond_destroy(&eq->cond);
	pthread_mutex_destroy(&eq->lock);
	free(eq);
	return 0;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = sctp_no_bind,
	.control = sctp_no_control,
	.ops_open = sctp_no_ops_open,
	.tostr = sctp_no_tostr,
	.ops_set = sctp_no_ops_set,
};

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

int sctp_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **feq,
		 void *context)
{
	struct sctp_eq *eq;

	(void)fabric;
	if (!attr || (attr->flags & ~FI_WRITE))
		return -FI_EINVAL;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_MUTEX_COND && attr->wait_obj != FI_WAIT_YIELD)
		return -FI_ENOSYS;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	pthread_mutex_init(&eq->lock, NULL);
	pthread_cond_init(&eq->cond, NULL);
	STAILQ_INIT(&eq->q);
	eq->wait_obj = attr->wait_obj;
	eq->eq.fid.fclass = FI_CLASS_EQ;
	eq->eq.fid.context = context;
	eq->eq.fid.ops = &eq_fi_ops;
	eq->eq.ops = &eq_ops;
	*feq = &eq->eq;
	return 0;
}
