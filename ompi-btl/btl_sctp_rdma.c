/*
 * btl sctp RDMA: put, get and 64-bit atomics (fetch-add, compare-swap) over the project's
 * iWARP layer (transport/iw: RDMAP/DDP over the same SCTP associations), the thesis's hybrid
 * design: point-to-point over SCTP streams, one-sided as RDMA. Open MPI's osc rdma uses it
 * (`--mca osc rdma --mca osc_rdma_btls sctp`).
 *
 * - One software RNIC on the core endpoint, one PD, one CQ. One QP per peer, numbered after
 *   the peer's rank (vpid + 1) on both sides, so no QP numbers travel: the QP towards rank r
 *   is r + 1 here, and ours is (our rank + 1) there. Jobs above IW_MAX_QP - 1 ranks get no
 *   RDMA to the ranks beyond (those operations fail with OPAL_ERR_NOT_AVAILABLE).
 * - A QP must exist before its peer's first segment (the RNIC drops segments for a QP it does
 *   not have), but Open MPI adds a process on another node to the BTLs only when it first
 *   sends to it: a rank that only ever is a target never adds its origin. So the first
 *   registration peers may use creates the QPs towards every rank of the job (the cards the
 *   first add_procs gave the core): no peer can target us before it has a registration of ours.
 * - Local buffers need no registration: a local-only STag covers the address space (it never
 *   leaves the process), so the BTL accepts unregistered local buffers of any size.
 * - Registrations go through Open MPI's registration cache (rcache grdma), as openib's and
 *   uct's do: a window registered twice reuses one STag, and freed memory loses its STag.
 * - Remote completion: a put completes (its callback) once the target has placed it, because
 *   osc rdma takes the callback as remote completion: it releases an accumulate's lock when
 *   the put of its get-update-put completes, and the next rank's Get must see that put. A put
 *   is one Write; a 1-byte Read behind it is the fence (the target serves a Read only after
 *   placing every earlier segment of the QP: iw's ordering), and its response completes every
 *   put posted before it. One fence is in flight per peer while puts go on; btl_flush sends
 *   one more behind the rest. So a window of puts costs one round trip per flush, not one
 *   per put.
 * - The RNIC defers posting (iw attr.defer_tx): operations leave at the next progress call,
 *   small ones bundled into one core message, so a window of puts and the flush's Read cost
 *   one or two packets, not a sendmsg each.
 * - ob1 asks for registrations with REMOTE_READ only for its RDMA rendezvous; they are refused
 *   (and btl_min_rdma_pipeline_size is unbounded), so point-to-point stays on the SCTP
 *   streams, which move large messages faster than the iWARP layer does today.
 * - Completions are reaped in the component's progress, without locks held, so callbacks may
 *   post more operations.
 */
#include "btl_sctp.h"
#include "btl_sctp_endpoint.h"
#include "btl_sctp_proc.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iw/iw_verbs.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_vari.h"
#include "opal/mca/rcache/base/base.h"
#include "opal/util/argv.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

/* What travels to peers inside osc rdma's window descriptions and ob1's RGET headers. */
struct mca_btl_base_registration_handle_t {
	uint32_t stag;
	uint32_t flags;
};
/* No STag: the memory of the process that handed it out, which its same-host peers read and
 * write with sctpt_peer_read/write (one copy, process_vm_readv/writev). */
#define SCTP_HANDLE_PROCESS 1u

/* What register_mem hands out for memory a same-host peer reaches by itself; ob1 registers
 * its buffers per endpoint, osc rdma its windows for any endpoint (those get an STag). */
static mca_btl_base_registration_handle_t sctp_process_handle = {0, SCTP_HANDLE_PROCESS};

/* A registration as Open MPI's registration cache (rcache grdma) keeps it: the cache
 * reuses a registration for buffers it covers and drops it when the memory is freed. */
struct sctp_reg {
	mca_rcache_base_registration_t base; /* first: the cache's part */
	struct mca_btl_base_registration_handle_t handle;
};

/* One outstanding BTL operation; its address is its work request's id. */
struct sctp_rdma_op {
	mca_btl_sctp_endpoint_t *endpoint;
	void *local_address;
	mca_btl_base_registration_handle_t *local_handle;
	mca_btl_base_rdma_completion_fn_t cbfunc;
	void *cbcontext, *cbdata;
	int status;          /* the first error seen among its work requests */
	int32_t waits;       /* completions it still needs: its own, and a put's fence */
	struct sctp_rdma_op *next;   /* a put: the next one on the same fence list */
	struct sctp_rdma_op *fenced; /* a fence: the puts it completes */
	uint64_t scratch;    /* a fence Read's sink, a non-fetching atomic's result */
};


size_t mca_btl_sctp_rdma_handle_size(void)
{
	return sizeof(struct mca_btl_base_registration_handle_t);
}

