/*
 * Atomics (fi_atomic, fi_fetch_atomic, fi_compare_atomic) on the iWARP layer's RFC 7306
 * atomics, which act on aligned 64-bit words: fetch-add and compare-swap.
 *
 * - 64-bit SUM is a fetch-add, 64-bit ATOMIC_READ a fetch-add of 0, 64-bit CSWAP a
 *   compare-swap.
 * - Everything else -- the other operations, and every operation on 32-bit elements, which
 *   live in half of an aligned word -- is a compare-swap loop on the element's word: guess
 *   the word (0 first), swap in the word with the element changed; the old word comes back,
 *   and if it was not the guess, it is the next guess. The target's iWARP layer runs atomics
 *   one at a time, so the loop is atomic with respect to every other fabric atomic.
 * - One element per operation (count 1); INT32, UINT32, INT64 and UINT64. The element's
 *   aligned 64-bit word must lie inside the target region (a 32-bit element in the last four
 *   bytes of a region whose end is not 8-aligned is refused by the target as out of bounds).
 */
#include "sctp_prov.h"

#include <stdlib.h>
#include <string.h>

static int dt_ok(enum fi_datatype dt)
{
	return dt == FI_INT32 || dt == FI_UINT32 || dt == FI_INT64 || dt == FI_UINT64;
}

static size_t dt_size(enum fi_datatype dt)
{
	return dt == FI_INT32 || dt == FI_UINT32 ? 4 : 8;
}

/* The operations each call may carry. */
static int write_op_ok(enum fi_op op)
{
	switch (op) {
	case FI_MIN: case FI_MAX: case FI_SUM: case FI_PROD: case FI_LOR: case FI_LAND:
	case FI_BOR: case FI_BAND: case FI_LXOR: case FI_BXOR: case FI_ATOMIC_WRITE:
		return 1;
	default:
		return 0;
	}
}

static int fetch_op_ok(enum fi_op op)
{
	return write_op_ok(op) || op == FI_ATOMIC_READ;
}

static int compare_op_ok(enum fi_op op)
{
	switch (op) {
	case FI_CSWAP: case FI_CSWAP_NE: case FI_CSWAP_LE: case FI_CSWAP_LT: case FI_CSWAP_GE:
	case FI_CSWAP_GT: case FI_MSWAP:
		return 1;
	default:
		return 0;
	}
}

static int is_signed(enum fi_datatype dt)
{
	return dt == FI_INT32 || dt == FI_INT64;
}

static uint64_t elem_mask(const struct sctp_rma_op *op)
{
	return dt_size(op->dt) == 4 ? 0xffffffffULL : ~0ULL;
}

/* a < b for the element type */
static int less(const struct sctp_rma_op *op, uint64_t a, uint64_t b)
{
	if (dt_size(op->dt) == 4)
		return is_signed(op->dt) ? (int32_t)a < (int32_t)b : (uint32_t)a < (uint32_t)b;
	return is_signed(op->dt) ? (int64_t)a < (int64_t)b : a < b;
}

/* The element's new value from its old one, or old itself when it stays. */
static uint64_t apply(const struct sctp_rma_op *op, uint64_t old)
{
	uint64_t v = op->operand, c = op->compare;

	switch (op->op) {
	case FI_MIN: return less(op, v, old) ? v : old;
	case FI_MAX: return less(op, old, v) ? v : old;
	case FI_SUM: return old + v;
	case FI_PROD: return old * v;
	case FI_LOR: return (old || v) ? 1 : 0;
	case FI_LAND: return (old && v) ? 1 : 0;
	case FI_BOR: return old | v;
	case FI_BAND: return old & v;
	case FI_LXOR: return (!old != !v) ? 1 : 0;
	case FI_BXOR: return old ^ v;
	case FI_ATOMIC_WRITE: return v;
	case FI_ATOMIC_READ: return old;
	case FI_CSWAP: return c == old ? v : old;
	case FI_CSWAP_NE: return c != old ? v : old;
	case FI_CSWAP_LE: return !less(op, old, c) ? v : old;   /* compare <= target */
	case FI_CSWAP_LT: return less(op, c, old) ? v : old;    /* compare < target */
	case FI_CSWAP_GE: return !less(op, c, old) ? v : old;   /* compare >= target */
	case FI_CSWAP_GT: return less(op, old, c) ? v : old;    /* compare > target */
	case FI_MSWAP: return (v & c) | (old & ~c);
	default: return old;
	}
}

void sctp_atomic_next(struct sctp_rma_op *op, uint64_t *cmp, uint64_t *swap)
{
	uint64_t m = elem_mask(op) << op->shift;
	uint64_t old = (op->guess & m) >> op->shift;
	uint64_t nv = apply(op, old) & elem_mask(op);

	*cmp = op->guess;
	*swap = (op->guess & ~m) | (nv << op->shift);
}

