/*
 * ch3:sctp -- the endpoint's configuration from MPICH_SCTP_* environment variables (the
 * thesis's MPICH_SCTP_MULTIHOME_FILE among them), the stream map, and FNN striping.
 */
#include "ch3_sctp.h"
#include "fnn.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sctpc_fnn {
	struct fnn_design d;
	struct fnn_routes r;
	struct fnn_addrmap m;
};

static const char *env_str(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

/* An integer variable within [lo, hi]; def when unset. */
static int env_int(const char *name, long lo, long hi, long def, long *out, char *err,
		   size_t errlen)
{
	const char *v = env_str(name);
	char *end;
	long x;
	*out = def;
	if (!v)
		return 0;
	errno = 0;
	x = strtol(v, &end, 0);
	if (errno || *end || x < lo || x > hi) {
		snprintf(err, errlen, "%s=%s: expected an integer in [%ld, %ld]", name, v, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

/*
 * Streams: 1 carries the control context, 2 the RMA one; MPI (context, tag) pairs and
 * rendezvous transfers are hashed over the rest (with few streams they share).
 */
static uint16_t stream_map(void *arg, uint32_t context, int32_t tag, uint16_t nstreams)
{
	(void)arg;
	if (nstreams < 4)
		return sctpt_stream_default(context, tag, nstreams);
	if (context == SCTPC_CTX_CTRL)
		return 1;
	if (context == SCTPC_CTX_RMA)
		return 2;
	uint32_t h = context * 0x9e3779b1u ^ (uint32_t)tag * 0x85ebca6bu;
	h ^= h >> 15;
	return (uint16_t)(3 + h % (uint32_t)(nstreams - 3));
}

static int rails(void *arg, const char *card, const uint32_t *peer_addrs, int npeer,
		 const uint32_t *mine, int nmine, struct sctpt_rail *out, int max)
{
	struct sctpc_fnn *f = arg;
	uint32_t l[SCTPT_MAX_RAILS], r[SCTPT_MAX_RAILS];
	int n = fnn_stripe_addrs(&f->d, &f->r, &f->m, mine, nmine, peer_addrs, npeer, l, r,
				 max < SCTPT_MAX_RAILS ? max : SCTPT_MAX_RAILS);
	if (n <= 0) {
		if (sctpc.env.verbose)
			fprintf(stderr, "ch3:sctp: rank %d: peer %s not striped: %s\n", sctpc.rank,
				card, n < 0 ? "not in the FNN address map" : "no shared switch");
		return 0;
	}
	for (int i = 0; i < n; i++) {
		out[i].local = l[i];
		out[i].remote = r[i];
	}
	if (sctpc.env.verbose)
		fprintf(stderr, "ch3:sctp: rank %d: peer %s striped over %d rails\n", sctpc.rank,
			card, n);
	return n;
}

static int fnn_load(char *err, size_t errlen)
{
	const char *t = sctpc.env.fnn_table, *a = sctpc.env.fnn_addrs;
	char e[256] = "";
	int step = 0;
	if (!t && !a)
		return 0;
	if (!t || !a) {
		snprintf(err, errlen, "MPICH_SCTP_FNN_TABLE and MPICH_SCTP_FNN_ADDRS go together "
			 "(only %s is set)", t ? "the table" : "the addresses");
		return -1;
	}
	struct sctpc_fnn *f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (fnn_table_load(&f->d, t, 0, e, sizeof(e)) == 0 && ++step &&
	    fnn_addrmap_load(&f->m, a, e, sizeof(e)) == 0 && ++step &&
	    fnn_routes_build(&f->r, &f->d, NULL) == 0) {
		sctpc.fnn = f;
		return 0;
	}
	snprintf(err, errlen, "cannot load the FNN table %s with addresses %s: %s", t, a,
		 e[0] ? e : "cannot build its routes");
	if (step >= 2)
		fnn_addrmap_free(&f->m);
	if (step >= 1)
		fnn_design_free(&f->d);
	free(f);
	return -1;
}

void sctpc_config_free(void)
{
	if (!sctpc.fnn)
		return;
	fnn_routes_free(&sctpc.fnn->r);
	fnn_addrmap_free(&sctpc.fnn->m);
	fnn_design_free(&sctpc.fnn->d);
	free(sctpc.fnn);
	sctpc.fnn = NULL;
}

/* Integer settings: variable, bounds, and where each goes. */
enum { I_STREAMS, I_CMT, I_CRC, I_FRAG, I_MTU, I_RTO_MIN, I_RTO_MAX, I_RTO_INIT, I_HB,
       I_PATH_RT, I_ASSOC_RT, I_SNDBUF, I_RCVBUF, I_SACK_DELAY, I_SACK_FREQ, I_PORT_MIN,
       I_PORT_MAX, I_VERBOSE, I_SPIN, I_COUNT };

static const struct {
	const char *name;
	long lo, hi;
} ints[I_COUNT] = {
	[I_STREAMS] = {"MPICH_SCTP_STREAMS", 2, SCTPT_MAX_STREAMS},
	[I_CMT] = {"MPICH_SCTP_CMT", 0, 1},
	[I_CRC] = {"MPICH_SCTP_CRC32C", 0, 1},
	[I_FRAG] = {"MPICH_SCTP_FRAG_SIZE", 1024, 1 << 24},
	[I_MTU] = {"MPICH_SCTP_PATH_MTU", 0, 65535},
	[I_RTO_MIN] = {"MPICH_SCTP_RTO_MIN", 1, 60000},
	[I_RTO_MAX] = {"MPICH_SCTP_RTO_MAX", 1, 600000},
	[I_RTO_INIT] = {"MPICH_SCTP_RTO_INITIAL", 1, 600000},
	[I_HB] = {"MPICH_SCTP_HB_INTERVAL", 1, 600000},
	[I_PATH_RT] = {"MPICH_SCTP_PATH_MAX_RETRANS", 1, 100},
	[I_ASSOC_RT] = {"MPICH_SCTP_ASSOC_MAX_RETRANS", 1, 100},
	[I_SNDBUF] = {"MPICH_SCTP_SNDBUF", 65536, INT_MAX},
	[I_RCVBUF] = {"MPICH_SCTP_RCVBUF", 65536, INT_MAX},
	[I_SACK_DELAY] = {"MPICH_SCTP_SACK_DELAY", 0, 500},
	[I_SACK_FREQ] = {"MPICH_SCTP_SACK_FREQ", 1, 64},
	[I_PORT_MIN] = {"MPICH_SCTP_UDP_PORT_MIN", 0, 65535},
	[I_PORT_MAX] = {"MPICH_SCTP_UDP_PORT_MAX", 0, 65535},
	[I_VERBOSE] = {"MPICH_SCTP_VERBOSE", 0, 9},
	[I_SPIN] = {"MPICH_SCTP_SPIN_US", 0, 1000000},
};

/*
 * How long a blocking wait polls before it sleeps, unless MPICH_SCTP_SPIN_US says: a while
 * when every rank of this node has a CPU (a wake-up from poll costs more than most replies
 * take to come), not at all when they share CPUs (polling takes the CPU the peer needs).
 */
#define SPIN_US_DEFAULT 100

static long spin_default(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return MPIR_Process.local_size > 0 && cpus >= MPIR_Process.local_size ? SPIN_US_DEFAULT : 0;
}

int sctpc_config(struct sctpt_config *cfg, char *err, size_t errlen)
{
	long v[I_COUNT];
	sctpt_config_init(cfg);
	/* unset variables keep the core's defaults */
	long def[I_COUNT] = {
		[I_STREAMS] = cfg->streams, [I_CMT] = cfg->cmt, [I_CRC] = cfg->crc32c,
		/* a packet of CH3's eager sizes (powers of two) plus its header in one fragment */
		[I_FRAG] = (long)(cfg->frag_size + sizeof(MPIDI_CH3_Pkt_t)), [I_MTU] = cfg->path_mtu,
		[I_RTO_MIN] = cfg->rto_min_ms, [I_RTO_MAX] = cfg->rto_max_ms,
		[I_RTO_INIT] = cfg->rto_initial_ms, [I_HB] = cfg->hb_interval_ms,
		[I_PATH_RT] = cfg->path_max_retrans, [I_ASSOC_RT] = cfg->assoc_max_retrans,
		[I_SNDBUF] = (long)cfg->sndbuf, [I_RCVBUF] = (long)cfg->rcvbuf,
		[I_SACK_DELAY] = cfg->sack_delay_ms, [I_SACK_FREQ] = cfg->sack_freq,
		[I_PORT_MIN] = 0, [I_PORT_MAX] = 0, [I_VERBOSE] = 0, [I_SPIN] = spin_default(),
	};
	for (int i = 0; i < I_COUNT; i++)
		if (env_int(ints[i].name, ints[i].lo, ints[i].hi, def[i], &v[i], err, errlen))
			return -1;
	sctpc.env.addrs = env_str("MPICH_SCTP_ADDRS");
	sctpc.env.multihome_file = env_str("MPICH_SCTP_MULTIHOME_FILE");
	sctpc.env.multihome_host = env_str("MPICH_SCTP_MULTIHOME_HOST");
	sctpc.env.fnn_table = env_str("MPICH_SCTP_FNN_TABLE");
	sctpc.env.fnn_addrs = env_str("MPICH_SCTP_FNN_ADDRS");
	sctpc.env.verbose = (int)v[I_VERBOSE];
	sctpc.env.spin_us = (int)v[I_SPIN];
	if (v[I_PORT_MAX] && v[I_PORT_MIN] > v[I_PORT_MAX]) {
		snprintf(err, errlen, "MPICH_SCTP_UDP_PORT_MIN %ld is above MPICH_SCTP_UDP_PORT_MAX "
			 "%ld", v[I_PORT_MIN], v[I_PORT_MAX]);
		return -1;
	}
	if (fnn_load(err, errlen))
		return -1;

	cfg->addrs = sctpc.env.addrs;
	/*
	 * Every rank on this node and no addresses asked for: loopback, as the kernel routes a
	 * TCP connection between them. The non-loopback interfaces would work too, but their MTU
	 * (often 1500 or less) would set the size of every packet although the traffic never
	 * leaves the host.
	 */
	if (!cfg->addrs && !sctpc.env.multihome_file && !sctpc.fnn && MPIR_Process.num_nodes == 1)
		cfg->addrs = "127.0.0.1";
	cfg->config_file = sctpc.env.multihome_file;
	cfg->config_host = sctpc.env.multihome_host;
	cfg->streams = (uint16_t)v[I_STREAMS];
	cfg->cmt = (int)v[I_CMT];
	cfg->crc32c = (int)v[I_CRC];
	cfg->frag_size = (size_t)v[I_FRAG];
	cfg->path_mtu = (uint32_t)v[I_MTU];
	cfg->rto_min_ms = (int)v[I_RTO_MIN];
	cfg->rto_max_ms = (int)v[I_RTO_MAX];
	cfg->rto_initial_ms = (int)v[I_RTO_INIT];
	cfg->hb_interval_ms = (int)v[I_HB];
	cfg->path_max_retrans = (int)v[I_PATH_RT];
	cfg->assoc_max_retrans = (int)v[I_ASSOC_RT];
	cfg->sndbuf = (size_t)v[I_SNDBUF];
	cfg->rcvbuf = (size_t)v[I_RCVBUF];
	cfg->sack_delay_ms = (int)v[I_SACK_DELAY];
	cfg->sack_freq = (int)v[I_SACK_FREQ];
	cfg->udp_port_min = (uint16_t)v[I_PORT_MIN];
	cfg->udp_port_max = (uint16_t)v[I_PORT_MAX];
	/* below MPI_THREAD_MULTIPLE one thread at a time calls MPI, and the channel starts none
	 * of its own (MPID_Init has set the level before the channel's init runs) */
	cfg->single_thread = MPIR_ThreadInfo.thread_provided != MPI_THREAD_MULTIPLE;
	/* completions are read by the progress engine under MPICH's lock (sctpt_cq_read) */
	cfg->handler.complete = NULL;
	cfg->handler.recv_buf = sctpc_rndv_buf;
	cfg->handler.events = 1;
	cfg->ops.stream_map = stream_map;
	cfg->ops.rails = sctpc.fnn ? rails : NULL;
	cfg->ops.arg = sctpc.fnn;
	return 0;
}
