/*
 * btl sctp component: MCA parameters, the core endpoint, the modex, and progress.
 *
 * Every tunable is registered here with its help text and info level. Parameters that map to
 * the core's struct sctpt_config default to the core's own defaults (sctpt_config_init), so
 * `ompi_info --param btl sctp --level 9` shows what the core will really use.
 */
#include "btl_sctp.h"
#include "btl_sctp_endpoint.h"
#include "btl_sctp_frag.h"
#include "btl_sctp_proc.h"
#include "btl_sctp_rget.h"
#include "btl_sctp_rget_proto.h"
#include "fnn.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_params.h"
#include "opal/util/argv.h"
#include "opal/util/if.h"
#include "opal/util/net.h"
#include "opal/util/output.h"

static int sctp_component_register(void);
static int sctp_component_open(void);
static int sctp_component_close(void);
static void sctp_fnn_free(mca_btl_sctp_component_t *c);
static mca_btl_base_module_t **sctp_component_init(int *num_btls, bool enable_progress_threads,
						   bool enable_mpi_threads);

mca_btl_sctp_component_t mca_btl_sctp_component = {
	.super = {
		.btl_version = {
			MCA_BTL_DEFAULT_VERSION("sctp"),
			.mca_open_component = sctp_component_open,
			.mca_close_component = sctp_component_close,
			.mca_register_component_params = sctp_component_register,
		},
		.btl_data = {
			.param_field = MCA_BASE_METADATA_PARAM_NONE,
		},
		.btl_init = sctp_component_init,
		.btl_progress = mca_btl_sctp_component_progress,
	},
};

/* Default of btl_sctp_if_exclude: as tcp's, loopback and PPP links are left out. */
#define SCTP_IF_EXCLUDE_DEFAULT "127.0.0.1/8,sppp"

/*
 * Parameter registration helpers, as tcp's: the storage gets its default, then the MCA system
 * may overwrite it from the command line, the environment or a parameter file.
 */
static void reg_string(const char *name, const char *help, const char *def, int level,
		       char **storage)
{
	*storage = (char *)def;
	(void)mca_base_component_var_register(&mca_btl_sctp_component.super.btl_version, name,
					      help, MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, level,
					      MCA_BASE_VAR_SCOPE_READONLY, storage);
}

static void reg_int(const char *name, const char *help, int def, int level, int *storage)
{
	*storage = def;
	(void)mca_base_component_var_register(&mca_btl_sctp_component.super.btl_version, name,
					      help, MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, level,
					      MCA_BASE_VAR_SCOPE_READONLY, storage);
}

static void reg_bool(const char *name, const char *help, bool def, int level, bool *storage)
{
	*storage = def;
	(void)mca_base_component_var_register(&mca_btl_sctp_component.super.btl_version, name,
					      help, MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, level,
					      MCA_BASE_VAR_SCOPE_READONLY, storage);
}

