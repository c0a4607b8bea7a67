/*
 * The provider's entry point (fi_prov_ini), its parameters (FI_SCTP_*, listed by `fi_info -e`)
 * and fi_getinfo: what it offers, checked against the application's hints field by field.
 * A hint the provider cannot honour means no fi_info (-FI_ENODATA), never a silent downgrade.
 */
#include "sctp_prov.h"

#include <stdlib.h>
#include <string.h>

struct sctp_params sctp_params;

static void sctp_cleanup(void)
{
}

struct fi_provider sctp_prov = {
	.name = SCTP_PROV_NAME,
	.version = SCTP_PROV_VERSION,
	.fi_version = SCTP_FI_VERSION,
	.getinfo = sctp_getinfo,
	.fabric = sctp_fabric_open,
	.cleanup = sctp_cleanup,
};

/* ---- the fid operations nothing here offers ---- */

int sctp_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid, (void)bfid, (void)flags;
	return -FI_ENOSYS;
}

int sctp_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid, (void)command, (void)arg;
	return -FI_ENOSYS;
}

int sctp_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
	(void)fid, (void)name, (void)flags, (void)ops, (void)context;
	return -FI_ENOSYS;
}

int sctp_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid, (void)buf, (void)len;
	return -FI_ENOSYS;
}

int sctp_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context)
{
	(void)fid, (void)name, (void)flags, (void)ops, (void)context;
	return -FI_ENOSYS;
}

/* ---- fi_getinfo ---- */

static int mr_mode_ok(uint32_t version, const struct fi_info *h, uint64_t caps)
{
	int want = SCTP_MR_MODE;
	int user = h->domain_attr ? h->domain_attr->mr_mode : 0;

	if (!(caps & SCTP_RMA_CAPS))
		want = 0; /* sends and receives need no registration */
	if (FI_VERSION_LT(version, FI_VERSION(1, 5)))
		return want == 0 || user != FI_MR_SCALABLE;
	if (user & FI_MR_BASIC)
		return !(user & ~FI_MR_BASIC);
	if (user & FI_MR_SCALABLE)
		return want == 0 && !(user & ~FI_MR_SCALABLE);
	return (user & want) == want;
}

/* What a subset check on orderings means: the application asks for no more than SAS. */
#define SCTP_MSG_ORDER FI_ORDER_SAS

static int tx_ok(const struct fi_tx_attr *t)
{
	return !t || (!(t->caps & ~SCTP_TX_CAPS) && !(t->msg_order & ~SCTP_MSG_ORDER) &&
		      t->comp_order == FI_ORDER_NONE && t->inject_size <= sctp_params.inject_size &&
		      t->size <= SCTP_QUEUE_SIZE && t->iov_limit <= SCTP_IOV_LIMIT &&
		      t->rma_iov_limit <= 1);
}

static int rx_ok(const struct fi_rx_attr *r)
{
	return !r || (!(r->caps & ~SCTP_RX_CAPS) && !(r->msg_order & ~SCTP_MSG_ORDER) &&
		      r->comp_order == FI_ORDER_NONE && r->size <= SCTP_QUEUE_SIZE &&
		      r->iov_limit <= SCTP_IOV_LIMIT);
}

static int ep_ok(const struct fi_ep_attr *e)
{
	return !e || ((e->type == FI_EP_UNSPEC || e->type == FI_EP_RDM) &&
		      e->protocol == FI_PROTO_UNSPEC && e->max_msg_size <= SCTP_MAX_MSG &&
		      e->msg_prefix_size == 0 && e->tx_ctx_cnt <= 1 && e->rx_ctx_cnt <= 1 &&
		      e->max_order_raw_size == 0 && e->max_order_war_size == 0 &&
		      e->max_order_waw_size == 0 && e->auth_key_size == 0);
}

static int domain_ok(const struct fi_domain_attr *d)
{
	return !d || ((!d->name || strcmp(d->name, SCTP_PROV_NAME) == 0) &&
		      d->threading <= FI_THREAD_ENDPOINT && d->cq_data_size <= 8 &&
		      d->av_type <= FI_AV_TABLE && d->mr_iov_limit <= 1 &&
		      !(d->caps & ~(FI_LOCAL_COMM | FI_REMOTE_COMM)) && d->auth_key_size == 0 &&
		      d->tx_ctx_cnt <= 1 && d->rx_ctx_cnt <= 1 && d->max_ep_stx_ctx == 0 &&
		      d->max_ep_srx_ctx == 0 && d->ep_cnt <= SCTP_MAX_EPS);
}

static int fabric_ok(const struct fi_fabric_attr *f)
{
	return !f || ((!f->name || strcmp(f->name, SCTP_PROV_NAME) == 0) &&
		      (!f->prov_name || strcasecmp(f->prov_name, SCTP_PROV_NAME) == 0));
}

