/*
 * FNN striping for a domain's core endpoint (FI_SCTP_FNN_TABLE, FI_SCTP_FNN_ADDRS): the
 * core's ops.rails from routing/fnn, as btl sctp has it. Each peer is striped over one SCTP
 * association per switch the two hosts share in the Flat Neighborhood Network design; a
 * rail that fails is dropped and its data re-sent on the others (the core's work).
 */
#include "sctp_prov.h"
#include "fnn.h"

#include <stdlib.h>

struct sctp_fnn {
	struct fnn_design d;
	struct fnn_routes r;
	struct fnn_addrmap m;
};

void sctp_fnn_free(struct sctp_fnn *f)
{
	if (!f)
		return;
	fnn_routes_free(&f->r);
	fnn_addrmap_free(&f->m);
	fnn_design_free(&f->d);
	free(f);
}

int sctp_fnn_load(const char *table, const char *addrs, struct sctp_fnn **out)
{
	int set_t = table && *table, set_a = addrs && *addrs, step = 0;
	char err[256] = "";
	struct sctp_fnn *f;

	*out = NULL;
	if (!set_t && !set_a)
		return 0;
	if (!set_t || !set_a) {
		SCTP_WARN(FI_LOG_DOMAIN, "FI_SCTP_FNN_TABLE and FI_SCTP_FNN_ADDRS go together\n");
		return -FI_EINVAL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return -FI_ENOMEM;
	if (fnn_table_load(&f->d, table, 0, err, sizeof(err)) == 0 && ++step &&
	    fnn_addrmap_load(&f->m, addrs, err, sizeof(err)) == 0 && ++step &&
	    fnn_routes_build(&f->r, &f->d, NULL) == 0) {
		*out = f;
		return 0;
	}
	SCTP_WARN(FI_LOG_DOMAIN, "cannot load the FNN table %s with addresses %s: %s\n", table,
		  addrs, err[0] ? err : "cannot build its routes");
	if (step >= 2)
		fnn_addrmap_free(&f->m);
	if (step >= 1)
		fnn_design_free(&f->d);
	free(f);
	return -FI_EINVAL;
}

int sctp_fnn_rails(void *arg, const char *card, const uint32_t *peer_addrs, int npeer,
		   const uint32_t *mine, int nmine, struct sctpt_rail *out, int max)
{
	struct sctp_fnn *f = arg;
	uint32_t l[SCTPT_MAX_RAILS], r[SCTPT_MAX_RAILS];
	int n = fnn_stripe_addrs(&f->d, &f->r, &f->m, mine, nmine, peer_addrs, npeer, l, r,
				 max < SCTPT_MAX_RAILS ? max : SCTPT_MAX_RAILS);

	if (n <= 0) {
		FI_INFO(&sctp_prov, FI_LOG_AV, "peer %s not striped: %s\n", card,
			n < 0 ? "not in the FNN address map" : "no shared switch");
		return 0;
	}
	for (int i = 0; i < n; i++) {
		out[i].local = l[i];
		out[i].remote = r[i];
	}
	FI_INFO(&sctp_prov, FI_LOG_AV, "peer %s striped over %d rails\n", card, n);
	return n;
}
