/*
 * btl sctp: an Open MPI BTL that carries ob1's send/receive traffic over our SCTP transport core
 * (transport/sctpt.h). It is a thin adapter: the core owns associations, multihoming, streams,
 * fragmentation and retransmission; this component maps BTL descriptors onto core messages.
 *
 * Layout follows opal/mca/btl/tcp: component (discovery, MCA parameters, init, progress),
 * module (the BTL function table), endpoint (one peer), proc (a peer process and its business
 * card), frag (one message in flight), one file each.
 *
 * Completions: the core calls the component's handler (the endpoint's default one, for the BTL
 * tags) from sctpt_progress with no core lock held, so received messages go to ob1 and send
 * completions to their descriptors right there; ob1 may send from its callbacks. The iWARP
 * layer (btl_sctp_rdma.c) registers its own handler for its contexts.
 */
#ifndef MCA_BTL_SCTP_H
#define MCA_BTL_SCTP_H

#include "opal_config.h"
#include "opal/class/opal_free_list.h"
#include "opal/class/opal_list.h"
#include "opal/class/opal_pointer_array.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"
#include "opal/threads/mutex.h"

#include "sctpt.h"

struct iw_rnic;
struct iw_pd;
struct iw_cq;
struct iw_qp;

BEGIN_C_DECLS

/* Contiguous data up to this size (header included) is copied into a frag; larger data is
 * sent in place from the user's buffer. */
#define MCA_BTL_SCTP_PACK_MAX 4096
/* Room for ob1's largest header (mca_pml_ob1_hdr_t: 56 bytes in Open MPI 4.1), so that an
 * eager limit of 64 KiB + this lets 64 KiB messages go eager. */
#define MCA_BTL_SCTP_HDR_ROOM 64
/* The buffers of the eager free list: most messages are small, and a window of them in
 * buffers of the eager limit's size would spread over many more pages; messages between
 * this and the eager limit take frags of the max list. */
#define MCA_BTL_SCTP_EAGER_BUF (64 * 1024 + MCA_BTL_SCTP_HDR_ROOM)

/* One BTL module: the core endpoint binds every selected interface, so one module covers them.
 * A second one, with the same functions and endpoint, serves the processes of this host when
 * the core reaches them through shared memory: ob1 takes its eager limit per module, and
 * those peers are best served by a smaller one (the rest goes by RGET, one copy), as vader. */
struct mca_btl_sctp_module_t {
	mca_btl_base_module_t super;
	bool local;                                 /* the same-host peers' module */
	mca_btl_base_module_error_cb_fn_t error_cb; /* ob1's error handler */
	opal_list_t endpoints;                      /* every endpoint created by add_procs */
	opal_mutex_t endpoints_lock;
	bool ob1_checked;                           /* mca_btl_sctp_frag_check_ob1 ran */
};
typedef struct mca_btl_sctp_module_t mca_btl_sctp_module_t;

extern mca_btl_sctp_module_t mca_btl_sctp_module;
extern mca_btl_sctp_module_t mca_btl_sctp_local_module;

struct mca_btl_sctp_component_t {
	mca_btl_base_component_3_0_0_t super;