/* Whether an MCA parameter file Open MPI reads (override file included) sets name or long. */
static bool param_files_set(const char *name, const char *long_name)
{
	static const struct {
		const char *var;
		char sep;
	} lists[] = {{"param_files", ','}, {"override_param_file", OPAL_ENV_SEP}};
	bool found = false;

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]) && !found; i++) {
		int idx = mca_base_var_find("opal", "mca", "base", lists[i].var);
		const char **files = NULL;
		char **argv;

		if (idx < 0 || OPAL_SUCCESS != mca_base_var_get_value(idx, &files, NULL, NULL) ||
		    NULL == files || NULL == *files)
			continue;
		argv = opal_argv_split(*files, lists[i].sep);
		for (int k = 0; NULL != argv && NULL != argv[k] && !found; k++) {
			mca_base_var_file_value_t *fv;
			opal_list_t values;

			OBJ_CONSTRUCT(&values, opal_list_t);
			(void)mca_base_parse_paramfile(argv[k], &values); /* a missing file sets nothing */
			OPAL_LIST_FOREACH (fv, &values, mca_base_var_file_value_t)
				found |= 0 == strcmp(fv->mbvfv_var, name) ||
					 0 == strcmp(fv->mbvfv_var, long_name);
			OPAL_LIST_DESTRUCT(&values);
		}
		opal_argv_free(argv);
	}
	return found;
}

/* Gives osc rdma's parameter osc_rdma_<var> the default value, unless the user set it. */
static void osc_default(const char *var, int value)
{
	char name[80], long_name[80], env[96], v[16];

	snprintf(name, sizeof(name), "osc_rdma_%s", var);
	snprintf(long_name, sizeof(long_name), "ompi_osc_rdma_%s", var);
	snprintf(env, sizeof(env), "%s%s", OPAL_MCA_PREFIX, long_name);
	if (NULL != getenv(env))
		return;
	snprintf(env, sizeof(env), "%s%s", OPAL_MCA_PREFIX, name);
	if (NULL != getenv(env) || param_files_set(name, long_name))
		return;
	snprintf(v, sizeof(v), "%d", value);
	setenv(env, v, 0);
}

/*
 * osc rdma's parameters are registered after the BTLs are opened (MPI_Init opens the osc
 * framework later) and take the environment's value then: our defaults go there, unless the
 * user set the parameter in the environment (the command line arrives that way) or in a
 * parameter file (which the environment would override).
 * - buffer_size: an MPI_Accumulate osc rdma cannot give the BTL's atomics goes as get-op-put
 *   pieces of buffer_size / 8 bytes, each a blocking get (its default 32 KiB: a round trip
 *   per 4 KiB).
 * - network_max_amo: up to that many elements of a 64-bit integer sum are one BTL
 *   atomic each, osc rdma waiting for each before the next (a round trip per element), where
 *   get-op-put costs one round trip in all.
 */
void mca_btl_sctp_osc_defaults(int buffer_size, int max_amo)
{
	if (buffer_size > 0)
		osc_default("buffer_size", buffer_size);
	if (max_amo > 0)
		osc_default("network_max_amo", max_amo);
}

void mca_btl_sctp_flags_get(mca_btl_base_module_t *m)
{
	m->btl_flags |= MCA_BTL_FLAGS_GET;
	m->btl_registration_handle_size = mca_btl_sctp_rdma_handle_size();
	m->btl_get_limit = 1u << 30; /* iWARP SGE lengths are 32-bit */
	m->btl_get_alignment = 0;
	m->btl_get_local_registration_threshold = SIZE_MAX;
	/* no RDMA pipeline for ob1 (its puts would need the receiver's registration) */
	m->btl_min_rdma_pipeline_size = SIZE_MAX;
}

static unsigned reg_access(uint32_t flags)
{
	unsigned a = IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE;

	if (flags & MCA_BTL_REG_FLAG_REMOTE_READ)
		a |= IW_ACCESS_REMOTE_READ;
	if (flags & MCA_BTL_REG_FLAG_REMOTE_WRITE)
		a |= IW_ACCESS_REMOTE_WRITE;
	if (flags & MCA_BTL_REG_FLAG_REMOTE_ATOMIC)
		a |= IW_ACCESS_REMOTE_ATOMIC;
	return a;
}

static int sctp_rcache_register(void *reg_data, void *base, size_t size,
				mca_rcache_base_registration_t *reg)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	struct sctp_reg *r = (struct sctp_reg *)reg;

	(void)reg_data;
	if (0 != iw_reg_mr(c->pd, base, size, reg_access((uint32_t)reg->access_flags),
			   &r->handle.stag)) {
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: cannot register %zu bytes at %p: %s", size, base,
				    iw_last_error());
		return OPAL_ERR_OUT_OF_RESOURCE;
	}
	r->handle.flags = 0;
	return OPAL_SUCCESS;
}

static int sctp_rcache_deregister(void *reg_data, mca_rcache_base_registration_t *reg)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

	(void)reg_data;
	if (NULL != c->rnic)
		iw_dereg_mr(c->rnic, ((struct sctp_reg *)reg)->handle.stag);
	return OPAL_SUCCESS;
}