void sctp_atomic_store(struct sctp_rma_op *op, uint64_t word)
{
	uint64_t old = (word >> op->shift) & elem_mask(op);

	if (!op->result)
		return;
	if (dt_size(op->dt) == 4) {
		uint32_t v = (uint32_t)old;
		memcpy(op->result, &v, 4);
	} else {
		memcpy(op->result, &old, 8);
	}
}

int sctp_atomic_seen(struct sctp_rma_op *op, uint64_t orig)
{
	if (orig != op->guess) {
		op->guess = orig; /* someone else's value: try again from it */
		return 0;
	}
	sctp_atomic_store(op, orig);
	return 1;
}

static uint64_t load(enum fi_datatype dt, const void *p)
{
	if (dt_size(dt) == 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* Builds and submits one atomic; fetch: result wanted; compare: compare given. */
static ssize_t atomic_common(struct sctp_ep *ep, const void *buf, size_t count,
			     const void *compare, void *result, fi_addr_t dest, uint64_t addr,
			     uint64_t key, enum fi_datatype dt, enum fi_op op, uint64_t flags,
			     void *context)
{
	struct sctp_rma_op *o;
	unsigned off = (unsigned)(addr & 7);

	if (!dt_ok(dt) || count != 1 || key > UINT32_MAX || (off % dt_size(dt)) != 0)
		return -FI_EINVAL;
	if (compare ? !compare_op_ok(op) : result ? !fetch_op_ok(op) : !write_op_ok(op))
		return -FI_EOPNOTSUPP;
	if ((op != FI_ATOMIC_READ && !buf) || (compare && !result))
		return -FI_EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -FI_EAGAIN;
	o->context = context;
	o->flags = (flags & ~(FI_READ | FI_WRITE)) | FI_ATOMIC | (result ? FI_READ : FI_WRITE);
	o->dt = dt;
	o->op = op;
	o->operand = op == FI_ATOMIC_READ ? 0 : load(dt, buf);
	o->compare = compare ? load(dt, compare) : 0;
	o->result = result;
	o->addr = addr;
	o->stag = (uint32_t)key;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	o->shift = off * 8;
#else
	o->shift = (8 - (unsigned)dt_size(dt) - off) * 8;
#endif
	if (dt_size(dt) == 8 && op == FI_SUM) {
		o->kind = SCTP_RMA_FADD;
	} else if (dt_size(dt) == 8 && op == FI_ATOMIC_READ) {
		o->kind = SCTP_RMA_FADD;
		o->operand = 0;
	} else if (dt_size(dt) == 8 && op == FI_CSWAP) {
		o->kind = SCTP_RMA_CSWAP;
	} else {
		o->kind = SCTP_RMA_LOOP;
		o->guess = 0;
	}
	return sctp_rma_submit(ep, dest, o);
}

#define ATOMIC_FLAGS (FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | \
		      FI_DELIVERY_COMPLETE | FI_FENCE | FI_MORE | FI_ATOMIC | FI_READ | FI_WRITE)

static ssize_t at_write(struct fid_ep *fep, const void *buf, size_t count, void *desc,
			fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			enum fi_op op, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)desc;
	return atomic_common(ep, buf, count, NULL, NULL, dest, addr, key, dt, op,
			     ep->tx_op_flags, context);
}

static ssize_t at_writev(struct fid_ep *fep, const struct fi_ioc *iov, void **desc, size_t count,
			 fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			 enum fi_op op, void *context)
{
	(void)desc;
	if (count != 1)
		return -FI_EINVAL;
	return at_write(fep, iov[0].addr, iov[0].count, NULL, dest, addr, key, dt, op, context);
}

static ssize_t at_writemsg(struct fid_ep *fep, const struct fi_msg_atomic *msg, uint64_t flags)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	if ((flags & ~ATOMIC_FLAGS) || msg->iov_count != 1 || msg->rma_iov_count != 1)
		return -FI_EINVAL;
	return atomic_common(ep, msg->msg_iov[0].addr, msg->msg_iov[0].count, NULL, NULL,
			     msg->addr, msg->rma_iov[0].addr, msg->rma_iov[0].key, msg->datatype,
			     msg->op, flags, msg->context);
}

static ssize_t at_inject(struct fid_ep *fep, const void *buf, size_t count, fi_addr_t dest,
			 uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	return atomic_common(ep, buf, count, NULL, NULL, dest, addr, key, dt, op,
			     FI_INJECT | SCTP_TXF_NOCOMP, NULL);
}

static ssize_t at_readwrite(struct fid_ep *fep, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype dt, enum fi_op op, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)desc, (void)result_desc;
	return atomic_common(ep, buf, count, NULL, result, dest, addr, key, dt, op,
			     ep->tx_op_flags, context);
}

static ssize_t at_readwritev(struct fid_ep *fep, const struct fi_ioc *iov, void **desc,
			     size_t count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *context)
{
	(void)desc, (void)result_desc;
	if (count != 1 || result_count != 1)
		return -FI_EINVAL;
	return at_readwrite(fep, iov[0].addr, iov[0].count, NULL, resultv[0].addr, NULL, dest,
			    addr, key, dt, op, context);
}