static int sctp_component_register(void)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	mca_btl_base_module_t *m = &mca_btl_sctp_module.super;
	struct sctpt_config def;

	sctpt_config_init(&def);

	reg_string("if_include",
		   "Comma-delimited list of devices and/or CIDR notation of networks whose IPv4 "
		   "addresses the SCTP associations bind (multihoming: every match becomes a path, "
		   "e.g. \"eth0,eth1\" or \"192.168.0.0/16\"). Mutually exclusive with "
		   "btl_sctp_if_exclude.",
		   "", OPAL_INFO_LVL_1, &c->if_include);
	reg_string("if_exclude",
		   "Comma-delimited list of devices and/or CIDR notation of networks to NOT use -- "
		   "all other IPv4 interfaces are bound (e.g. \"eth0,192.168.0.0/16\"). If nothing "
		   "is left, 127.0.0.1 is used (single host). If set to a non-default value, it is "
		   "mutually exclusive with btl_sctp_if_include.",
		   SCTP_IF_EXCLUDE_DEFAULT, OPAL_INFO_LVL_1, &c->if_exclude);
	reg_string("config_file",
		   "Multihoming file as in the MPI-over-SCTP thesis: one line per host, \"host addr "
		   "addr ...\"; the line for this host (btl_sctp_config_host, else the host name) is "
		   "bound. Used when btl_sctp_if_include/if_exclude are left at their defaults.",
		   "", OPAL_INFO_LVL_3, &c->config_file);
	reg_string("config_host",
		   "Host name to look up in btl_sctp_config_file (default: gethostname())", "",
		   OPAL_INFO_LVL_5, &c->config_host);
	reg_string("fnn_table",
		   "Flat Neighborhood Network design table (\"switch: pc pc ...\", as routing/fnn's "
		   "`fnn design` writes it). With btl_sctp_fnn_addrs, each peer is striped over one "
		   "SCTP association per switch the two hosts share (fnn_stripe_pairs), and a rail "
		   "that fails is dropped and its data re-sent on the others. Hosts are found in the "
		   "address map by their addresses; peers not in it are not striped.",
		   "", OPAL_INFO_LVL_3, &c->fnn_table);
	reg_string("fnn_addrs",
		   "Address map of the FNN cluster for btl_sctp_fnn_table: lines \"pc nic ifname "
		   "ipv4 mac\" (`fnn addrs`, or test/testbed's fnn-cluster.sh state file).",
		   "", OPAL_INFO_LVL_3, &c->fnn_addrs);
	reg_int("streams",
		"SCTP streams per association (stream 0 is the core's control stream, stream 1 "
		"carries short control messages, the others carry MPI traffic hashed by "
		"communicator and tag)",
		def.streams, OPAL_INFO_LVL_4, &c->streams);
	reg_bool("cmt",
		 "Enable SCTP concurrent multipath transfer: stripe data over every path of a "
		 "multihomed association instead of using the primary path only",
		 0 != def.cmt, OPAL_INFO_LVL_3, &c->cmt);
	reg_bool("crc32c",
		 "Compute and verify SCTP's CRC32c; when off the UDP checksum covers the packet "
		 "(every process of the job must agree)",
		 0 != def.crc32c, OPAL_INFO_LVL_5, &c->crc32c);
	reg_int("udp_port_min",
		"Lowest UDP port of the SCTP-over-UDP encapsulation (0: any free port)", 0,
		OPAL_INFO_LVL_2, &c->udp_port_min);
	reg_int("udp_port_range",
		"Number of UDP ports starting at btl_sctp_udp_port_min that may be used", 1024,
		OPAL_INFO_LVL_2, &c->udp_port_range);
	reg_int("frag_size",
		"Core messages larger than this many bytes travel as fragments that interleave "
		"with other streams (default: an eager message of 64 KiB with ob1's header is one "
		"fragment)", 64 * 1024 + MCA_BTL_SCTP_HDR_ROOM, OPAL_INFO_LVL_5, &c->frag_size);
	reg_int("path_mtu", "Path MTU in bytes (0: from the interface MTU)", (int)def.path_mtu,
		OPAL_INFO_LVL_5, &c->path_mtu);
	reg_int("rto_min", "Minimum SCTP retransmission timeout (ms)", def.rto_min_ms,
		OPAL_INFO_LVL_5, &c->rto_min);
	reg_int("rto_max", "Maximum SCTP retransmission timeout (ms)", def.rto_max_ms,
		OPAL_INFO_LVL_5, &c->rto_max);
	reg_int("rto_initial", "Initial SCTP retransmission timeout (ms)", def.rto_initial_ms,
		OPAL_INFO_LVL_5, &c->rto_initial);
	reg_int("hb_interval", "SCTP heartbeat interval per path (ms)", def.hb_interval_ms,
		OPAL_INFO_LVL_5, &c->hb_interval);
	reg_int("path_max_retrans",
		"Failed transmissions before a path is declared down and traffic fails over",
		def.path_max_retrans, OPAL_INFO_LVL_4, &c->path_max_retrans);
	reg_int("assoc_max_retrans",
		"Failed transmissions before a peer is declared lost (the job then aborts with "
		"a message naming the peer)",
		def.assoc_max_retrans, OPAL_INFO_LVL_4, &c->assoc_max_retrans);
	reg_int("sndbuf", "SCTP send buffer size in bytes", (int)def.sndbuf, OPAL_INFO_LVL_4,
		&c->sndbuf);
	reg_int("rcvbuf", "SCTP receive buffer size in bytes", (int)def.rcvbuf, OPAL_INFO_LVL_4,
		&c->rcvbuf);
	reg_int("sack_delay", "SCTP delayed-SACK timer in ms (each direction has its own "
		"association, so SACKs never ride on reverse data)", def.sack_delay_ms,
		OPAL_INFO_LVL_5, &c->sack_delay);
	reg_int("sack_freq", "SCTP sends a SACK every this many packets", def.sack_freq,
		OPAL_INFO_LVL_5, &c->sack_freq);
	reg_bool("stream_per_tag",
		 "Choose the SCTP stream of each message from ob1's communicator and tag (and "
		 "data fragments from their request), so unrelated messages never wait behind a "
		 "large one -- if ob1 is the one of the Open MPI release this component was built "
		 "for, else from the BTL tag alone; when false, every message uses one stream",
		 true, OPAL_INFO_LVL_4, &c->stream_per_tag);
	reg_int("free_list_num", "Initial number of fragments of each free list", 8,
		OPAL_INFO_LVL_5, &c->free_list_num);
	reg_int("free_list_max", "Maximum number of fragments of each free list (-1: no limit)",
		-1, OPAL_INFO_LVL_5, &c->free_list_max);
	reg_int("free_list_inc", "Fragments added to a free list when it runs empty", 32,
		OPAL_INFO_LVL_5, &c->free_list_inc);
	reg_bool("rdma",
		 "Offer RDMA put/get and 64-bit atomics (fetch-add, compare-swap) over the "
		 "iWARP layer (RDMAP/DDP over the same SCTP associations) for one-sided "
		 "communication: --mca osc rdma --mca osc_rdma_btls sctp. Point-to-point "
		 "messages stay on the SCTP streams either way.",
		 true, OPAL_INFO_LVL_3, &c->rdma);
	reg_int("osc_buffer_size",
		"With btl_sctp_rdma: the default this BTL gives osc rdma's osc_rdma_buffer_size "
		"(through the environment, before osc rdma reads its parameters), unless the "
		"environment, the command line or an MCA parameter file sets it. osc rdma does an "
		"MPI_Accumulate that the BTL's atomics cannot do as get-op-put pieces of "
		"buffer_size / 8 bytes, each a blocking round trip: its own default, 32 KiB, makes "
		"a 1 MiB accumulate 256 round trips. 0: leave osc rdma's default",
		8 << 20, OPAL_INFO_LVL_4, &c->osc_buffer_size);
	reg_int("osc_max_amo",
		"With btl_sctp_rdma: the default this BTL gives osc rdma's "
		"osc_rdma_network_max_amo, as btl_sctp_osc_buffer_size. osc rdma does an "
		"MPI_Accumulate of up to that many 64-bit integers as one BTL atomic per element, "
		"waiting for each (a round trip per element; get-op-put costs one in all): its own "
		"default is 32. 0: leave osc rdma's default",
		0, OPAL_INFO_LVL_4, &c->osc_max_amo);
	if (c->rdma)
		mca_btl_sctp_osc_defaults(c->osc_buffer_size, c->osc_max_amo);

	reg_bool("shm",
		 "Reach processes on the same host through the core's shared memory (rings, large "
		 "messages read from the sender's buffer) instead of SCTP over an interface; "
		 "completions and ordering are the same. Off: every peer over SCTP (to measure or "
		 "test SCTP on one host). With btl vader, same-host traffic does not reach this BTL "
		 "anyway.", 0 != def.shm, OPAL_INFO_LVL_4, &c->shm);

	reg_int("shm_ring",
		"Bytes of each shared-memory ring a same-host peer writes our messages into (a "
		"power of two, 4 KiB to 64 MiB; one per ordered pair of processes that talk). A "
		"record holds at most a quarter of it (512 KiB lets a 64 KiB eager message be one "
		"record, read where it lies: more bandwidth at 64 KiB, but a larger ring is colder "
		"and costs latency at every size)",
		(int)def.shm_ring, OPAL_INFO_LVL_5, &c->shm_ring);
	reg_int("shm_pull_min",
		"Core messages to a same-host peer from this many bytes on are not copied through "
		"the ring: the receiver reads them from the sender's buffer (process_vm_readv). "
		"-1: above the eager limit (eager messages through the ring, read in place; larger "
		"ones by RGET, or pulled when RGET cannot be used); 0 forbids reading each other's "
		"memory altogether (no RGET either)",
		(int)def.shm_pull_min, OPAL_INFO_LVL_5, &c->shm_pull_min);
	reg_bool("shm_lend",
		 "Hand ob1 a message from a same-host peer where it lies in the ring (ob1 copies it "
		 "out before the callback returns, so that is the only copy on this side); off: the "
		 "core copies it into a buffer of its own first",
		 0 != def.shm_lend, OPAL_INFO_LVL_5, &c->shm_lend);
	reg_int("shm_eager_limit",
		"Eager limit towards processes of this host that the core reaches through shared "
		"memory: they get a BTL module of their own with it (larger messages by RGET, one "
		"copy, with btl_sctp_shm_get; else by ob1's rendezvous), as vader's small eager limit. "
		"0: no such module, every peer has btl_sctp_eager_limit",
		32 * 1024 + MCA_BTL_SCTP_HDR_ROOM, OPAL_INFO_LVL_5, &c->shm_eager_limit);
	reg_bool("shm_get",
		 "Messages above the eager limit to processes on the same host by ob1's RDMA get "
		 "protocol (RGET): the receiver copies the data straight from the sender's buffer "
		 "into its own (sctpt_peer_read, process_vm_readv: one copy). Off: through the "
		 "core's messages as to other hosts. Needs btl_sctp_shm; where the kernel does not "
		 "let processes read each other's memory ob1 keeps its send protocol.",
		 true, OPAL_INFO_LVL_4, &c->shm_get);
	reg_bool("rget",
		 "Messages above the eager limit to peers over SCTP (other hosts, or this host's "
		 "without btl_sctp_shm) from contiguous memory by ob1's RDMA get protocol (RGET): "
		 "the receiver asks for the data, the sender's BTL sends it from the user's buffer "
		 "and the receiver's core places it straight into the receive buffer, one copy "
		 "fewer than ob1's send pipeline (which copies each fragment out of the BTL's "
		 "buffer). Off: ob1's send pipeline in frags of btl_sctp_max_send_size.",
		 true, OPAL_INFO_LVL_4, &c->rget);

	/* The BTL's generic parameters: btl_sctp_eager_limit, _max_send_size, _exclusivity,
	 * _latency, _bandwidth, _flags, ... registered by the BTL base with these defaults. */
	m->btl_exclusivity = MCA_BTL_EXCLUSIVITY_LOW + 100;
	/* Messages up to 256 KiB go eager: the rendezvous (RNDV, the get's request, FIN) costs
	 * more round trips than the receiver's copy of 128 or 256 KiB out of the frag takes */
	m->btl_eager_limit = 256 * 1024 + MCA_BTL_SCTP_HDR_ROOM;
	m->btl_rndv_eager_limit = 256 * 1024 + MCA_BTL_SCTP_HDR_ROOM;
	m->btl_max_send_size = 256 * 1024;
	m->btl_rdma_pipeline_send_length = 256 * 1024;
	m->btl_rdma_pipeline_frag_size = 256 * 1024;
	m->btl_min_rdma_pipeline_size = 0;
	m->btl_atomic_flags = 0;
	m->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SEND_INPLACE;
	if (c->rdma) {
		m->btl_flags |= MCA_BTL_FLAGS_RDMA | MCA_BTL_FLAGS_ATOMIC_FOPS |
				MCA_BTL_FLAGS_ATOMIC_OPS;
		/* the target's RNIC applies them with CPU atomics: they mix with the CPU's */
		m->btl_atomic_flags = MCA_BTL_ATOMIC_SUPPORTS_ADD | MCA_BTL_ATOMIC_SUPPORTS_CSWAP |
				      MCA_BTL_ATOMIC_SUPPORTS_GLOB;
		m->btl_registration_handle_size = mca_btl_sctp_rdma_handle_size();
		m->btl_put_limit = m->btl_get_limit = 1u << 30; /* iWARP SGE lengths are 32-bit */
		m->btl_put_alignment = m->btl_get_alignment = 0;
		/* local buffers need no registration (a local-only STag covers them) */
		m->btl_put_local_registration_threshold = SIZE_MAX;
		m->btl_get_local_registration_threshold = SIZE_MAX;
		/* no RDMA pipeline for ob1's point-to-point (see btl_sctp_rdma.c) */
		m->btl_min_rdma_pipeline_size = SIZE_MAX;
	}
	if ((c->shm && c->shm_get) || c->rget)
		mca_btl_sctp_flags_get(m);
	m->btl_latency = 100;
	m->btl_bandwidth = 1000;
	/* latency and bandwidth are registered by the BTL base (we have btl_put) */
	return mca_btl_base_param_register(&c->super.btl_version, m);
}

