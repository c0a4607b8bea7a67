/*
 * btl sctp module: the BTL function table. ob1 runs its eager protocol up to
 * btl_sctp_eager_limit and its send-based rendezvous pipeline above, in frags of at most
 * btl_sctp_max_send_size bytes, each one core message. Put, get and atomics
 * (btl_sctp_rdma.c) serve one-sided communication (osc rdma), not ob1.
 */
#include "btl_sctp.h"
#include "btl_sctp_endpoint.h"
#include "btl_sctp_frag.h"
#include "btl_sctp_proc.h"
#include "btl_sctp_rget.h"
#include "iw/iw_verbs.h"

#include <stdlib.h>
#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "opal/util/output.h"
#include "opal/mca/hwloc/hwloc-internal.h"
#include "opal/util/proc.h"

static mca_btl_base_registration_handle_t *sctp_register_mem(struct mca_btl_base_module_t *btl,
							     struct mca_btl_base_endpoint_t *endpoint,
							     void *base, size_t size, uint32_t flags);
static int sctp_deregister_mem(struct mca_btl_base_module_t *btl,
			       mca_btl_base_registration_handle_t *handle);
static int sctp_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
		    void *local_address, uint64_t remote_address,
		    struct mca_btl_base_registration_handle_t *local_handle,
		    struct mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
		    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
		    void *cbdata);

mca_btl_sctp_module_t mca_btl_sctp_module = {
	.super = {
		.btl_component = &mca_btl_sctp_component.super,
		.btl_add_procs = mca_btl_sctp_add_procs,
		.btl_del_procs = mca_btl_sctp_del_procs,
		.btl_finalize = mca_btl_sctp_finalize,
		.btl_alloc = mca_btl_sctp_alloc,
		.btl_free = mca_btl_sctp_free,
		.btl_prepare_src = mca_btl_sctp_prepare_src,
		.btl_send = mca_btl_sctp_send,
		.btl_sendi = mca_btl_sctp_sendi,
		.btl_dump = mca_btl_base_dump,
		.btl_register_error = mca_btl_sctp_register_error,
		/* RDMA over the iWARP layer; the component clears the flags when it is off. Gets
		 * and registrations also serve ob1's RGET (same-host peers' memory, or the
		 * streams: btl_sctp_rget.c) */
		.btl_put = mca_btl_sctp_put,
		.btl_flush = mca_btl_sctp_flush,
		.btl_get = sctp_get,
		.btl_atomic_op = mca_btl_sctp_atomic_op,
		.btl_atomic_fop = mca_btl_sctp_atomic_fop,
		.btl_atomic_cswap = mca_btl_sctp_atomic_cswap,
		.btl_register_mem = sctp_register_mem,
		.btl_deregister_mem = sctp_deregister_mem,
	},
	.error_cb = NULL,
};

/* Filled in by the component's init from mca_btl_sctp_module, with limits of its own. */
mca_btl_sctp_module_t mca_btl_sctp_local_module;

/* ob1's registrations with peers over SCTP are the streams' (btl_sctp_rget.c), the rest
 * iWARP's or the process path's (btl_sctp_rdma.c). */
static mca_btl_base_registration_handle_t *sctp_register_mem(struct mca_btl_base_module_t *btl,
							     struct mca_btl_base_endpoint_t *endpoint,
							     void *base, size_t size, uint32_t flags)
{
	mca_btl_base_registration_handle_t *handle;

	if (NULL != base && 0 != size && mca_btl_sctp_rget_register(endpoint, flags, &handle))
		return handle;
	return mca_btl_sctp_register_mem(btl, endpoint, base, size, flags);
}

static int sctp_deregister_mem(struct mca_btl_base_module_t *btl,
			       mca_btl_base_registration_handle_t *handle)
{
	if (mca_btl_sctp_rget_own_handle(handle))
		return OPAL_SUCCESS;
	return mca_btl_sctp_deregister_mem(btl, handle);
}

