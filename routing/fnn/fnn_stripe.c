/* fnn_stripe.c - the transports' call: (me, peer) -> NIC pairs to stripe over, best first. */
#include "fnn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

static int load_of(const struct fnn_routes *r, int pc, int nic)
{
	return r ? r->nic_load[pc * FNN_MAX_NICS + nic] : 0;
}

int fnn_stripe_pairs(const struct fnn_design *d, const struct fnn_routes *r,
		     const struct fnn_addrmap *m, int me, int peer, struct fnn_stripe *out,
		     int max)
{
	struct fnn_stripe all[FNN_MAX_NICS];
	int n = 0;
	if (me < 0 || peer < 0 || me >= d->npcs || peer >= d->npcs || me == peer)
		return -EINVAL;
	if (r && r->npcs != d->npcs)
		return -EINVAL;
	const struct fnn_path *basic = r ? fnn_route(r, me, peer) : NULL;
	for (int k = 0; k < FNN_MAX_NICS; k++) {
		int s = fnn_nic_switch(d, me, k);
		if (s < 0)
			break;
		int rn = fnn_switch_nic(d, peer, s);
		if (rn < 0)
			continue;
		all[n++] = (struct fnn_stripe){ s, k, rn, fnn_addr(m, me, k), fnn_addr(m, peer, rn) };
	}
	/* insertion sort: basic path, then lighter local NIC, then lower switch */
	for (int i = 1; i < n; i++) {
		struct fnn_stripe x = all[i];
		int j = i;
		while (j > 0) {
			const struct fnn_stripe *y = &all[j - 1];
			int xb = basic && basic->sw == x.sw, yb = basic && basic->sw == y->sw;
			int lx = load_of(r, me, x.local_nic), ly = load_of(r, me, y->local_nic);
			int before = xb != yb ? xb : (lx != ly ? lx < ly : x.sw < y->sw);
			if (!before)
				break;
			all[j] = all[j - 1];
			j--;
		}
		all[j] = x;
	}
	for (int i = 0; i < n && i < max; i++)
		out[i] = all[i];
	return n;
}

/* The PC owning one of these addresses in the map, or -1. */
static int pc_by_addr(const struct fnn_addrmap *m, const uint32_t *a, int n)
{
	for (int i = 0; i < m->npcs * m->maxnics; i++) {
		uint32_t ip;
		if (m->nic[i].pc < 0 || inet_pton(AF_INET, m->nic[i].ip, &ip) != 1)
			continue;
		for (int k = 0; k < n; k++)
			if (a[k] == ip)
				return m->nic[i].pc;
	}
	return -1;
}

int fnn_stripe_addrs(const struct fnn_design *d, const struct fnn_routes *r,
		     const struct fnn_addrmap *m, const uint32_t *mine, int nmine,
		     const uint32_t *theirs, int ntheirs, uint32_t *local, uint32_t *remote,
		     int max)
{
	struct fnn_stripe st[FNN_MAX_NICS];
	int me = pc_by_addr(m, mine, nmine), peer = pc_by_addr(m, theirs, ntheirs), k = 0;
	if (me < 0 || peer < 0 || me == peer)
		return -ENOENT;
	int n = fnn_stripe_pairs(d, r, m, me, peer, st, FNN_MAX_NICS);
	for (int i = 0; i < n && i < FNN_MAX_NICS && k < max; i++) {
		if (!st[i].local || !st[i].remote ||
		    inet_pton(AF_INET, st[i].local->ip, &local[k]) != 1 ||
		    inet_pton(AF_INET, st[i].remote->ip, &remote[k]) != 1)
			continue;
		k++;
	}
	return n < 0 ? n : k;
}