static int sctp_component_open(void)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

	c->ep = NULL;
	c->card[0] = '\0';
	c->closing = false;
	c->rdma_ops = 0;
	c->rdma_idle = 0;
	c->fence_retry = 0;
	c->process_copies = 0;
	c->job_added = 0;
	c->job_peers = NULL;
	c->job_size = 0;
	c->qps = NULL;
	c->job_qps = false;
	OBJ_CONSTRUCT(&c->qp_lock, opal_mutex_t);
	c->rget_inflight = 0;
	c->rgets = c->rget_served = 0;
	c->ob1_headers = false;
	mca_btl_sctp_module.ob1_checked = false;
	c->local_module = false;
	OBJ_CONSTRUCT(&c->frag_eager, opal_free_list_t);
	OBJ_CONSTRUCT(&c->frag_max, opal_free_list_t);
	OBJ_CONSTRUCT(&c->frag_user, opal_free_list_t);
	OBJ_CONSTRUCT(&c->peers, opal_pointer_array_t);
	OBJ_CONSTRUCT(&mca_btl_sctp_module.endpoints, opal_list_t);
	OBJ_CONSTRUCT(&mca_btl_sctp_module.endpoints_lock, opal_mutex_t);
	opal_pointer_array_init(&c->peers, 16, INT32_MAX, 16);
	mca_btl_sctp_rget_open();
	return OPAL_SUCCESS;
}