int mca_btl_sctp_rdma_open(void)
{
	mca_rcache_base_resources_t res = {
		.cache_name = "btl_sctp",
		.reg_data = NULL,
		.sizeof_reg = sizeof(struct sctp_reg),
		.register_mem = sctp_rcache_register,
		.deregister_mem = sctp_rcache_deregister,
	};
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	struct iw_rnic_attr attr;
	int rc;

	c->qps = calloc(IW_QPN_MAX + 1, sizeof(*c->qps));
	if (NULL == c->qps) {
		opal_output(0, "btl sctp: no RDMA (out of memory); put/get/atomics are off");
		return OPAL_ERROR;
	}
	/* work posted in a row (a window of puts, then the flush's Read) goes to the core at the
	 * next progress call, in as few messages as it fits: osc rdma always progresses (flush,
	 * unlock, fence, waiting for a get) before it needs the data to have left */
	iw_rnic_attr_init(&attr);
	attr.defer_tx = NULL == getenv("BTL_SCTP_IW_NODEFER"); /* set: post at once (A/B) */
	rc = iw_open(c->ep, &attr, &c->rnic);
	if (0 == rc)
		rc = iw_pd_alloc(c->rnic, &c->pd);
	if (0 == rc)
		rc = iw_cq_create(c->rnic, 4096, &c->cq);
	/* the local-only STag over the whole address space (never handed to a peer) */
	if (0 == rc)
		rc = iw_reg_mr(c->pd, (void *)(uintptr_t)1, UINTPTR_MAX - 1,
			       IW_ACCESS_LOCAL_READ | IW_ACCESS_LOCAL_WRITE, &c->local_stag);
	if (0 != rc) {
		opal_output(0, "btl sctp: no RDMA (iWARP layer: %s); put/get/atomics are off",
			    iw_last_error());
		mca_btl_sctp_rdma_close();
		return OPAL_ERROR;
	}
	c->rcache = mca_rcache_base_module_create("grdma", NULL, &res);
	if (NULL == c->rcache) {
		opal_output(0, "btl sctp: no registration cache (rcache grdma); put/get/atomics "
			       "are off");
		mca_btl_sctp_rdma_close();
		return OPAL_ERROR;
	}
	return OPAL_SUCCESS;
}

void mca_btl_sctp_rdma_close(void)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

	if (NULL != c->rcache)
		mca_rcache_base_module_destroy(c->rcache); /* deregisters what it cached */
	c->rcache = NULL;
	if (NULL != c->rnic)
		iw_close(c->rnic); /* destroys QPs, regions, CQ and PD */
	c->rnic = NULL;
	free(c->qps);
	c->qps = NULL;
	c->job_qps = false;
	c->pd = NULL;
	c->cq = NULL;
}

/* The QP towards rank vpid of our job, the core's peer, created and connected on first use
 * (both sides know the numbers); qp_lock held. */
static int sctp_qp_locked(sctpt_peer_t peer, uint32_t vpid, struct iw_qp **out)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	uint32_t me = opal_proc_local_get()->proc_name.vpid;
	struct iw_qp_attr qa = {.send_cq = c->cq, .recv_cq = c->cq, .qpn = vpid + 1};
	struct iw_qp *qp = NULL;
	int rc;

	if (NULL == c->rnic || vpid + 1 > IW_QPN_MAX || me + 1 > IW_QPN_MAX || vpid == me)
		return -ERANGE;
	if (NULL == c->qps[vpid + 1]) {
		rc = iw_qp_create(c->pd, &qa, &qp);
		if (0 == rc && 0 != (rc = iw_qp_connect(qp, peer, me + 1)))
			iw_qp_destroy(qp);
		if (0 != rc)
			return rc;
		c->qps[vpid + 1] = qp;
	}
	*out = c->qps[vpid + 1];
	return 0;
}

int mca_btl_sctp_rdma_endpoint_init(mca_btl_sctp_endpoint_t *endpoint)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	opal_process_name_t me = opal_proc_local_get()->proc_name;
	opal_process_name_t peer = endpoint->proc->proc->proc_name;
	struct iw_qp *qp = NULL;
	int rc;

	if (NULL == c->rnic || NULL != endpoint->qp)
		return NULL == c->rnic ? OPAL_ERR_NOT_AVAILABLE : OPAL_SUCCESS;
	if (me.jobid != peer.jobid)
		return OPAL_ERR_NOT_AVAILABLE;
	OPAL_THREAD_LOCK(&c->qp_lock);
	rc = sctp_qp_locked(endpoint->peer, peer.vpid, &qp);
	if (0 == rc)
		endpoint->qp = qp;
	OPAL_THREAD_UNLOCK(&c->qp_lock);
	if (0 != rc) {
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: no RDMA queue pair to %s: %s", endpoint->proc->name,
				    -ERANGE == rc ? "its rank or ours is beyond the QP numbers" :
				    iw_last_error());
		return OPAL_ERR_NOT_AVAILABLE;
	}
	return OPAL_SUCCESS;
}

