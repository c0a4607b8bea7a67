/*
 * Address vectors (fi_av_*): FI_AV_TABLE and FI_AV_MAP. An entry is an endpoint name
 * (sctp_proto.h) and the core peer its business card became (sctpt_peer_add); fi_addr_t is
 * the entry's index for both types (TABLE never reuses one, MAP reuses removed ones). A hash
 * by (domain nonce, endpoint index) finds the sender of each received message (FI_SOURCE,
 * directed receives) whatever core peer it arrived as.
 */
#include "sctp_prov.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AV_BUCKETS 1024

static size_t bucket(uint64_t nonce, uint32_t ep)
{
	uint64_t h = (nonce ^ ((uint64_t)ep * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
	return (size_t)(h >> 32) % AV_BUCKETS;
}

struct sctp_av_entry *sctp_av_get(struct sctp_av *av, fi_addr_t a)
{
	if (!av || a >= av->n || !av->e[a].used)
		return NULL;
	return &av->e[a];
}

fi_addr_t sctp_av_lookup_src(struct sctp_av *av, uint64_t nonce, uint32_t ep)
{
	if (!av)
		return FI_ADDR_NOTAVAIL;
	for (int i = av->hash[bucket(nonce, ep)]; i >= 0; i = av->e[i].next)
		if (av->e[i].addr.nonce == nonce && av->e[i].addr.ep == ep)
			return (fi_addr_t)i;
	return FI_ADDR_NOTAVAIL;
}

/* The core's business card for a name. */
static void card_of(const struct sctp_addr *a, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "sctpt1 %u %u", a->udp_port, a->sctp_port);

	for (int i = 0; i < a->naddrs && n < len; i++) {
		char ip[INET_ADDRSTRLEN];
		struct in_addr in = {.s_addr = a->ips[i]};
		inet_ntop(AF_INET, &in, ip, sizeof(ip));
		n += (size_t)snprintf(buf + n, len - n, " %s", ip);
	}
	if (a->shm && n < len)
		snprintf(buf + n, len - n, " shm=%016llx.%u.%08x", (unsigned long long)a->shm_host,
			 a->shm_pid, a->shm_nonce);
}

static int entry_new(struct sctp_av *av)
{
	if (av->type == FI_AV_MAP && av->free_head >= 0) {
		int i = av->free_head;
		av->free_head = av->e[i].next;
		return i;
	}
	if (av->n == av->cap) {
		size_t cap = av->cap ? av->cap * 2 : 64;
		struct sctp_av_entry *e = realloc(av->e, cap * sizeof(*e));
		if (!e)
			return -1;
		av->e = e;
		av->cap = cap;
	}
	return (int)av->n++;
}

static int av_insert(struct fid_av *fav, const void *addr, size_t count, fi_addr_t *fi_addr,
		     uint64_t flags, void *context)
{
	struct sctp_av *av = container_of(fav, struct sctp_av, av);
	struct sctp_domain *d = av->dom;
	int done = 0;

	(void)context;
	if (flags & ~(FI_MORE | FI_SYNC_ERR))
		return -FI_EBADFLAGS;
	SCTP_LOCK(d);
	for (size_t k = 0; k < count; k++) {
		const uint8_t *p = (const uint8_t *)addr + k * SCTP_ADDR_LEN;
		char card[SCTPT_CARD_MAX];
		struct sctp_addr a;
		sctpt_peer_t peer = -1;
		int i = -1;

		if (sctp_addr_decode(&a, p, SCTP_ADDR_LEN) == 0) {
			card_of(&a, card, sizeof(card));
			peer = sctpt_peer_add(d->core, card);
			if (peer < 0)
				SCTP_WARN(FI_LOG_AV, "cannot add peer %s: %s\n", card,
					  sctpt_last_error());
		}
		if (peer >= 0)
			i = entry_new(av);
		if (i < 0) {
			if (fi_addr)
				fi_addr[k] = FI_ADDR_NOTAVAIL;
			if ((flags & FI_SYNC_ERR) && context)
				((int *)context)[k] = peer < 0 ? FI_EINVAL : FI_ENOMEM;
			continue;
		}
		av->e[i] = (struct sctp_av_entry){.used = 1, .addr = a, .peer = peer};
		size_t b = bucket(a.nonce, a.ep);
		av->e[i].next = av->hash[b];
		av->hash[b] = i;
		if (fi_addr)
			fi_addr[k] = (fi_addr_t)i;
		if ((flags & FI_SYNC_ERR) && context)
			((int *)context)[k] = 0;
		done++;
	}
	SCTP_UNLOCK(d);
	return done;
}

static int av_remove(struct fid_av *fav, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct sctp_av *av = container_of(fav, struct sctp_av, av);
	int rc = 0;

	if (flags)
		return -FI_EBADFLAGS;
	SCTP_LOCK(av->dom);
	for (size_t k = 0; k < count; k++) {
		struct sctp_av_entry *e = sctp_av_get(av, fi_addr[k]);
		int i = (int)fi_addr[k];

		if (!e) {
			rc = -FI_EINVAL;
			continue;
		}
		for (int *pp = &av->hash[bucket(e->addr.nonce, e->addr.ep)]; *pp >= 0;
		     pp = &av->e[*pp].next) {
			if (*pp == i) {
				*pp = e->next;
				break;
			}
		}
		e->used = 0;
		if (av->type == FI_AV_MAP) {
			e->next = av->free_head;
			av->free_head = i;
		}
	}
	SCTP_UNLOCK(av->dom);
	return rc;
}

static int av_lookup(struct fid_av *fav, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	struct sctp_av *av = container_of(fav, struct sctp_av, av);
	uint8_t buf[SCTP_ADDR_LEN];
	struct sctp_av_entry *e;

	SCTP_LOCK(av->dom);
	e = sctp_av_get(av, fi_addr);
	if (e)
		sctp_addr_encode(&e->addr, buf);
	SCTP_UNLOCK(av->dom);
	if (!e)
		return -FI_ENOENT;
	memcpy(addr, buf, *addrlen < SCTP_ADDR_LEN ? *addrlen : SCTP_ADDR_LEN);
	*addrlen = SCTP_ADDR_LEN;
	return 0;
}

/* "fi_sctp://ip[,ip...]:udp/sctp/ep<index>/<nonce>" */
static const char *av_straddr(struct fid_av *fav, const void *addr, char *buf, size_t *len)
{
	char s[256];
	struct sctp_addr a;
	size_t n;

	(void)fav;
	if (sctp_addr_decode(&a, addr, SCTP_ADDR_LEN) != 0) {
		n = (size_t)snprintf(s, sizeof(s), "fi_sctp://(invalid)");
	} else {
		n = (size_t)snprintf(s, sizeof(s), "fi_sctp://");
		for (int i = 0; i < a.naddrs; i++) {
			char ip[INET_ADDRSTRLEN];
			struct in_addr in = {.s_addr = a.ips[i]};
			inet_ntop(AF_INET, &in, ip, sizeof(ip));
			n += (size_t)snprintf(s + n, sizeof(s) - n, "%s%s", i ? "," : "", ip);
		}
		n += (size_t)snprintf(s + n, sizeof(s) - n, ":%u/%u/ep%u/%016llx", a.udp_port,
				      a.sctp_port, a.ep, (unsigned long long)a.nonce);
	}
	if (*len)
		snprintf(buf, *len, "%s", s);
	*len = n + 1;
	return buf;
}

static int no_insertsvc(struct fid_av *av, const char *node, const char *service,
			fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)av, (void)node, (void)service, (void)fi_addr, (void)flags, (void)context;
	return -FI_ENOSYS; /* names come from fi_getname: a host and port do not name a domain */
}