static int sctp_component_close(void)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

	mca_btl_sctp_component_close_endpoint();
	mca_btl_sctp_rget_close();
	sctp_fnn_free(c);
	free(c->job_peers);
	c->job_peers = NULL;
	OBJ_DESTRUCT(&c->qp_lock);
	OBJ_DESTRUCT(&c->peers);
	OBJ_DESTRUCT(&c->frag_eager);
	OBJ_DESTRUCT(&c->frag_max);
	OBJ_DESTRUCT(&c->frag_user);
	OPAL_LIST_DESTRUCT(&mca_btl_sctp_module.endpoints);
	OBJ_DESTRUCT(&mca_btl_sctp_module.endpoints_lock);
	if (c->local_module) {
		OPAL_LIST_DESTRUCT(&mca_btl_sctp_local_module.endpoints);
		OBJ_DESTRUCT(&mca_btl_sctp_local_module.endpoints_lock);
		c->local_module = false;
	}
	return OPAL_SUCCESS;
}

static bool sctp_argv_has(char **argv, const char *s)
{
	for (; NULL != argv && NULL != *argv; argv++)
		if (0 == strcmp(*argv, s))
			return true;
	return false;
}

/* Is addr in the network net/bits? opal_net_samenetwork's mask for /32 shifts a 32-bit 1 by
 * 32 bits (zero on x86: every address would match), so /32 compares the addresses. */
static bool sctp_in_network(const struct sockaddr_in *net, long bits, const struct sockaddr *addr)
{
	if (32 == bits)
		return AF_INET == addr->sa_family &&
		       net->sin_addr.s_addr == ((const struct sockaddr_in *)addr)->sin_addr.s_addr;
	return opal_net_samenetwork((const struct sockaddr *)net, addr, (uint32_t)bits);
}

/*
 * btl_sctp_if_include or _exclude as device names, the way btl tcp reads its lists: an entry
 * starting with a letter is a device; else it must be an IPv4 network a.b.c.d/bits, which
 * stands for every device with an address in it. Networks become names here because
 * opal_ifmatches compares a network with its host bits set ("127.0.0.1/8") against the masked
 * address, so matches nothing, and looks only at a device's first address, an IPv6 one on a
 * dual-stack device. NULL when nothing is left.
 */
static char **sctp_if_names(const char *list, const char *which)
{
	char **entries = opal_argv_split(NULL != list ? list : "", ',');
	char **names = NULL;

	for (char **e = entries; NULL != e && NULL != *e; e++) {
		struct sockaddr_in net = {.sin_family = AF_INET};
		char *slash = strchr(*e, '/'), *end = NULL;
		long bits = -1;
		int matches = 0;

		if (isalpha((unsigned char)**e)) {
			if (!sctp_argv_has(names, *e))
				opal_argv_append_nosize(&names, *e);
			continue;
		}
		if (NULL != slash) {
			*slash = '\0';
			bits = strtol(slash + 1, &end, 10);
		}
		if (NULL == slash || '\0' != *end || bits < 1 || bits > 32 ||
		    1 != inet_pton(AF_INET, *e, &net.sin_addr)) {
			if (NULL != slash)
				*slash = '/';
			opal_output(0, "btl sctp: ignoring \"%s\" in btl_sctp_if_%s: neither a device "
				    "name nor an IPv4 network a.b.c.d/bits", *e, which);
			continue;
		}
		for (int idx = opal_ifbegin(); idx >= 0; idx = opal_ifnext(idx)) {
			struct sockaddr_storage ss;
			char name[IF_NAMESIZE];

			if (OPAL_SUCCESS != opal_ifindextoaddr(idx, (struct sockaddr *)&ss, sizeof(ss)) ||
			    !sctp_in_network(&net, bits, (struct sockaddr *)&ss) ||
			    OPAL_SUCCESS != opal_ifindextoname(idx, name, sizeof(name)))
				continue;
			matches++;
			if (!sctp_argv_has(names, name))
				opal_argv_append_nosize(&names, name);
		}
		*slash = '/';
		if (0 == matches && 0 == strcmp(which, "include"))
			opal_output(0, "btl sctp: no interface has an address in %s (btl_sctp_if_include)",
				    *e);
	}
	opal_argv_free(entries);
	return names;
}