/* The QPs towards every rank of the job whose card the core has, before a registration peers
 * may target leaves this process (see the top of this file). Once. */
static void sctp_job_qps(void)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

	OPAL_THREAD_LOCK(&c->qp_lock);
	for (uint32_t vpid = 0; !c->job_qps && NULL != c->job_peers && vpid < c->job_size; vpid++) {
		struct iw_qp *qp;
		int rc = c->job_peers[vpid] < 0 ? 0 : sctp_qp_locked(c->job_peers[vpid], vpid, &qp);

		if (0 != rc && -ERANGE != rc)
			opal_output_verbose(10, opal_btl_base_framework.framework_output,
					    "btl sctp: no RDMA queue pair to rank %u: %s", vpid,
					    iw_last_error());
	}
	c->job_qps = NULL != c->job_peers;
	OPAL_THREAD_UNLOCK(&c->qp_lock);
}

mca_btl_base_registration_handle_t *mca_btl_sctp_register_mem(struct mca_btl_base_module_t *btl,
							       struct mca_btl_base_endpoint_t *endpoint,
							       void *base, size_t size, uint32_t flags)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	const uint32_t remote = MCA_BTL_REG_FLAG_REMOTE_READ | MCA_BTL_REG_FLAG_REMOTE_WRITE |
				MCA_BTL_REG_FLAG_REMOTE_ATOMIC;
	mca_rcache_base_registration_t *reg;

	(void)btl;
	if (NULL == base || 0 == size)
		return NULL;
	/* ob1's RGET to a same-host peer: it reads our buffer (sender), or we read its (receiver) */
	if (NULL != endpoint && MCA_BTL_ENDPOINT_ANY != endpoint && c->shm_get) {
		int mem = sctpt_peer_mem(c->ep, endpoint->peer);
		if ((flags & MCA_BTL_REG_FLAG_REMOTE_READ) ? (mem & SCTPT_MEM_PEER_READS)
							   : (mem & SCTPT_MEM_READ))
			return &sctp_process_handle;
	}
	if (NULL == c->rcache)
		return NULL;
	/* ob1's RDMA rendezvous to other hosts registers with REMOTE_READ alone: keep p2p on the
	 * streams there */
	if ((flags & remote) == MCA_BTL_REG_FLAG_REMOTE_READ)
		return NULL;
	if ((flags & remote) && !c->job_qps)
		sctp_job_qps();
	/* MCA_BTL_REG_FLAG_* are the rcache's access flags */
	if (OPAL_SUCCESS != c->rcache->rcache_register(c->rcache, base, size, 0,
						      (int32_t)(flags & MCA_BTL_REG_FLAG_ACCESS_ANY),
						      &reg))
		return NULL;
	return &((struct sctp_reg *)reg)->handle;
}

int mca_btl_sctp_deregister_mem(struct mca_btl_base_module_t *btl,
				mca_btl_base_registration_handle_t *handle)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	struct sctp_reg *r = (struct sctp_reg *)((char *)handle - offsetof(struct sctp_reg, handle));

	(void)btl;
	if (&sctp_process_handle != handle && NULL != c->rcache)
		c->rcache->rcache_deregister(c->rcache, &r->base);
	return OPAL_SUCCESS;
}

static struct sctp_rdma_op *op_new(mca_btl_sctp_endpoint_t *endpoint, void *local_address,
				   mca_btl_base_registration_handle_t *local_handle,
				   mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
				   void *cbdata)
{
	struct sctp_rdma_op *op = calloc(1, sizeof(*op));

	if (NULL == op)
		return NULL;
	op->endpoint = endpoint;
	op->local_address = local_address;
	op->local_handle = local_handle;
	op->cbfunc = cbfunc;
	op->cbcontext = cbcontext;
	op->cbdata = cbdata;
	op->waits = 1;
	return op;
}

static int post_status(int rc)
{
	switch (rc) {
	case 0:
		return OPAL_SUCCESS;
	case -ENOSPC:
		return OPAL_ERR_OUT_OF_RESOURCE; /* osc rdma retries */
	case -EPIPE:
		return OPAL_ERR_UNREACH;
	default:
		return OPAL_ERROR;
	}
}