static ssize_t at_readwritemsg(struct fid_ep *fep, const struct fi_msg_atomic *msg,
			       struct fi_ioc *resultv, void **result_desc, size_t result_count,
			       uint64_t flags)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)result_desc;
	if ((flags & ~ATOMIC_FLAGS) || msg->iov_count != 1 || msg->rma_iov_count != 1 ||
	    result_count != 1)
		return -FI_EINVAL;
	return atomic_common(ep, msg->msg_iov[0].addr, msg->msg_iov[0].count, NULL,
			     resultv[0].addr, msg->addr, msg->rma_iov[0].addr, msg->rma_iov[0].key,
			     msg->datatype, msg->op, flags, msg->context);
}

static ssize_t at_compwrite(struct fid_ep *fep, const void *buf, size_t count, void *desc,
			    const void *compare, void *compare_desc, void *result,
			    void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype dt, enum fi_op op, void *context)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)desc, (void)compare_desc, (void)result_desc;
	if (!compare)
		return -FI_EINVAL;
	return atomic_common(ep, buf, count, compare, result, dest, addr, key, dt, op,
			     ep->tx_op_flags, context);
}

static ssize_t at_compwritev(struct fid_ep *fep, const struct fi_ioc *iov, void **desc,
			     size_t count, const struct fi_ioc *comparev, void **compare_desc,
			     size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *context)
{
	(void)desc, (void)compare_desc, (void)result_desc;
	if (count != 1 || compare_count != 1 || result_count != 1)
		return -FI_EINVAL;
	return at_compwrite(fep, iov[0].addr, iov[0].count, NULL, comparev[0].addr, NULL,
			    resultv[0].addr, NULL, dest, addr, key, dt, op, context);
}

static ssize_t at_compwritemsg(struct fid_ep *fep, const struct fi_msg_atomic *msg,
			       const struct fi_ioc *comparev, void **compare_desc,
			       size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			       size_t result_count, uint64_t flags)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);

	(void)compare_desc, (void)result_desc;
	if ((flags & ~ATOMIC_FLAGS) || msg->iov_count != 1 || msg->rma_iov_count != 1 ||
	    compare_count != 1 || result_count != 1 || !comparev[0].addr)
		return -FI_EINVAL;
	return atomic_common(ep, msg->msg_iov[0].addr, msg->msg_iov[0].count, comparev[0].addr,
			     resultv[0].addr, msg->addr, msg->rma_iov[0].addr, msg->rma_iov[0].key,
			     msg->datatype, msg->op, flags, msg->context);
}

static int valid(struct fid_ep *fep, enum fi_datatype dt, enum fi_op op, size_t *count,
		 uint64_t flags)
{
	struct sctp_ep *ep = container_of(fep, struct sctp_ep, ep);
	struct fi_atomic_attr attr;
	int rc = sctp_query_atomic(&ep->dom->dom, dt, op, &attr, flags);

	if (rc == 0 && count)
		*count = attr.count;
	return rc;
}

static int at_writevalid(struct fid_ep *fep, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	return valid(fep, dt, op, count, 0);
}

static int at_readwritevalid(struct fid_ep *fep, enum fi_datatype dt, enum fi_op op,
			     size_t *count)
{
	return valid(fep, dt, op, count, FI_FETCH_ATOMIC);
}

static int at_compwritevalid(struct fid_ep *fep, enum fi_datatype dt, enum fi_op op,
			     size_t *count)
{
	return valid(fep, dt, op, count, FI_COMPARE_ATOMIC);
}

struct fi_ops_atomic sctp_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = at_write,
	.writev = at_writev,
	.writemsg = at_writemsg,
	.inject = at_inject,
	.readwrite = at_readwrite,
	.readwritev = at_readwritev,
	.readwritemsg = at_readwritemsg,
	.compwrite = at_compwrite,
	.compwritev = at_compwritev,
	.compwritemsg = at_compwritemsg,
	.writevalid = at_writevalid,
	.readwritevalid = at_readwritevalid,
	.compwritevalid = at_compwritevalid,
};

int sctp_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
		      struct fi_atomic_attr *attr, uint64_t flags)
{
	struct sctp_domain *d = container_of(domain, struct sctp_domain, dom);
	int ok;

	if (flags & ~(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC))
		return -FI_EINVAL;
	if (!d->rnic)
		return -FI_EOPNOTSUPP;
	ok = dt_ok(datatype) && ((flags & FI_COMPARE_ATOMIC) ? compare_op_ok(op)
				 : (flags & FI_FETCH_ATOMIC) ? fetch_op_ok(op) : write_op_ok(op));
	if (!ok)
		return -FI_EOPNOTSUPP;
	if (attr) {
		attr->count = SCTP_ATOMIC_MAX;
		attr->size = dt_size(datatype);
	}
	return 0;
}