/*
 * The comma-separated IPv4 address list the core binds: every address of the devices that
 * if_include names (else of those if_exclude does not name), as btl tcp selects its devices.
 * *out is NULL when the core should decide (config_file).
 */
static int sctp_component_addrs(char **out)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	bool include = NULL != c->if_include && '\0' != c->if_include[0];
	bool exclude_set = NULL != c->if_exclude && 0 != strcmp(c->if_exclude, SCTP_IF_EXCLUDE_DEFAULT);
	char **names, **addrs = NULL, ip[INET_ADDRSTRLEN];
	int n = 0;

	*out = NULL;
	if (include && exclude_set) {
		opal_output(0, "btl sctp: btl_sctp_if_include (\"%s\") and btl_sctp_if_exclude "
			    "(\"%s\") are mutually exclusive: set only one", c->if_include,
			    c->if_exclude);
		return OPAL_ERR_BAD_PARAM;
	}
	if (!include && !exclude_set && NULL != c->config_file && '\0' != c->config_file[0])
		return OPAL_SUCCESS;
	names = sctp_if_names(include ? c->if_include : c->if_exclude,
			      include ? "include" : "exclude");
	for (int idx = opal_ifbegin(); idx >= 0 && n < SCTPT_MAX_ADDRS; idx = opal_ifnext(idx)) {
		struct sockaddr_storage ss;
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
		bool listed;

		if (OPAL_SUCCESS != opal_ifindextoaddr(idx, (struct sockaddr *)&ss, sizeof(ss)) ||
		    AF_INET != ss.ss_family)
			continue;
		listed = NULL != names &&
			 OPAL_SUCCESS == opal_ifmatches(opal_ifindextokindex(idx), names);
		if (listed != include)
			continue;
		inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
		if (sctp_argv_has(addrs, ip))
			continue;
		opal_argv_append_nosize(&addrs, ip);
		n++;
	}
	opal_argv_free(names);
	if (0 == n) {
		if (include) {
			opal_output(0, "btl sctp: no IPv4 interface matches btl_sctp_if_include=\"%s\"",
				    c->if_include);
			return OPAL_ERR_NOT_FOUND;
		}
		opal_argv_append_nosize(&addrs, "127.0.0.1");
	}
	*out = opal_argv_join(addrs, ',');
	opal_argv_free(addrs);
	return NULL == *out ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
}

/* ---- the core's completions: called from sctpt_progress, no core lock held ---- */

/* Runs with the core's lock held: a frag to reassemble a large message into, nothing more. */
static void *sctp_recv_buf(void *arg, sctpt_peer_t peer, uint32_t context, int32_t tag, size_t len,
			   void **cookie)
{
	mca_btl_sctp_frag_t *frag;

	(void)arg;
	if (OPAL_UNLIKELY(MCA_BTL_SCTP_CTX_GET_DATA == context))
		return mca_btl_sctp_rget_recv_buf(peer, tag, len, cookie);
	frag = mca_btl_sctp_frag_alloc(len);
	*cookie = frag;
	return NULL == frag ? NULL : frag->buf; /* NULL: the core allocates */
}

static mca_btl_sctp_endpoint_t *sctp_endpoint_of(sctpt_peer_t peer)
{
	return peer < 0 ? NULL : opal_pointer_array_get_item(&mca_btl_sctp_component.peers, peer);
}

void mca_btl_sctp_report_fatal(mca_btl_sctp_endpoint_t *endpoint, int error, const char *what)
{
	mca_btl_sctp_module_t *m = endpoint ? endpoint->btl : &mca_btl_sctp_module;
	char info[512];
	const char *name = endpoint ? endpoint->proc->name : "an unknown peer";

	if (NULL != endpoint && 0 != OPAL_THREAD_SWAP_32(&endpoint->reported, 1))
		return; /* reported already */
	if (mca_btl_sctp_component.closing) {
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: peer %s while closing: %s", name, what);
		return;
	}
	snprintf(info, sizeof(info), "btl sctp: lost the connection to peer %s (%s): %s",
		 name, strerror(error < 0 ? -error : EPIPE), what && *what ? what : "no details");
	opal_output(0, "%s", info);
	if (NULL != m->error_cb)
		m->error_cb(&m->super, MCA_BTL_ERROR_FLAGS_FATAL,
			    endpoint ? endpoint->proc->proc : NULL, info);
}

/*
 * A message, to ob1 straight away. ob1 copies what it keeps before its callback returns
 * (opal/mca/btl/btl.h: the descriptor is valid only within the callback), so the descriptor
 * lives on the stack and points at the core's buffer, or at our frag when recv_buf gave one.
 */