/* Posts the work request of one operation; op is its id. */
static int post(mca_btl_sctp_endpoint_t *endpoint, struct sctp_rdma_op *op, struct iw_send_wr *wr)
{
	int rc;

	if (OPAL_UNLIKELY(OPAL_SUCCESS != mca_btl_sctp_rdma_endpoint_init(endpoint))) {
		free(op);
		return OPAL_ERR_NOT_AVAILABLE;
	}
	/* counted before posting: another thread's progress may complete it at once */
	OPAL_THREAD_ADD_FETCH32(&endpoint->rdma_ops, 1);
	OPAL_THREAD_ADD_FETCH32(&mca_btl_sctp_component.rdma_ops, 1);
	wr->wr_id = (uint64_t)(uintptr_t)op;
	rc = iw_post_send(endpoint->qp, wr);
	if (0 != rc) { /* the caller retries the operation */
		OPAL_THREAD_ADD_FETCH32(&endpoint->rdma_ops, -1);
		OPAL_THREAD_ADD_FETCH32(&mca_btl_sctp_component.rdma_ops, -1);
		free(op);
		return post_status(rc);
	}
	return OPAL_SUCCESS;
}

/* Posts one work request of op whose local side is [local, local + len) (NULL: op's own
 * scratch word, for operations whose data nobody reads). */
static int post_one(mca_btl_sctp_endpoint_t *endpoint, struct sctp_rdma_op *op,
		    enum iw_wr_opcode opcode, void *local, uint32_t len,
		    const mca_btl_base_registration_handle_t *remote_handle, uint64_t remote_to,
		    uint64_t compare_add, uint64_t swap)
{
	struct iw_sge sge = { local ? local : (void *)&op->scratch, len,
			      mca_btl_sctp_component.local_stag };
	struct iw_send_wr wr = { .opcode = opcode, .sg_list = &sge, .num_sge = 1,
				 .remote_stag = remote_handle->stag, .remote_to = remote_to,
				 .compare_add = compare_add, .swap = swap };

	return post(endpoint, op, &wr);
}

/*
 * A get or put on a same-host peer's memory (a handle it gave out for itself): one copy by
 * the kernel, done when this returns, so the callback runs before we do (as vader's single-copy
 * path does). A copy the kernel refuses completes with an error, upon which ob1 falls back to
 * its send protocol for that message.
 */
static int process_copy(struct mca_btl_base_module_t *btl, mca_btl_sctp_endpoint_t *endpoint,
			int write, void *local_address, uint64_t remote_address,
			mca_btl_base_registration_handle_t *local_handle, size_t size,
			mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	int rc = 0;

	if (size > 0)
		rc = write ? sctpt_peer_write(c->ep, endpoint->peer, local_address, remote_address,
					      size)
			   : sctpt_peer_read(c->ep, endpoint->peer, local_address, remote_address,
					     size);
	if (0 == rc) {
		OPAL_THREAD_ADD_FETCH64(&c->process_copies, 1);
	} else {
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: %s %zu bytes of %s's memory failed: %s",
				    write ? "writing" : "reading", size, endpoint->proc->name,
				    sctpt_last_error());
	}
	if (NULL != cbfunc)
		cbfunc(btl, endpoint, local_address, local_handle, cbcontext, cbdata,
		       0 == rc ? OPAL_SUCCESS : OPAL_ERROR);
	return OPAL_SUCCESS;
}

/*
 * A put or get on this process's own memory. A job with several ranks on a node and more than
 * one node gets no CPU-atomics shortcut from osc rdma 4.1 (it looks for
 * MCA_BTL_ATOMIC_SUPPORTS_GLOB in btl_flags, not btl_atomic_flags): it then reaches its own
 * window, and a local leader its own state, through the BTL with no endpoint (it has none to
 * itself). A copy, done when this returns, as the target's RNIC would place it.
 */