static int sctp_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
		    void *local_address, uint64_t remote_address,
		    struct mca_btl_base_registration_handle_t *local_handle,
		    struct mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
		    int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
		    void *cbdata)
{
	if (mca_btl_sctp_rget_handle(remote_handle))
		return mca_btl_sctp_rget_get(btl, endpoint, local_address, remote_address,
					     local_handle, size, cbfunc, cbcontext, cbdata);
	return mca_btl_sctp_get(btl, endpoint, local_address, remote_address, local_handle,
				remote_handle, size, flags, order, cbfunc, cbcontext, cbdata);
}

/* The endpoint of proc: an existing one if the core already knows its card, else a new one. */
static int sctp_endpoint_for(mca_btl_sctp_module_t *m, opal_proc_t *proc,
			     mca_btl_sctp_endpoint_t **out)
{
	mca_btl_sctp_proc_t *p;
	mca_btl_sctp_endpoint_t *ep;
	sctpt_peer_t peer;
	int rc;

	*out = NULL;
	rc = mca_btl_sctp_proc_create(proc, &p);
	if (OPAL_SUCCESS != rc)
		return rc;
	peer = sctpt_peer_add(mca_btl_sctp_component.ep, p->card);
	if (peer < 0) {
		opal_output(0, "btl sctp: cannot add peer %s (card \"%s\"): %s", p->name, p->card,
			    sctpt_last_error());
		OBJ_RELEASE(p);
		return OPAL_ERR_UNREACH;
	}
	ep = opal_pointer_array_get_item(&mca_btl_sctp_component.peers, peer);
	if (NULL != ep) {
		OBJ_RELEASE(p);
		*out = ep;
		return OPAL_SUCCESS;
	}
	rc = mca_btl_sctp_endpoint_create(m, p, peer, &ep);
	OBJ_RELEASE(p); /* the endpoint holds its own reference */
	if (OPAL_SUCCESS != rc)
		return rc;
	opal_list_append(&m->endpoints, &ep->super);
	opal_pointer_array_set_item(&mca_btl_sctp_component.peers, peer, ep);
	*out = ep;
	return OPAL_SUCCESS;
}

int mca_btl_sctp_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
			   struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
			   opal_bitmap_t *reachable)
{
	mca_btl_sctp_module_t *m = (mca_btl_sctp_module_t *)btl;
	opal_proc_t *self = opal_proc_local_get();
	size_t i;

	/* the modex is complete from the first add_procs on */
	if (0 == OPAL_THREAD_SWAP_32(&mca_btl_sctp_component.job_added, 1))
		mca_btl_sctp_proc_add_job();
	OPAL_THREAD_LOCK(&m->endpoints_lock);
	/* BTLs start before the PML framework opens: ob1 is known from the first add_procs on */
	if (!m->ob1_checked) {
		mca_btl_sctp_frag_check_ob1();
		m->ob1_checked = true;
	}
	for (i = 0; i < nprocs; i++) {
		mca_btl_sctp_endpoint_t *ep;

		if (procs[i] == self)
			continue; /* btl self's job */
		/* with a same-host module, each process is one module's: never both */
		if (mca_btl_sctp_component.local_module &&
		    m->local != !!OPAL_PROC_ON_LOCAL_NODE(procs[i]->proc_flags))
			continue;
		if (OPAL_SUCCESS != sctp_endpoint_for(m, procs[i], &ep))
			continue; /* no card: the peer runs without sctp; others may reach it */
		/* its QP now, so that a peer's first RDMA segment finds it */
		(void)mca_btl_sctp_rdma_endpoint_init(ep);
		ep->in_use = 1;
		peers[i] = ep;
		if (NULL != reachable)
			opal_bitmap_set_bit(reachable, (int)i);
	}
	OPAL_THREAD_UNLOCK(&m->endpoints_lock);
	return OPAL_SUCCESS;
}

/* Endpoints stay until finalize: the core keeps its peer entry, and a later add_procs of the
 * same process (a new communicator) finds the endpoint again. Once ob1 let a peer go (as in
 * MPI_Finalize) losing it is no longer an error. */