/* A destination given in the hints must be one of our names (fi_getname). */
static int dest_ok(const struct fi_info *h)
{
	struct sctp_addr a;

	return h->dest_addrlen == SCTP_ADDR_LEN &&
	       sctp_addr_decode(&a, h->dest_addr, SCTP_ADDR_LEN) == 0;
}

/* The capabilities the answer carries: the ones asked for (all when none were), less RMA
 * when the application cannot handle the registration modes RMA needs and did not ask for it
 * by name. Returns 0 when the hints cannot be met. */
static uint64_t pick_caps(uint32_t version, const struct fi_info *h)
{
	uint64_t caps;

	if (!h)
		return SCTP_CAPS;
	if (h->caps & ~SCTP_CAPS)
		return 0;
	caps = h->caps ? h->caps : SCTP_CAPS;
	if (!h->caps && !mr_mode_ok(version, h, caps))
		caps &= ~SCTP_RMA_CAPS;
	if (!mr_mode_ok(version, h, caps))
		return 0;
	return caps | FI_LOCAL_COMM | FI_REMOTE_COMM;
}

static struct fi_info *make_info(uint32_t version, const struct fi_info *h, uint64_t caps)
{
	struct fi_info *fi = fi_allocinfo();
	const struct fi_domain_attr *hd = h ? h->domain_attr : NULL;

	if (!fi)
		return NULL;
	fi->caps = caps;
	fi->mode = 0; /* FI_CONTEXT and friends are welcome, never needed */
	fi->addr_format = FI_FORMAT_UNSPEC;

	fi->tx_attr->caps = caps & SCTP_TX_CAPS;
	fi->tx_attr->op_flags = h && h->tx_attr ? h->tx_attr->op_flags : 0;
	fi->tx_attr->msg_order = SCTP_MSG_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = sctp_params.inject_size;
	fi->tx_attr->size = SCTP_QUEUE_SIZE;
	fi->tx_attr->iov_limit = SCTP_IOV_LIMIT;
	fi->tx_attr->rma_iov_limit = 1;

	fi->rx_attr->caps = caps & SCTP_RX_CAPS;
	fi->rx_attr->op_flags = h && h->rx_attr ? h->rx_attr->op_flags : 0;
	fi->rx_attr->msg_order = SCTP_MSG_ORDER;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = SCTP_QUEUE_SIZE;
	fi->rx_attr->iov_limit = SCTP_IOV_LIMIT;

	fi->ep_attr->type = FI_EP_RDM;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = SCTP_PROTO_VERSION;
	fi->ep_attr->max_msg_size = SCTP_MAX_MSG;
	fi->ep_attr->mem_tag_format = h && h->ep_attr && h->ep_attr->mem_tag_format ?
					      h->ep_attr->mem_tag_format : ~0ULL;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->domain_attr->name = strdup(SCTP_PROV_NAME);
	fi->domain_attr->threading = hd && hd->threading ? hd->threading : FI_THREAD_SAFE;
	fi->domain_attr->control_progress = hd && hd->control_progress ? hd->control_progress
								       : FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = hd && hd->data_progress ? hd->data_progress
								 : FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = hd && hd->resource_mgmt ? hd->resource_mgmt
								 : FI_RM_ENABLED;
	fi->domain_attr->av_type = hd ? hd->av_type : FI_AV_UNSPEC;
	if (caps & SCTP_RMA_CAPS)
		fi->domain_attr->mr_mode = FI_VERSION_LT(version, FI_VERSION(1, 5)) ||
						   (hd && hd->mr_mode == FI_MR_BASIC)
						   ? FI_MR_BASIC : SCTP_MR_MODE;
	else
		fi->domain_attr->mr_mode = 0;
	fi->domain_attr->mr_key_size = SCTP_MR_KEY_SIZE;
	fi->domain_attr->cq_data_size = 8;
	fi->domain_attr->cq_cnt = 1024;
	fi->domain_attr->ep_cnt = SCTP_MAX_EPS;
	fi->domain_attr->tx_ctx_cnt = 1;
	fi->domain_attr->rx_ctx_cnt = 1;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->cntr_cnt = 1024;
	fi->domain_attr->mr_iov_limit = 1;
	fi->domain_attr->mr_cnt = 65536;
	fi->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;

	fi->fabric_attr->name = strdup(SCTP_PROV_NAME);
	fi->fabric_attr->prov_version = SCTP_PROV_VERSION;
	fi->fabric_attr->api_version = version;
	if (!fi->domain_attr->name || !fi->fabric_attr->name) {
		fi_freeinfo(fi);
		return NULL;
	}
	return fi;
}