	/* MCA parameters (registered in btl_sctp_component.c, each with its help text) */
	char *if_include;        /* interfaces/CIDR networks to bind, as btl_tcp_if_include */
	char *if_exclude;        /* ... to leave out, as btl_tcp_if_exclude */
	char *config_file;       /* thesis-style multihoming file for the core */
	char *config_host;       /* the host name to look up in config_file */
	char *fnn_table;         /* FNN design table: stripe each peer over the shared switches */
	char *fnn_addrs;         /* ... and the cluster's address map (pc nic ifname ipv4 mac) */
	int streams;             /* SCTP streams per association */
	bool cmt;                /* concurrent multipath transfer */
	bool crc32c;             /* SCTP CRC32c instead of relying on the UDP checksum */
	int udp_port_min;        /* encapsulation port range start (0: any free port) */
	int udp_port_range;      /* ... and length */
	int frag_size;           /* core fragmentation threshold */
	int path_mtu;
	int rto_min, rto_max, rto_initial;
	int hb_interval;
	int path_max_retrans, assoc_max_retrans;
	int sndbuf, rcvbuf;
	int sack_delay, sack_freq;
	bool stream_per_tag;     /* spread ob1 matching traffic over streams by (context, tag) */
	bool ob1_headers;        /* ob1's header layout is the one compiled for: peek allowed */
	int free_list_num, free_list_max, free_list_inc;
	bool rdma;               /* put/get/atomics over the iWARP layer (for osc rdma) */
	int osc_buffer_size;     /* osc rdma's buffer_size unless the user gave one (0: keep) */
	int osc_max_amo;         /* osc rdma's network_max_amo, the same way */
	bool shm;                /* the core's shared memory to same-host peers */
	bool shm_get;            /* ob1's RGET to same-host peers (sctpt_peer_read) */
	bool rget;               /* ob1's RGET to peers over SCTP (btl_sctp_rget.c) */
	int shm_ring, shm_pull_min; /* the core's cfg.shm_ring, cfg.shm_pull_min */
	bool shm_lend;           /* the core's cfg.shm_lend */
	int shm_eager_limit;     /* the same-host module's eager limit (0: no such module) */
	bool local_module;       /* ... it is in use */

	/* state */
	struct sctpt_ep *ep;            /* the core endpoint, NULL until init */
	struct mca_btl_sctp_fnn *fnn;   /* loaded fnn_table and fnn_addrs, NULL: no striping */
	char card[SCTPT_CARD_MAX];      /* our business card, published through the modex */
	opal_free_list_t frag_eager;    /* frags with eager_buf bytes of buffer */
	opal_free_list_t frag_max;      /* frags with max_send_size bytes of buffer */
	size_t eager_buf;               /* MCA_BTL_SCTP_EAGER_BUF, or a smaller eager limit */
	opal_free_list_t frag_user;     /* frags without a buffer (send in place, big receives) */
	opal_pointer_array_t peers;     /* sctpt_peer_t -> endpoint */
	volatile bool closing;          /* the module is finalized: completions no longer reach
					 * ob1, they only give our frags back */
	struct iw_rnic *rnic;           /* RDMA (btl_sctp_rdma.c), NULL when off */
	struct mca_rcache_base_module_t *rcache; /* registration cache (grdma) */
	struct iw_pd *pd;
	struct iw_cq *cq;
	uint32_t local_stag;            /* local-only STag over the address space */
	volatile int32_t rdma_ops;      /* our RDMA operations posted and not completed */
	unsigned rdma_idle;             /* progress calls since the RNIC was last looked at */
	volatile int32_t fence_retry;   /* a fence Read could not be posted: progress posts it */
	volatile int64_t process_copies; /* gets and puts done on same-host peers' memory */
	volatile int32_t job_added;      /* the job's cards were given to the core */
	sctpt_peer_t *job_peers;         /* ... the core's peer of each rank (-1: none), NULL
					  * while the job's size is unknown; under qp_lock */
	uint32_t job_size;
	struct iw_qp **qps;              /* the QP towards rank r at r + 1, NULL: none yet */
	volatile bool job_qps;           /* every rank in job_peers has its QP */
	opal_mutex_t qp_lock;            /* job_peers, qps, job_qps */
	volatile int32_t rget_inflight;  /* get requests and get data queued in the core */
	volatile int64_t rgets, rget_served; /* gets over SCTP done here, and served for peers */
};
typedef struct mca_btl_sctp_component_t mca_btl_sctp_component_t;

OPAL_MODULE_DECLSPEC extern mca_btl_sctp_component_t mca_btl_sctp_component;

/* component */
int mca_btl_sctp_component_progress(void);
/* Closes RDMA and the core endpoint; completions after this only return our frags. */
void mca_btl_sctp_component_close_endpoint(void);
/* A peer we cannot talk to any more, or a message we cannot deliver: prints why and calls ob1's
 * error handler (fatal: the job ends with the message instead of hanging). Once per peer; not
 * while the module is closing. */
void mca_btl_sctp_report_fatal(struct mca_btl_base_endpoint_t *endpoint, int error,
			       const char *what);