int mca_btl_sctp_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
			   struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
	(void)btl;
	(void)procs;
	for (size_t i = 0; i < nprocs; i++)
		if (NULL != peers && NULL != peers[i])
			peers[i]->in_use = 0;
	return OPAL_SUCCESS;
}

/* At btl_base_verbose >= 20: what the core carried to each peer, and on which streams. */
static void sctp_dump_peers(mca_btl_sctp_module_t *m, struct sctpt_ep *ep,
			    struct sctpt_peer_stats *st)
{
	mca_btl_sctp_endpoint_t *e;

	OPAL_LIST_FOREACH (e, &m->endpoints, mca_btl_sctp_endpoint_t) {
		char streams[256] = "";
		size_t len = 0;

		if (sctpt_peer_stats(ep, e->peer, st) < 0)
			continue;
		for (int i = 0; i < SCTPT_MAX_STREAMS && len < sizeof(streams) - 24; i++)
			if (st->stream_msgs_sent[i])
				len += (size_t)snprintf(streams + len, sizeof(streams) - len, " %d:%llu", i,
							(unsigned long long)st->stream_msgs_sent[i]);
		opal_output(0, "btl sctp: stats for %s: sent %llu msgs %llu bytes, received %llu msgs "
			    "%llu bytes, %d paths, shared memory %s, %llu read in place, %llu pulled, "
			    "msgs per stream:%s", e->proc->name, (unsigned long long)st->msgs_sent,
			    (unsigned long long)st->bytes_sent, (unsigned long long)st->msgs_recv,
			    (unsigned long long)st->bytes_recv, st->npaths,
			    (const char *[]){"none", "out", "in", "both"}[st->shm & 3],
			    (unsigned long long)st->shm_lent, (unsigned long long)st->shm_pulls, streams);
	}
}

/* The peers of both modules, before the endpoint closes. */
static void sctp_dump_stats(struct sctpt_ep *ep)
{
	struct sctpt_peer_stats *st;

	if (opal_output_get_verbosity(opal_btl_base_framework.framework_output) < 20 ||
	    NULL == (st = malloc(sizeof(*st))))
		return;
	sctp_dump_peers(&mca_btl_sctp_module, ep, st);
	if (mca_btl_sctp_component.local_module)
		sctp_dump_peers(&mca_btl_sctp_local_module, ep, st);
	free(st);
	if (mca_btl_sctp_component.shm_get)
		opal_output(0, "btl sctp: %lld gets and puts on same-host peers' memory",
			    (long long)mca_btl_sctp_component.process_copies);
	if (mca_btl_sctp_component.rget)
		opal_output(0, "btl sctp: %lld gets over SCTP done, %lld served for peers",
			    (long long)mca_btl_sctp_component.rgets,
			    (long long)mca_btl_sctp_component.rget_served);
	if (NULL != mca_btl_sctp_component.rnic) {
		struct iw_rnic_stats is;

		if (0 == iw_rnic_stats(mca_btl_sctp_component.rnic, &is))
			opal_output(0, "btl sctp: rdma: %llu segments sent, %llu received, %llu bytes "
				    "placed, %llu terminates sent, %llu received",
				    (unsigned long long)is.segs_sent, (unsigned long long)is.segs_recv,
				    (unsigned long long)is.bytes_placed,
				    (unsigned long long)is.terms_sent, (unsigned long long)is.terms_recv);
	}
}