static void sctp_recv(const struct sctpt_cqe *c)
{
	mca_btl_sctp_frag_t *frag = c->cookie;
	const mca_btl_active_message_callback_t *reg =
		c->context < MCA_BTL_TAG_MAX ? mca_btl_base_active_message_trigger + c->context : NULL;
	mca_btl_base_segment_t seg = {.seg_addr.pval = (void *)c->data, .seg_len = c->len};
	mca_btl_base_descriptor_t des = {.des_segments = &seg, .des_segment_count = 1};

	if (c->status < 0) {
		/* abandoned with its peer (reported by the event) or by our close */
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: a message from peer %d abandoned: %s", (int)c->peer,
				    strerror(-c->status));
	} else if (mca_btl_sctp_component.closing) {
		/* ob1 is gone */
	} else if (OPAL_LIKELY(NULL != reg && NULL != reg->cbfunc)) {
		/* ob1 finds the peer's protocol state by the module it came through */
		mca_btl_sctp_module_t *m = &mca_btl_sctp_module;
		mca_btl_sctp_endpoint_t *endpoint;

		if (mca_btl_sctp_component.local_module &&
		    NULL != (endpoint = sctp_endpoint_of(c->peer)))
			m = endpoint->btl;
		reg->cbfunc(&m->super, (mca_btl_base_tag_t)c->context, &des, reg->cbdata);
	} else {
		/* Nobody here takes it and its sender waits for an answer: end the job. */
		char what[128];

		snprintf(what, sizeof(what), "it sent a %zu-byte message for BTL tag %u, which no "
			 "layer of this process handles", c->len, (unsigned)c->context);
		mca_btl_sctp_report_fatal(sctp_endpoint_of(c->peer), -EPROTO, what);
	}
	if (NULL != frag)
		mca_btl_sctp_frag_return(frag);
}

/* A send that sctpt_send queued (returned 0): its only completion. */
static void sctp_send_done(mca_btl_sctp_frag_t *frag, int status)
{
	mca_btl_sctp_endpoint_t *endpoint = frag->endpoint;
	int owned = frag->base.des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;

	OPAL_THREAD_ADD_FETCH32(&endpoint->inflight, -1);
	if (!mca_btl_sctp_component.closing) {
		/* ob1 aborts on a failed send without saying why: say it first */
		if (status < 0)
			mca_btl_sctp_report_fatal(endpoint, status, endpoint->closed ?
						  "it closed its endpoint (MPI_Finalize) before our "
						  "message arrived" : "a message to it was not delivered");
		if (NULL != frag->base.des_cbfunc)
			frag->base.des_cbfunc(&endpoint->btl->super, endpoint, &frag->base,
					      status < 0 ? OPAL_ERR_UNREACH : OPAL_SUCCESS);
	}
	if (owned)
		mca_btl_sctp_frag_return(frag);
}

/*
 * A peer that closed its endpoint in order (it left MPI_Finalize) is no error, nor is the
 * association going down after that; a peer lost any other way while ob1 may still expect
 * traffic from it (between add_procs and del_procs) ends the job.
 */
static void sctp_event(const struct sctpt_event *ev)
{
	mca_btl_sctp_endpoint_t *endpoint = sctp_endpoint_of(ev->peer);
	const char *name = endpoint ? endpoint->proc->name : "(unknown)";

	switch (ev->type) {
	case SCTPT_EV_PEER_CLOSED:
		if (NULL != endpoint)
			endpoint->closed = 1;
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: peer %s closed its endpoint", name);
		break;
	case SCTPT_EV_ASSOC_DOWN:
		if (NULL != endpoint && !endpoint->closed && endpoint->in_use) {
			mca_btl_sctp_report_fatal(endpoint, ev->error, ev->what);
			break;
		}
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: peer %s gone (%s), %s", name, ev->what ? ev->what : "",
				    NULL != endpoint && endpoint->closed ? "after closing in order" :
				    "no longer in use");
		break;
	default:
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: event %d peer %s path %d: %s", (int)ev->type, name,
				    ev->path, ev->what ? ev->what : "");
		break;
	}
}

/* The default handler of the endpoint: every context nobody else claimed, i.e. the BTL tags. */
static void sctp_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	if (OPAL_UNLIKELY(c->context > MCA_BTL_TAG_MAX && SCTPT_CQE_EVENT != c->kind &&
			  mca_btl_sctp_rget_context(c->context))) {
		mca_btl_sctp_rget_complete(c);
		return;
	}
	switch (c->kind) {
	case SCTPT_CQE_RECV:
		sctp_recv(c);
		break;
	case SCTPT_CQE_SEND:
		sctp_send_done(c->cookie, c->status);
		break;
	case SCTPT_CQE_EVENT:
		sctp_event(&c->ev);
		break;
	}
}

void mca_btl_sctp_component_close_endpoint(void)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	struct sctpt_ep *ep = c->ep;

	c->closing = true; /* what completes from now on only gives our frags back */
	mca_btl_sctp_rdma_close(); /* before the core it sends on */
	c->ep = NULL;              /* progress stops */
	if (NULL != ep)
		sctpt_close(ep);   /* flushes queued sends for up to 2 s */
}

int mca_btl_sctp_component_progress(void)
{
	struct sctpt_ep *ep = mca_btl_sctp_component.ep;
	int count;

	if (NULL == ep)
		return 0;
	count = sctpt_progress(ep); /* ob1's callbacks run in there */
	count = count > 0 ? count : 0;
	if (NULL != mca_btl_sctp_component.rnic)
		count += mca_btl_sctp_rdma_progress();
	return count;
}

/* ---- init: free lists, the core endpoint, our card in the modex ---- */

static int sctp_free_list_init(opal_free_list_t *list, size_t buf, opal_class_t *cls)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;

	return opal_free_list_init(list, sizeof(mca_btl_sctp_frag_t) + buf, opal_cache_line_size,
				   cls, 0, opal_cache_line_size, c->free_list_num,
				   c->free_list_max, c->free_list_inc, NULL, 0, NULL, NULL, NULL);
}

/* ---- FNN striping: the core's ops.rails from the design table and address map ---- */

