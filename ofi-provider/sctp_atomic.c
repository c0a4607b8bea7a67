/*
 * Atomics (fi_atomic & co.): not offered yet (the domain's caps carry no FI_ATOMIC), so every
 * call is refused and fi_query_atomic says no.
 */
#include "sctp_prov.h"

static ssize_t no_write(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			enum fi_op op, void *context)
{
	(void)ep, (void)buf, (void)count, (void)desc, (void)dest, (void)addr, (void)key;
	(void)dt, (void)op, (void)context;
	return -FI_ENOSYS;
}

static ssize_t no_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
			 fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			 enum fi_op op, void *context)
{
	(void)iov;
	return no_write(ep, NULL, count, desc, dest, addr, key, dt, op, context);
}

static ssize_t no_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	(void)ep, (void)msg, (void)flags;
	return -FI_ENOSYS;
}

static ssize_t no_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest,
			 uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op)
{
	return no_write(ep, buf, count, NULL, dest, addr, key, dt, op, NULL);
}

static ssize_t no_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype dt, enum fi_op op, void *context)
{
	(void)result, (void)result_desc;
	return no_write(ep, buf, count, desc, dest, addr, key, dt, op, context);
}

static ssize_t no_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			     size_t count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *context)
{
	(void)iov, (void)resultv, (void)result_desc, (void)result_count;
	return no_write(ep, NULL, count, desc, dest, addr, key, dt, op, context);
}

static ssize_t no_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			       struct fi_ioc *resultv, void **result_desc, size_t result_count,
			       uint64_t flags)
{
	(void)resultv, (void)result_desc, (void)result_count;
	return no_writemsg(ep, msg, flags);
}

static ssize_t no_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    const void *compare, void *compare_desc, void *result,
			    void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype dt, enum fi_op op, void *context)
{
	(void)compare, (void)compare_desc, (void)result, (void)result_desc;
	return no_write(ep, buf, count, desc, dest, addr, key, dt, op, context);
}

static ssize_t no_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			     size_t count, const struct fi_ioc *comparev, void **compare_desc,
			     size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *context)
{
	(void)iov, (void)comparev, (void)compare_desc, (void)compare_count, (void)resultv;
	(void)result_desc, (void)result_count;
	return no_write(ep, NULL, count, desc, dest, addr, key, dt, op, context);
}

static ssize_t no_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			       const struct fi_ioc *comparev, void **compare_desc,
			       size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			       size_t result_count, uint64_t flags)
{
	(void)comparev, (void)compare_desc, (void)compare_count, (void)resultv;
	(void)result_desc, (void)result_count;
	return no_writemsg(ep, msg, flags);
}

static int no_valid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	(void)ep, (void)dt, (void)op, (void)count;
	return -FI_EOPNOTSUPP;
}

struct fi_ops_atomic sctp_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = no_write,
	.writev = no_writev,
	.writemsg = no_writemsg,
	.inject = no_inject,
	.readwrite = no_readwrite,
	.readwritev = no_readwritev,
	.readwritemsg = no_readwritemsg,
	.compwrite = no_compwrite,
	.compwritev = no_compwritev,
	.compwritemsg = no_compwritemsg,
	.writevalid = no_valid,
	.readwritevalid = no_valid,
	.compwritevalid = no_valid,
};

int sctp_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
		      struct fi_atomic_attr *attr, uint64_t flags)
{
	(void)domain, (void)datatype, (void)op, (void)attr, (void)flags;
	return -FI_EOPNOTSUPP;
}
