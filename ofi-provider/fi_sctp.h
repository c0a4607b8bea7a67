/*
 * fi_sctp.h: what the provider `sctp` offers beyond libfabric's API, through fi_open_ops on
 * a domain (the way libfabric's own fi_ext_*.h extensions are reached):
 *
 *   struct fi_sctp_ops_domain *ops;
 *   fi_open_ops(&domain->fid, FI_SCTP_DOMAIN_OPS, 0, (void **)&ops, NULL);
 *   ops->stats(domain, &s);
 */
#ifndef FI_SCTP_H
#define FI_SCTP_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/fi_domain.h>

#define FI_SCTP_DOMAIN_OPS "fi_sctp_domain_ops_v1"

/* Messages the domain's endpoints received so far. */
struct fi_sctp_stats {
	uint64_t placed;  /* read by the core straight into the receive buffer */
	uint64_t copied;  /* copied there from the core's buffer (unexpected, truncated, into
			   * several iovecs or a multi-receive buffer, small, or arrived while
			   * earlier ones were still unread) */
	uint64_t dropped; /* for no endpoint, or malformed */
};

struct fi_sctp_ops_domain {
	size_t size;
	int (*stats)(struct fid_domain *domain, struct fi_sctp_stats *s);
};

#endif /* FI_SCTP_H */