struct mca_btl_sctp_fnn {
	struct fnn_design d;
	struct fnn_routes r;
	struct fnn_addrmap m;
};

static void sctp_fnn_free(mca_btl_sctp_component_t *c)
{
	if (NULL == c->fnn)
		return;
	fnn_routes_free(&c->fnn->r);
	fnn_addrmap_free(&c->fnn->m);
	fnn_design_free(&c->fnn->d);
	free(c->fnn);
	c->fnn = NULL;
}

/* Loads btl_sctp_fnn_table and btl_sctp_fnn_addrs when both are set. */
static int sctp_fnn_load(mca_btl_sctp_component_t *c)
{
	int set_t = NULL != c->fnn_table && '\0' != c->fnn_table[0];
	int set_a = NULL != c->fnn_addrs && '\0' != c->fnn_addrs[0];
	char err[256] = "";
	if (!set_t && !set_a)
		return OPAL_SUCCESS;
	if (!set_t || !set_a) {
		opal_output(0, "btl sctp: btl_sctp_fnn_table and btl_sctp_fnn_addrs go together "
			       "(only %s is set)", set_t ? "fnn_table" : "fnn_addrs");
		return OPAL_ERR_BAD_PARAM;
	}
	c->fnn = calloc(1, sizeof(*c->fnn));
	if (NULL == c->fnn)
		return OPAL_ERR_OUT_OF_RESOURCE;
	int step = 0;
	if (0 == fnn_table_load(&c->fnn->d, c->fnn_table, 0, err, sizeof(err)) && ++step &&
	    0 == fnn_addrmap_load(&c->fnn->m, c->fnn_addrs, err, sizeof(err)) && ++step &&
	    0 == fnn_routes_build(&c->fnn->r, &c->fnn->d, NULL))
		return OPAL_SUCCESS;
	opal_output(0, "btl sctp: cannot load the FNN table %s with addresses %s: %s",
		    c->fnn_table, c->fnn_addrs, err[0] ? err : "cannot build its routes");
	if (step >= 2)
		fnn_addrmap_free(&c->fnn->m);
	if (step >= 1)
		fnn_design_free(&c->fnn->d);
	free(c->fnn);
	c->fnn = NULL;
	return OPAL_ERR_BAD_PARAM;
}

static int sctp_rails(void *arg, const char *card, const uint32_t *peer_addrs, int npeer,
		      const uint32_t *mine, int nmine, struct sctpt_rail *out, int max)
{
	mca_btl_sctp_component_t *c = arg;
	uint32_t l[SCTPT_MAX_RAILS], r[SCTPT_MAX_RAILS];
	int n = fnn_stripe_addrs(&c->fnn->d, &c->fnn->r, &c->fnn->m, mine, nmine, peer_addrs,
				 npeer, l, r, max < SCTPT_MAX_RAILS ? max : SCTPT_MAX_RAILS);
	if (n <= 0) {
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: peer %s not striped: %s", card,
				    n < 0 ? "not in the FNN address map" : "no shared switch");
		return 0;
	}
	for (int i = 0; i < n; i++) {
		out[i].local = l[i];
		out[i].remote = r[i];
	}
	opal_output_verbose(10, opal_btl_base_framework.framework_output,
			    "btl sctp: peer %s striped over %d rails", card, n);
	return n;
}

/* single_thread: Open MPI calls the BTL from one thread at a time (not MPI_THREAD_MULTIPLE;
 * the BTL has no progress thread of its own): the core need not lock. */
static int sctp_open_endpoint(bool single_thread)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	struct sctpt_config cfg;
	char *addrs = NULL;
	int rc;

	rc = sctp_fnn_load(c);
	if (OPAL_SUCCESS != rc)
		return rc;
	rc = sctp_component_addrs(&addrs);
	if (OPAL_SUCCESS != rc)
		return rc;
	sctpt_config_init(&cfg);
	cfg.single_thread = single_thread;
	cfg.addrs = addrs;
	cfg.config_file = (c->config_file && *c->config_file) ? c->config_file : NULL;
	cfg.config_host = (c->config_host && *c->config_host) ? c->config_host : NULL;
	if (c->udp_port_min > 0) {
		int max = c->udp_port_min + (c->udp_port_range > 0 ? c->udp_port_range : 1) - 1;
		cfg.udp_port_min = (uint16_t)c->udp_port_min;
		cfg.udp_port_max = (uint16_t)(max > 65535 ? 65535 : max);
	}
	cfg.streams = (uint16_t)(c->streams < 2 ? 2 : c->streams > SCTPT_MAX_STREAMS ?
				 SCTPT_MAX_STREAMS : c->streams);
	cfg.frag_size = (size_t)c->frag_size;
	cfg.path_mtu = (uint32_t)c->path_mtu;
	cfg.cmt = c->cmt;
	cfg.crc32c = c->crc32c;
	cfg.rto_min_ms = c->rto_min;
	cfg.rto_max_ms = c->rto_max;
	cfg.rto_initial_ms = c->rto_initial;
	cfg.hb_interval_ms = c->hb_interval;
	cfg.path_max_retrans = c->path_max_retrans;
	cfg.assoc_max_retrans = c->assoc_max_retrans;
	cfg.sndbuf = (size_t)c->sndbuf;
	cfg.rcvbuf = (size_t)c->rcvbuf;
	cfg.sack_delay_ms = c->sack_delay;
	cfg.sack_freq = c->sack_freq;
	cfg.shm = c->shm;
	cfg.shm_ring = (size_t)(c->shm_ring > 0 ? c->shm_ring : 0);
	cfg.shm_pull_min = c->shm_pull_min < 0 ? mca_btl_sctp_module.super.btl_eager_limit + 1 :
						  (size_t)c->shm_pull_min;
	cfg.shm_lend = c->shm_lend;
	cfg.handler.complete = sctp_complete;
	cfg.handler.recv_buf = sctp_recv_buf;
	cfg.handler.events = 1;
	cfg.handler.arg = c;
	cfg.ops.stream_map = mca_btl_sctp_stream_map;
	cfg.ops.rails = c->fnn ? sctp_rails : NULL;
	cfg.ops.arg = c;

	rc = sctpt_open(&cfg, &c->ep);
	if (rc < 0) {
		opal_output(0, "btl sctp: cannot open the SCTP endpoint on %s: %s",
			    addrs ? addrs : (cfg.config_file ? cfg.config_file : "default addresses"),
			    sctpt_last_error());
		free(addrs);
		c->ep = NULL;
		return OPAL_ERR_UNREACH;
	}
	rc = sctpt_card(c->ep, c->card, sizeof(c->card));
	if (rc < 0) {
		opal_output(0, "btl sctp: no business card: %s", sctpt_last_error());
		free(addrs);
		return OPAL_ERROR;
	}
	opal_output_verbose(10, opal_btl_base_framework.framework_output,
			    "btl sctp: bound %s, card \"%s\"",
			    addrs ? addrs : cfg.config_file ? "from the config file" : "by default",
			    c->card);
	free(addrs);
	return OPAL_SUCCESS;
}