/* module function table (btl_sctp.c) */
int mca_btl_sctp_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
			   struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
			   opal_bitmap_t *reachable);
int mca_btl_sctp_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
			   struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers);
int mca_btl_sctp_finalize(struct mca_btl_base_module_t *btl);
mca_btl_base_descriptor_t *mca_btl_sctp_alloc(struct mca_btl_base_module_t *btl,
					      struct mca_btl_base_endpoint_t *endpoint,
					      uint8_t order, size_t size, uint32_t flags);
int mca_btl_sctp_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_sctp_prepare_src(struct mca_btl_base_module_t *btl,
						    struct mca_btl_base_endpoint_t *endpoint,
						    struct opal_convertor_t *convertor,
						    uint8_t order, size_t reserve, size_t *size,
						    uint32_t flags);
int mca_btl_sctp_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
		      struct mca_btl_base_descriptor_t *des, mca_btl_base_tag_t tag);
int mca_btl_sctp_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
		       struct opal_convertor_t *convertor, void *header, size_t header_size,
		       size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
		       mca_btl_base_descriptor_t **descriptor);
int mca_btl_sctp_register_error(struct mca_btl_base_module_t *btl,
				mca_btl_base_module_error_cb_fn_t cbfunc);

/* RDMA over the iWARP layer (btl_sctp_rdma.c) */
struct mca_btl_base_endpoint_t;
int mca_btl_sctp_rdma_open(void);
void mca_btl_sctp_rdma_close(void);
int mca_btl_sctp_rdma_progress(void);
int mca_btl_sctp_rdma_endpoint_init(struct mca_btl_base_endpoint_t *endpoint);
size_t mca_btl_sctp_rdma_handle_size(void);
/* Before osc rdma registers its parameters: defaults for its buffer_size and
 * network_max_amo (0: keep osc rdma's), unless the user set them. */
void mca_btl_sctp_osc_defaults(int buffer_size, int max_amo);
/* The module offers btl_get (same-host peers' memory, whether or not iWARP RDMA is on), with
 * the defaults of its limits (before the BTL base registers them as parameters). */
void mca_btl_sctp_flags_get(mca_btl_base_module_t *m);
mca_btl_base_registration_handle_t *mca_btl_sctp_register_mem(struct mca_btl_base_module_t *btl,
							       struct mca_btl_base_endpoint_t *endpoint,
							       void *base, size_t size, uint32_t flags);
int mca_btl_sctp_deregister_mem(struct mca_btl_base_module_t *btl,
				mca_btl_base_registration_handle_t *handle);
int mca_btl_sctp_put(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
		     void *local_address, uint64_t remote_address,
		     struct mca_btl_base_registration_handle_t *local_handle,
		     struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
		     int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
		     void *cbcontext, void *cbdata);
int mca_btl_sctp_flush(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint);
int mca_btl_sctp_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
		     void *local_address, uint64_t remote_address,
		     struct mca_btl_base_registration_handle_t *local_handle,
		     struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
		     int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
		     void *cbcontext, void *cbdata);
int mca_btl_sctp_atomic_fop(struct mca_btl_base_module_t *btl,
			    struct mca_btl_base_endpoint_t *endpoint, void *local_address,
			    uint64_t remote_address,
			    struct mca_btl_base_registration_handle_t *local_handle,
			    struct mca_btl_base_registration_handle_t *remote_handle,
			    mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
			    mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
int mca_btl_sctp_atomic_op(struct mca_btl_base_module_t *btl,
			   struct mca_btl_base_endpoint_t *endpoint, uint64_t remote_address,
			   struct mca_btl_base_registration_handle_t *remote_handle,
			   mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
			   mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
int mca_btl_sctp_atomic_cswap(struct mca_btl_base_module_t *btl,
			      struct mca_btl_base_endpoint_t *endpoint, void *local_address,
			      uint64_t remote_address,
			      struct mca_btl_base_registration_handle_t *local_handle,
			      struct mca_btl_base_registration_handle_t *remote_handle,
			      uint64_t compare, uint64_t value, int flags, int order,
			      mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
			      void *cbdata);

END_C_DECLS
#endif /* MCA_BTL_SCTP_H */