int mca_btl_sctp_finalize(struct mca_btl_base_module_t *btl)
{
	mca_btl_sctp_module_t *m = (mca_btl_sctp_module_t *)btl;
	struct sctpt_ep *ep = mca_btl_sctp_component.ep;
	opal_list_item_t *item;

	/* the first module finalized closes the endpoint for both: the other one's endpoints
	 * then see no more traffic until its own finalize releases them */
	if (NULL != ep)
		sctp_dump_stats(ep);
	mca_btl_sctp_component_close_endpoint();
	OPAL_THREAD_LOCK(&m->endpoints_lock);
	while (NULL != (item = opal_list_remove_first(&m->endpoints))) {
		mca_btl_sctp_endpoint_t *e = (mca_btl_sctp_endpoint_t *)item;

		/* the core completes each queued send once, the close cancelling the rest */
		if (0 != e->inflight)
			opal_output(0, "btl sctp: %d sends to %s left without their completion",
				    (int)e->inflight, e->proc->name);
		opal_pointer_array_set_item(&mca_btl_sctp_component.peers, e->peer, NULL);
		OBJ_RELEASE(item);
	}
	OPAL_THREAD_UNLOCK(&m->endpoints_lock);
	if (NULL != ep && 0 != mca_btl_sctp_component.rget_inflight)
		opal_output(0, "btl sctp: %d sends of gets left without their completion",
			    (int)mca_btl_sctp_component.rget_inflight);
	return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_sctp_alloc(struct mca_btl_base_module_t *btl,
					      struct mca_btl_base_endpoint_t *endpoint,
					      uint8_t order, size_t size, uint32_t flags)
{
	mca_btl_sctp_frag_t *frag;

	(void)endpoint;
	(void)order;
	if (OPAL_UNLIKELY(size > btl->btl_max_send_size))
		return NULL;
	frag = mca_btl_sctp_frag_alloc(size);
	if (OPAL_UNLIKELY(NULL == frag))
		return NULL;
	frag->segments[0].seg_len = size;
	frag->base.des_flags = flags;
	return &frag->base;
}

int mca_btl_sctp_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
	(void)btl;
	mca_btl_sctp_frag_return((mca_btl_sctp_frag_t *)des);
	return OPAL_SUCCESS;
}

/*
 * reserve bytes of header room plus up to *size bytes of data. Data that needs packing is
 * copied behind the header; contiguous data is sent in place as a second segment (the core
 * either copies it before sctpt_send returns 1, or keeps it until send_done).
 */
mca_btl_base_descriptor_t *mca_btl_sctp_prepare_src(struct mca_btl_base_module_t *btl,
						    struct mca_btl_base_endpoint_t *endpoint,
						    struct opal_convertor_t *convertor,
						    uint8_t order, size_t reserve, size_t *size,
						    uint32_t flags)
{
	mca_btl_sctp_frag_t *frag;
	struct iovec iov;
	uint32_t iov_count = 1;
	size_t max_data = *size;
	bool pack = opal_convertor_need_buffers(convertor);

	(void)endpoint;
	(void)order;
	if (reserve + max_data > btl->btl_max_send_size)
		max_data = btl->btl_max_send_size - reserve;
	/* small contiguous data: one copy is cheaper than a second segment; larger data goes in
	 * place (the core copies it into SCTP at once, or keeps it until its completion) */
	if (reserve + max_data <= MCA_BTL_SCTP_PACK_MAX)
		pack = true;
	frag = mca_btl_sctp_frag_alloc(pack ? reserve + max_data : reserve);
	if (OPAL_UNLIKELY(NULL == frag))
		return NULL;
	frag->segments[0].seg_len = reserve;
	iov.iov_len = max_data;
	iov.iov_base = pack ? (IOVBASE_TYPE *)(frag->buf + reserve) : NULL;
	if (OPAL_UNLIKELY(opal_convertor_pack(convertor, &iov, &iov_count, &max_data) < 0)) {
		mca_btl_sctp_frag_return(frag);
		return NULL;
	}
	if (pack) {
		frag->segments[0].seg_len += max_data;
	} else {
		frag->segments[1].seg_addr.pval = iov.iov_base;
		frag->segments[1].seg_len = max_data;
		frag->base.des_segment_count = 2;
	}
	frag->base.des_flags = flags;
	*size = max_data;
	return &frag->base;
}

int mca_btl_sctp_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
		      struct mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag)
{
	mca_btl_sctp_frag_t *frag = (mca_btl_sctp_frag_t *)des;
	int rc;

	rc = mca_btl_sctp_endpoint_send(endpoint, frag, tag);
	if (1 == rc) {
		/* handed to SCTP already: complete now, as tcp does for an immediate write */
		int owned = des->des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
		if (des->des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK)
			des->des_cbfunc(btl, endpoint, des, OPAL_SUCCESS);
		if (owned)
			mca_btl_sctp_frag_return(frag);
	}
	return rc;
}

