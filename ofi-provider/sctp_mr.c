/*
 * Memory regions (fi_mr_reg & co.): a region is an iWARP steering tag (iw_reg_mr) in the
 * domain's protection domain; the key is the STag (FI_MR_PROV_KEY) and remote addresses are
 * virtual addresses (FI_MR_VIRT_ADDR), checked by the iWARP layer at the target against the
 * region's bounds and rights. A domain opened without FI_RMA/FI_ATOMIC has no iWARP layer:
 * its regions are local only (key 0), which is all sends and receives need.
 */
#include "sctp_prov.h"

#include <stdlib.h>

static int mr_close(struct fid *fid)
{
	struct sctp_mr *mr = container_of(fid, struct sctp_mr, mr.fid);

	SCTP_LOCK(mr->dom);
	if (mr->dom->rnic && mr->stag)
		iw_dereg_mr(mr->dom->rnic, mr->stag);
	SCTP_UNLOCK(mr->dom);
	atomic_fetch_sub(&mr->dom->refs, 1);
	free(mr);
	return 0;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = sctp_no_bind,
	.control = sctp_no_control,
	.ops_open = sctp_no_ops_open,
	.tostr = sctp_no_tostr,
	.ops_set = sctp_no_ops_set,
};

static unsigned iw_access(uint64_t access)
{
	unsigned a = IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE;

	if (access & FI_REMOTE_READ)
		a |= IW_ACCESS_REMOTE_READ;
	if (access & FI_REMOTE_WRITE)
		a |= IW_ACCESS_REMOTE_WRITE | IW_ACCESS_REMOTE_ATOMIC;
	return a;
}

#define SCTP_MR_ACCESS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
		      struct fid_mr **out)
{
	struct sctp_domain *d = container_of(fid, struct sctp_domain, dom.fid);
	struct sctp_mr *mr;
	int rc = 0;

	if (fid->fclass != FI_CLASS_DOMAIN || !attr || attr->iov_count != 1 ||
	    (attr->access & ~SCTP_MR_ACCESS) || flags)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM)
		return -FI_ENOSYS;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->dom = d;
	mr->access = attr->access;
	SCTP_LOCK(d);
	if (d->rnic && attr->mr_iov[0].iov_len)
		rc = iw_reg_mr(d->pd, attr->mr_iov[0].iov_base, attr->mr_iov[0].iov_len,
			       iw_access(attr->access), &mr->stag);
	SCTP_UNLOCK(d);
	if (rc != 0) {
		SCTP_WARN(FI_LOG_MR, "registration of %zu bytes: %s\n", attr->mr_iov[0].iov_len,
			  iw_last_error());
		free(mr);
		return -sctp_errno(rc);
	}
	mr->mr.fid.fclass = FI_CLASS_MR;
	mr->mr.fid.context = attr->context;
	mr->mr.fid.ops = &mr_fi_ops;
	mr->mr.mem_desc = mr;
	mr->mr.key = mr->stag;
	atomic_fetch_add(&d->refs, 1);
	*out = &mr->mr;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
		   uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr,
		   void *context)
{
	struct fi_mr_attr attr = {.mr_iov = iov, .iov_count = count, .access = access,
				  .offset = offset, .requested_key = requested_key,
				  .context = context, .iface = FI_HMEM_SYSTEM};

	return mr_regattr(fid, &attr, flags, mr);
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		  uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr,
		  void *context)
{
	struct iovec iov = {(void *)buf, len};

	return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

struct fi_ops_mr sctp_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};