int sctp_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		 const struct fi_info *hints, struct fi_info **info)
{
	uint64_t caps;

	(void)node, (void)service, (void)flags; /* addresses come from fi_getname, not names */
	*info = NULL;
	if (hints) {
		const char *why = hints->addr_format != FI_FORMAT_UNSPEC ? "address format"
				  : !ep_ok(hints->ep_attr) ? "endpoint attributes"
				  : !tx_ok(hints->tx_attr) ? "transmit attributes"
				  : !rx_ok(hints->rx_attr) ? "receive attributes"
				  : !domain_ok(hints->domain_attr) ? "domain attributes"
				  : !fabric_ok(hints->fabric_attr) ? "fabric attributes"
				  : hints->src_addr ? "source address (bound per FI_SCTP_ADDRS)"
				  : hints->dest_addr && !dest_ok(hints) ? "destination address"
				  : hints->handle ? "handle" : NULL;
		if (why) {
			FI_INFO(&sctp_prov, FI_LOG_CORE, "hints not met: %s\n", why);
			return -FI_ENODATA;
		}
	}
	caps = pick_caps(version, hints);
	if (!caps) {
		FI_INFO(&sctp_prov, FI_LOG_CORE, "hints not met: capabilities or mr_mode\n");
		return -FI_ENODATA;
	}
	*info = make_info(version, hints, caps);
	return *info ? 0 : -FI_ENOMEM;
}

/* ---- entry point ---- */

static char *param_str(const char *name, const char *help)
{
	char *v = NULL;

	fi_param_define(&sctp_prov, name, FI_PARAM_STRING, "%s", help);
	if (fi_param_get_str(&sctp_prov, name, &v) != FI_SUCCESS)
		return NULL;
	return v;
}

static int param_int(const char *name, enum fi_param_type type, const char *help, int def)
{
	int v = def;

	fi_param_define(&sctp_prov, name, type, "%s", help);
	if (fi_param_get(&sctp_prov, name, &v) != FI_SUCCESS)
		return def;
	return v;
}

static size_t param_size(const char *name, const char *help, size_t def)
{
	size_t v = def;

	fi_param_define(&sctp_prov, name, FI_PARAM_SIZE_T, "%s", help);
	if (fi_param_get_size_t(&sctp_prov, name, &v) != FI_SUCCESS)
		return def;
	return v;
}

FI_EXT_INI
{
	struct sctpt_config def;

	sctpt_config_init(&def);
	sctp_params.addrs = param_str("addrs",
		"Comma-separated IPv4 addresses the domain's SCTP associations bind (multihoming: "
		"each becomes a path). Default: every up non-loopback IPv4 interface, else "
		"127.0.0.1");
	sctp_params.config_file = param_str("config_file",
		"Multihoming file, one line per host: \"host addr addr ...\"; this host's line "
		"(FI_SCTP_CONFIG_HOST, else the host name) is bound when FI_SCTP_ADDRS is unset");
	sctp_params.config_host = param_str("config_host",
		"Host name to look up in FI_SCTP_CONFIG_FILE (default: gethostname())");
	sctp_params.fnn_table = param_str("fnn_table",
		"Flat Neighborhood Network design table (\"switch: pc pc ...\", routing/fnn's `fnn "
		"design`). With FI_SCTP_FNN_ADDRS, each peer is striped over one SCTP association "
		"per switch the two hosts share; a rail that fails is dropped and its data re-sent "
		"on the others");
	sctp_params.fnn_addrs = param_str("fnn_addrs",
		"Address map of the FNN cluster for FI_SCTP_FNN_TABLE: lines \"pc nic ifname ipv4 "
		"mac\" (`fnn addrs`)");
	sctp_params.backend = param_str("backend",
		"SCTP engine of the core: native (the project's own) or usrsctp (default: "
		"SCTPT_BACKEND if set, else native)");
	sctp_params.streams = param_int("streams", FI_PARAM_INT,
		"SCTP streams per association (stream 0 is the core's control stream)",
		def.streams);
	sctp_params.cmt = param_int("cmt", FI_PARAM_BOOL,
		"SCTP concurrent multipath transfer over every path of an association", def.cmt);
	sctp_params.crc32c = param_int("crc32c", FI_PARAM_BOOL,
		"Compute and verify SCTP's CRC32c (off: the UDP checksum covers the packet; every "
		"process must agree)", def.crc32c);
	sctp_params.shm = param_int("shm", FI_PARAM_BOOL,
		"Same-host peers through the core's shared memory (off: SCTP for every peer; "
		"SCTPT_SHM sets the default)", def.shm);
	sctp_params.frag_size = param_size("frag_size",
		"Messages above this many bytes travel as fragments that interleave with other "
		"streams", def.frag_size);
	sctp_params.inject_size = param_size("inject_size",
		"Largest fi_inject payload (copied at the call)", SCTP_INJECT_SIZE);
	if (sctp_params.streams < 2 || sctp_params.streams > SCTPT_MAX_STREAMS)
		sctp_params.streams = def.streams;
	if (sctp_params.inject_size > 65536)
		sctp_params.inject_size = 65536;
	/* the core's upper bound counts our header too */
	if (sctp_params.frag_size < SCTPT_MIN_FRAG ||
	    sctp_params.frag_size > SCTPT_MAX_FRAG - SCTP_HDR_LEN)
		sctp_params.frag_size = def.frag_size;
	return &sctp_prov;
}