#define SENDI_NOW_MAX 256

/* Header and payload packed into one eager frag and sent; the frag is ours throughout. */
int mca_btl_sctp_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
		       struct opal_convertor_t *convertor, void *header, size_t header_size,
		       size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
		       mca_btl_base_descriptor_t **descriptor)
{
	mca_btl_sctp_frag_t *frag;
	size_t max_data = payload_size;
	int rc;

	(void)order;
	if (NULL != descriptor)
		*descriptor = NULL;
	if (header_size + payload_size > btl->btl_eager_limit)
		return OPAL_ERR_RESOURCE_BUSY;
	if (((mca_btl_sctp_module_t *)btl)->local && header_size + payload_size <= SENDI_NOW_MAX) {
		/* a same-host peer: straight from here into its ring, if nothing waits before it.
		 * Written at once, it waits on no stream (nothing is queued to that peer): the
		 * control key spares the hash, and a fallback below picks the stream as usual */
		unsigned char data[SENDI_NOW_MAX];
		struct iovec iov[2] = {{header, header_size}, {data, 0}};
		size_t start = payload_size > 0 ? convertor->bConverted : 0;

		if (payload_size > 0) {
			struct iovec piov = {.iov_base = data, .iov_len = payload_size};
			uint32_t iov_count = 1;

			if (OPAL_UNLIKELY(opal_convertor_pack(convertor, &piov, &iov_count, &max_data) <
					  0))
				return OPAL_ERROR;
			iov[1].iov_len = max_data;
		}
		rc = sctpt_send(mca_btl_sctp_component.ep, endpoint->peer, tag, 0,
				SCTPT_SEND_UNORDERED | SCTPT_SEND_NOW, iov, 2, NULL);
		if (1 == rc)
			return OPAL_SUCCESS;
		/* something waits before it (or it failed): the usual way, which queues it
		 * behind or reports the failure */
		frag = mca_btl_sctp_frag_alloc(header_size + max_data);
		if (OPAL_UNLIKELY(NULL == frag)) {
			/* ob1 retries from its convertor (it resets it only when given a
			 * descriptor): leave it where we found it */
			if (payload_size > 0)
				opal_convertor_set_position(convertor, &start);
			return OPAL_ERR_RESOURCE_BUSY;
		}
		memcpy(frag->buf, header, header_size);
		if (max_data)
			memcpy(frag->buf + header_size, data, max_data);
		goto send;
	}
	frag = mca_btl_sctp_frag_alloc(header_size + payload_size);
	if (OPAL_UNLIKELY(NULL == frag))
		return OPAL_ERR_RESOURCE_BUSY;
	memcpy(frag->buf, header, header_size);
	if (payload_size > 0) {
		struct iovec iov = {.iov_base = frag->buf + header_size, .iov_len = payload_size};
		uint32_t iov_count = 1;

		if (OPAL_UNLIKELY(opal_convertor_pack(convertor, &iov, &iov_count, &max_data) < 0)) {
			mca_btl_sctp_frag_return(frag);
			return OPAL_ERROR;
		}
	}
send:
	frag->segments[0].seg_len = header_size + max_data;
	frag->base.des_flags = flags | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
	frag->base.des_cbfunc = NULL;
	rc = mca_btl_sctp_endpoint_send(endpoint, frag, tag);
	if (OPAL_SUCCESS == rc)
		return OPAL_SUCCESS; /* queued: its completion returns the frag */
	mca_btl_sctp_frag_return(frag); /* done (1) or failed: no completion will come */
	return 1 == rc ? OPAL_SUCCESS : rc;
}

int mca_btl_sctp_register_error(struct mca_btl_base_module_t *btl,
				mca_btl_base_module_error_cb_fn_t cbfunc)
{
	((mca_btl_sctp_module_t *)btl)->error_cb = cbfunc;
	return OPAL_SUCCESS;
}