static int no_insertsym(struct fid_av *av, const char *node, size_t nodecnt, const char *service,
			size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)av, (void)node, (void)nodecnt, (void)service, (void)svccnt, (void)fi_addr;
	(void)flags, (void)context;
	return -FI_ENOSYS;
}

static int no_av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **av_set,
		     void *context)
{
	(void)av, (void)attr, (void)av_set, (void)context;
	return -FI_ENOSYS;
}

static int av_close(struct fid *fid)
{
	struct sctp_av *av = container_of(fid, struct sctp_av, av.fid);

	if (atomic_load(&av->refs))
		return -FI_EBUSY;
	atomic_fetch_sub(&av->dom->refs, 1);
	free(av->e);
	free(av->hash);
	free(av);
	return 0;
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	.bind = sctp_no_bind,
	.control = sctp_no_control,
	.ops_open = sctp_no_ops_open,
	.tostr = sctp_no_tostr,
	.ops_set = sctp_no_ops_set,
};

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = no_insertsvc,
	.insertsym = no_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = no_av_set,
};

int sctp_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **fav,
		 void *context)
{
	struct sctp_domain *d = container_of(domain, struct sctp_domain, dom);
	struct sctp_av *av;

	if (!attr || attr->name || attr->rx_ctx_bits || (attr->flags & ~FI_SYMMETRIC) ||
	    attr->type > FI_AV_TABLE)
		return -FI_ENOSYS; /* no shared, asynchronous (FI_EVENT) or scalable AVs */
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->hash = malloc(AV_BUCKETS * sizeof(*av->hash));
	if (!av->hash) {
		free(av);
		return -FI_ENOMEM;
	}
	for (size_t i = 0; i < AV_BUCKETS; i++)
		av->hash[i] = -1;
	av->nbuckets = AV_BUCKETS;
	av->free_head = -1;
	av->dom = d;
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_MAP : attr->type;
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &av_fi_ops;
	av->av.ops = &av_ops;
	atomic_fetch_add(&d->refs, 1);
	*fav = &av->av;
	return 0;
}