static mca_btl_base_module_t **sctp_component_init(int *num_btls, bool enable_progress_threads,
						   bool enable_mpi_threads)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	mca_btl_base_module_t *m = &mca_btl_sctp_module.super;
	mca_btl_base_module_t **btls;
	int rc;

	*num_btls = 0;
	if (m->btl_max_send_size < m->btl_eager_limit)
		m->btl_max_send_size = m->btl_eager_limit;
	c->eager_buf = m->btl_eager_limit < MCA_BTL_SCTP_EAGER_BUF ? m->btl_eager_limit :
		       MCA_BTL_SCTP_EAGER_BUF;
	if (OPAL_SUCCESS != sctp_free_list_init(&c->frag_eager, c->eager_buf,
						OBJ_CLASS(mca_btl_sctp_frag_eager_t)) ||
	    OPAL_SUCCESS != sctp_free_list_init(&c->frag_max, m->btl_max_send_size,
						OBJ_CLASS(mca_btl_sctp_frag_max_t)) ||
	    OPAL_SUCCESS != sctp_free_list_init(&c->frag_user, 0,
						OBJ_CLASS(mca_btl_sctp_frag_user_t)))
		return NULL;
	(void)enable_progress_threads; /* Open MPI's own, not ours: we progress in opal_progress */
	if (OPAL_SUCCESS != sctp_open_endpoint(!enable_mpi_threads && !opal_using_threads()))
		return NULL;
	if (c->rdma && (m->btl_flags & MCA_BTL_FLAGS_RDMA) &&
	    OPAL_SUCCESS != mca_btl_sctp_rdma_open())
		m->btl_flags &= ~(uint32_t)(MCA_BTL_FLAGS_RDMA | MCA_BTL_FLAGS_ATOMIC_FOPS |
					    MCA_BTL_FLAGS_ATOMIC_OPS);
	/* gets from same-host peers need the core's shared memory (it may be off, or refused);
	 * ob1's gets over the streams need nothing; iWARP's need the RNIC */
	if (!c->shm || NULL == strstr(c->card, " shm="))
		c->shm_get = false;
	if (c->shm_get || c->rget) {
		m->btl_flags |= MCA_BTL_FLAGS_GET; /* its limits were registered with it */
		m->btl_registration_handle_size = mca_btl_sctp_rdma_handle_size();
	} else if (NULL == c->rnic) {
		m->btl_flags &= ~(uint32_t)MCA_BTL_FLAGS_GET;
	}
	rc = mca_btl_sctp_proc_publish();
	if (OPAL_SUCCESS != rc) {
		opal_output(0, "btl sctp: cannot publish the business card through the modex (%d)",
			    rc);
		mca_btl_sctp_component_close_endpoint();
		return NULL;
	}

	btls = malloc(2 * sizeof(*btls));
	if (NULL == btls)
		return NULL;
	btls[0] = m;
	*num_btls = 1;
	/* same-host peers through shared memory: their module, with a smaller eager limit --
	 * only when the whole job runs on this node: osc rdma does one-sided communication
	 * through one module that reaches every peer, and refuses a window (or, without
	 * osc_rdma_btls, gives way to osc pt2pt) when the peers are split between two */
	if (c->shm && NULL != strstr(c->card, " shm=") && c->shm_eager_limit > 0 &&
	    (size_t)c->shm_eager_limit < m->btl_eager_limit &&
	    mca_btl_sctp_proc_job_on_this_node()) {
		mca_btl_sctp_module_t *l = &mca_btl_sctp_local_module;

		*l = mca_btl_sctp_module; /* functions, flags, limits; lists of its own below */
		OBJ_CONSTRUCT(&l->endpoints, opal_list_t);
		OBJ_CONSTRUCT(&l->endpoints_lock, opal_mutex_t);
		l->local = true;
		l->error_cb = NULL;
		l->super.btl_eager_limit = (size_t)c->shm_eager_limit;
		if (l->super.btl_rndv_eager_limit > l->super.btl_eager_limit)
			l->super.btl_rndv_eager_limit = l->super.btl_eager_limit;
		c->local_module = true;
		btls[(*num_btls)++] = &l->super;
	}
	return btls;
}
