/*
 * RMA (fi_read/fi_write): not offered yet (the domain's caps carry no FI_RMA), so every call
 * is refused.
 */
#include "sctp_prov.h"

static ssize_t no_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src,
		       uint64_t addr, uint64_t key, void *context)
{
	(void)ep, (void)buf, (void)len, (void)desc, (void)src, (void)addr, (void)key;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t no_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
			fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
	(void)ep, (void)iov, (void)desc, (void)count, (void)src, (void)addr, (void)key;
	(void)context;
	return -FI_ENOSYS;
}

static ssize_t no_msg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
	(void)ep, (void)msg, (void)flags;
	return -FI_ENOSYS;
}

static ssize_t no_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	return no_read(ep, (void *)buf, len, desc, dest, addr, key, context);
}

static ssize_t no_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest,
			 uint64_t addr, uint64_t key)
{
	return no_read(ep, (void *)buf, len, NULL, dest, addr, key, NULL);
}

static ssize_t no_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
			    void *context)
{
	(void)data;
	return no_read(ep, (void *)buf, len, desc, dest, addr, key, context);
}

static ssize_t no_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
			     fi_addr_t dest, uint64_t addr, uint64_t key)
{
	(void)data;
	return no_read(ep, (void *)buf, len, NULL, dest, addr, key, NULL);
}

struct fi_ops_rma sctp_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = no_read,
	.readv = no_readv,
	.readmsg = no_msg,
	.write = no_write,
	.writev = no_readv,
	.writemsg = no_msg,
	.inject = no_inject,
	.writedata = no_writedata,
	.injectdata = no_injectdata,
};