static int copy_self(struct mca_btl_base_module_t *btl, int write, void *local_address,
		     uint64_t remote_address, mca_btl_base_registration_handle_t *local_handle,
		     size_t size, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
		     void *cbdata)
{
	void *remote = (void *)(uintptr_t)remote_address;

	if (size > 0)
		memmove(write ? remote : local_address, write ? local_address : remote, size);
	if (NULL != cbfunc)
		cbfunc(btl, NULL, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
	return OPAL_SUCCESS;
}

/*
 * Posts a fence Read behind the puts to endpoint that have none yet, if any; its completion
 * completes them. A fence that cannot be posted leaves them waiting for the next, which
 * progress posts (fence_retry).
 */
static int fence_post(mca_btl_sctp_endpoint_t *endpoint)
{
	struct mca_btl_base_registration_handle_t h = { 0, 0 };
	struct sctp_rdma_op *op, *puts;
	uint64_t addr;
	int rc;

	op = op_new(endpoint, NULL, NULL, NULL, NULL, NULL);
	OPAL_THREAD_LOCK(&endpoint->flush_lock);
	puts = endpoint->unfenced;
	if (NULL == puts || NULL == op) {
		OPAL_THREAD_UNLOCK(&endpoint->flush_lock);
		if (NULL != puts)
			mca_btl_sctp_component.fence_retry = 1;
		free(op);
		return NULL == puts ? OPAL_SUCCESS : OPAL_ERR_OUT_OF_RESOURCE;
	}
	endpoint->unfenced = NULL;
	endpoint->unfenced_tail = &endpoint->unfenced;
	endpoint->fences++;
	h.stag = endpoint->flush_stag;
	addr = endpoint->flush_addr;
	OPAL_THREAD_UNLOCK(&endpoint->flush_lock);
	op->fenced = puts;
	rc = post_one(endpoint, op, IW_WR_READ, NULL, 1, &h, addr, 0, 0); /* frees op on failure */
	if (OPAL_SUCCESS != rc) {
		struct sctp_rdma_op *last = puts;

		while (NULL != last->next)
			last = last->next;
		OPAL_THREAD_LOCK(&endpoint->flush_lock);
		last->next = endpoint->unfenced; /* first in line again, in posting order */
		if (NULL == endpoint->unfenced)
			endpoint->unfenced_tail = &last->next;
		endpoint->unfenced = puts;
		endpoint->fences--;
		OPAL_THREAD_UNLOCK(&endpoint->flush_lock);
		mca_btl_sctp_component.fence_retry = 1;
	}
	return rc;
}

int mca_btl_sctp_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
		     void *local_address, uint64_t remote_address,
		     struct mca_btl_base_registration_handle_t *local_handle,
		     struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
		     int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
		     void *cbcontext, void *cbdata)
{
	struct sctp_rdma_op *op;
	int rc, fence;

	(void)flags;
	(void)order;
	if (OPAL_UNLIKELY(size > btl->btl_put_limit || NULL == remote_handle))
		return OPAL_ERR_BAD_PARAM;
	if (NULL == endpoint)
		return copy_self(btl, 1, local_address, remote_address, local_handle, size, cbfunc,
				 cbcontext, cbdata);
	if (remote_handle->flags & SCTP_HANDLE_PROCESS)
		return process_copy(btl, endpoint, 1, local_address, remote_address, local_handle,
				    size, cbfunc, cbcontext, cbdata);
	if (NULL == mca_btl_sctp_component.rnic)
		return OPAL_ERR_NOT_AVAILABLE;
	op = op_new(endpoint, local_address, local_handle, cbfunc, cbcontext, cbdata);
	if (NULL == op)
		return OPAL_ERR_OUT_OF_RESOURCE;
	if (0 == size) /* nothing to place: a Read completes it in order, as a fence */
		return post_one(endpoint, op, IW_WR_READ, NULL, 1, remote_handle, remote_address, 0, 0);
	op->waits = 2; /* its Write, then a fence behind it */
	rc = post_one(endpoint, op, IW_WR_WRITE, local_address, (uint32_t)size, remote_handle,
		      remote_address, 0, 0);
	if (OPAL_SUCCESS != rc)
		return rc;
	/* the fence reads behind this Write, in memory the peer lets us read (osc rdma registers
	 * windows for every remote access); a put posted at once is in the fence in flight or
	 * in the next, sent when that one returns */
	OPAL_THREAD_LOCK(&endpoint->flush_lock);
	*endpoint->unfenced_tail = op;
	endpoint->unfenced_tail = &op->next;
	endpoint->flush_stag = remote_handle->stag;
	endpoint->flush_addr = remote_address;
	fence = 0 == endpoint->fences;
	OPAL_THREAD_UNLOCK(&endpoint->flush_lock);
	if (fence)
		(void)fence_post(endpoint); /* on failure progress posts it */
	return OPAL_SUCCESS;
}

/*
 * btl_flush: every operation posted to endpoint (NULL: to every peer) before the call has
 * completed, and every put is placed at its target, when it returns.
 */
int mca_btl_sctp_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint)
{
	mca_btl_sctp_module_t *m = (mca_btl_sctp_module_t *)btl;
	mca_btl_sctp_endpoint_t *e;
	int busy;

	if (NULL == mca_btl_sctp_component.rnic)
		return OPAL_ERR_NOT_AVAILABLE;
	do {
		busy = 0;
		if (NULL != endpoint) {
			busy = OPAL_SUCCESS != fence_post(endpoint) || 0 != endpoint->rdma_ops;
		} else {
			OPAL_THREAD_LOCK(&m->endpoints_lock);
			OPAL_LIST_FOREACH (e, &m->endpoints, mca_btl_sctp_endpoint_t)
				busy |= OPAL_SUCCESS != fence_post(e) || 0 != e->rdma_ops;
			OPAL_THREAD_UNLOCK(&m->endpoints_lock);
		}
		if (busy)
			opal_progress();
	} while (busy);
	return OPAL_SUCCESS;
}

int mca_btl_sctp_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
		     void *local_address, uint64_t remote_address,
		     struct mca_btl_base_registration_handle_t *local_handle,
		     struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
		     int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
		     void *cbcontext, void *cbdata)
{
	struct sctp_rdma_op *op;

	(void)flags;
	(void)order;
	if (OPAL_UNLIKELY(size > btl->btl_get_limit || NULL == remote_handle))
		return OPAL_ERR_BAD_PARAM;
	if (NULL == endpoint)
		return copy_self(btl, 0, local_address, remote_address, local_handle, size, cbfunc,
				 cbcontext, cbdata);
	if (remote_handle->flags & SCTP_HANDLE_PROCESS)
		return process_copy(btl, endpoint, 0, local_address, remote_address, local_handle,
				    size, cbfunc, cbcontext, cbdata);
	if (NULL == mca_btl_sctp_component.rnic)
		return OPAL_ERR_NOT_AVAILABLE;
	op = op_new(endpoint, local_address, local_handle, cbfunc, cbcontext, cbdata);
	if (NULL == op)
		return OPAL_ERR_OUT_OF_RESOURCE;
	return post_one(endpoint, op, IW_WR_READ, size ? local_address : NULL, (uint32_t)size,
			remote_handle, remote_address, 0, 0);
}

/*
 * An atomic on this process's own memory. With MCA_BTL_ATOMIC_SUPPORTS_GLOB osc rdma needs no
 * endpoint to itself and passes none (on a job spanning nodes it takes its own locks through
 * the BTL): the target's RNIC applies atomics with the CPU's own instructions, so doing them
 * here with the same ones is coherent with every other origin's.
 */
static int atomic64_self(struct mca_btl_base_module_t *btl, void *result, uint64_t remote_address,
			 mca_btl_base_registration_handle_t *local_handle, enum iw_wr_opcode opcode,
			 uint64_t compare_add, uint64_t swap, mca_btl_base_rdma_completion_fn_t cbfunc,
			 void *cbcontext, void *cbdata)
{
	uint64_t *target = (uint64_t *)(uintptr_t)remote_address, old;

	if (IW_WR_COMP_SWAP == opcode) {
		old = compare_add;
		__atomic_compare_exchange_n(target, &old, swap, 0, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		old = __atomic_fetch_add(target, compare_add, __ATOMIC_SEQ_CST);
	}
	if (NULL != result)
		memcpy(result, &old, sizeof(old));
	if (NULL != cbfunc)
		cbfunc(btl, NULL, result, local_handle, cbcontext, cbdata,
		       OPAL_SUCCESS);
	return OPAL_SUCCESS;
}

static int atomic64(struct mca_btl_base_module_t *btl, mca_btl_sctp_endpoint_t *endpoint,
		    void *result, uint64_t remote_address,
		    mca_btl_base_registration_handle_t *local_handle,
		    mca_btl_base_registration_handle_t *remote_handle, enum iw_wr_opcode opcode,
		    uint64_t compare_add, uint64_t swap, int flags,
		    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
	struct sctp_rdma_op *op;

	if (OPAL_UNLIKELY((flags & MCA_BTL_ATOMIC_FLAG_32BIT) || NULL == remote_handle ||
			  (remote_address & 7)))
		return OPAL_ERR_NOT_SUPPORTED; /* RFC 7306: aligned 64-bit words only */
	if (NULL == endpoint)
		return atomic64_self(btl, result, remote_address, local_handle, opcode, compare_add,
				     swap, cbfunc, cbcontext, cbdata);
	op = op_new(endpoint, result, local_handle, cbfunc, cbcontext, cbdata);
	if (NULL == op)
		return OPAL_ERR_OUT_OF_RESOURCE;
	return post_one(endpoint, op, opcode, result, 8, remote_handle, remote_address,
			compare_add, swap);
}

int mca_btl_sctp_atomic_fop(struct mca_btl_base_module_t *btl,
			    struct mca_btl_base_endpoint_t *endpoint, void *local_address,
			    uint64_t remote_address,
			    struct mca_btl_base_registration_handle_t *local_handle,
			    struct mca_btl_base_registration_handle_t *remote_handle,
			    mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
			    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
	(void)order;
	if (MCA_BTL_ATOMIC_ADD != op)
		return OPAL_ERR_NOT_SUPPORTED;
	return atomic64(btl, endpoint, local_address, remote_address, local_handle, remote_handle,
			IW_WR_FETCH_ADD, operand, 0, flags, cbfunc, cbcontext, cbdata);
}

int mca_btl_sctp_atomic_op(struct mca_btl_base_module_t *btl,
			   struct mca_btl_base_endpoint_t *endpoint, uint64_t remote_address,
			   struct mca_btl_base_registration_handle_t *remote_handle,
			   mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
			   mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
	(void)order;
	if (MCA_BTL_ATOMIC_ADD != op)
		return OPAL_ERR_NOT_SUPPORTED;
	return atomic64(btl, endpoint, NULL, remote_address, NULL, remote_handle, IW_WR_FETCH_ADD,
			operand, 0, flags, cbfunc, cbcontext, cbdata);
}

int mca_btl_sctp_atomic_cswap(struct mca_btl_base_module_t *btl,
			      struct mca_btl_base_endpoint_t *endpoint, void *local_address,
			      uint64_t remote_address,
			      struct mca_btl_base_registration_handle_t *local_handle,
			      struct mca_btl_base_registration_handle_t *remote_handle,
			      uint64_t compare, uint64_t value, int flags, int order,
			      mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
			      void *cbdata)
{
	(void)order;
	return atomic64(btl, endpoint, local_address, remote_address, local_handle, remote_handle,
			IW_WR_COMP_SWAP, compare, value, flags, cbfunc, cbcontext, cbdata);
}

/*
 * Reaps completions and calls the operations' callbacks; returns how many finished. The RNIC
 * moves by itself when segments or send completions arrive and when work is posted (the
 * core's completions and iw_post_send run its engine), and only our own operations complete
 * into our CQ: with none outstanding it is looked at every RDMA_IDLE_EVERY calls only (a
 * Terminate nobody asked for, an engine that found no free slot), which keeps its locks off
 * the path of every same-host message.
 */
#define RDMA_IDLE_EVERY 64

/* One of the completions op waits for: the last one calls its callback and frees it. */
static int op_done(struct sctp_rdma_op *op)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	mca_btl_sctp_endpoint_t *endpoint = op->endpoint;

	if (0 != OPAL_THREAD_ADD_FETCH32(&op->waits, -1))
		return 0;
	if (NULL != op->cbfunc)
		op->cbfunc(&mca_btl_sctp_module.super, endpoint, op->local_address, op->local_handle,
			   op->cbcontext, op->cbdata, op->status);
	/* after the callback: a flush waiting on it sees it done */
	OPAL_THREAD_ADD_FETCH32(&endpoint->rdma_ops, -1);
	OPAL_THREAD_ADD_FETCH32(&c->rdma_ops, -1);
	free(op);
	return 1;
}

/* A fence returned: the puts behind it are placed (or failed with it); the puts posted since
 * get the next fence. */
static int fence_done(struct sctp_rdma_op *fence)
{
	mca_btl_sctp_endpoint_t *endpoint = fence->endpoint;
	struct sctp_rdma_op *put = fence->fenced, *next;
	int count = 0, more;

	for (; NULL != put; put = next) {
		next = put->next;
		if (OPAL_SUCCESS == put->status)
			put->status = fence->status;
		count += op_done(put);
	}
	OPAL_THREAD_LOCK(&endpoint->flush_lock);
	more = 0 == --endpoint->fences && NULL != endpoint->unfenced;
	OPAL_THREAD_UNLOCK(&endpoint->flush_lock);
	if (more)
		(void)fence_post(endpoint);
	return count;
}

/* Posts the fences that could not be posted before (no memory, a full send queue). */
static void __attribute__((noinline)) fence_retry(mca_btl_sctp_component_t *c)
{
	mca_btl_sctp_module_t *m = &mca_btl_sctp_module;
	mca_btl_sctp_endpoint_t *e;

	c->fence_retry = 0;
	OPAL_THREAD_LOCK(&m->endpoints_lock);
	OPAL_LIST_FOREACH (e, &m->endpoints, mca_btl_sctp_endpoint_t)
		if (NULL != e->unfenced && 0 == e->fences)
			(void)fence_post(e);
	OPAL_THREAD_UNLOCK(&m->endpoints_lock);
}

/* The completions: out of line, so that the idle check below builds no stack frame for them
 * (it runs on every turn of Open MPI's progress loop). */
static int __attribute__((noinline)) rdma_poll(mca_btl_sctp_component_t *c)
{
	struct iw_wc wc[16];
	int n, count = 0;

	iw_progress(c->rnic);
	while ((n = iw_poll_cq(c->cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			struct sctp_rdma_op *op;

			if (0 == wc[i].wr_id) {
				/* a Terminate with nothing of ours outstanding */
				opal_output(0, "btl sctp: RDMA queue pair %u failed (terminate layer %u "
					    "type %u code %#x)", wc[i].qpn, wc[i].term.layer,
					    wc[i].term.etype, wc[i].term.ecode);
				continue;
			}
			op = (struct sctp_rdma_op *)(uintptr_t)wc[i].wr_id;
			if (IW_WC_SUCCESS != wc[i].status && OPAL_SUCCESS == op->status)
				op->status = IW_WC_PEER_LOST == wc[i].status ? OPAL_ERR_UNREACH
									      : OPAL_ERROR;
			if (OPAL_SUCCESS != op->status)
				opal_output(0, "btl sctp: RDMA operation to %s failed (iWARP status %d, "
					    "terminate layer %u type %u code %#x)",
					    op->endpoint->proc->name, (int)wc[i].status,
					    wc[i].term.layer, wc[i].term.etype, wc[i].term.ecode);
			if (NULL != op->fenced)
				count += fence_done(op);
			count += op_done(op);
		}
	}
	if (c->fence_retry)
		fence_retry(c);
	return count;
}

int mca_btl_sctp_rdma_progress(void)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

	if (NULL == c->rnic || (0 == c->rdma_ops && ++c->rdma_idle % RDMA_IDLE_EVERY))
		return 0;
	return rdma_poll(c);
}
