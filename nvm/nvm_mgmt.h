/*
 * nvm_mgmt.h - program management: load, unload, replace, run and send-to-trigger,
 * the same five calls for the VM in this process and for a VM at a remote
 * address.  A handle is reached through an ops table; the remote ops speak
 * nvm_proto.h over an nvm_link (UDP loopback today, the SCTP core later).
 *
 * Remote calls are synchronous: send the request, poll the link for the answer
 * (bounded by the handle's timeout, default 2000 ms, one retransmission after
 * half of it).  The remote VM answers from its nvm_vm_progress.
 */
#ifndef NVM_MGMT_H
#define NVM_MGMT_H

#include <stddef.h>
#include <stdint.h>

#include "nvm_link.h"
#include "nvm_vm.h"

struct nvm_mgmt;

struct nvm_mgmt_ops {
	int (*load)(struct nvm_mgmt *h, uint32_t prog, const void *img, size_t len);
	int (*unload)(struct nvm_mgmt *h, uint32_t prog);
	int (*replace)(struct nvm_mgmt *h, uint32_t prog, const void *img, size_t len);
	int (*run)(struct nvm_mgmt *h, uint32_t prog);
	int (*send)(struct nvm_mgmt *h, uint32_t prog, uint16_t trig, const void *buf, size_t len);
	void (*close)(struct nvm_mgmt *h);
};

struct nvm_mgmt {
	const struct nvm_mgmt_ops *ops;
	char err[160];  /* the last error's text (from the remote VM too) */
	int timeout_ms;
};

/* A handle on a VM in this process (not owned). */
struct nvm_mgmt *nvm_mgmt_local(struct nvm_vm *vm);
/* A handle on the VM listening at `to`, reached over `link` (not owned; the
 * handle must be the link's only reader while a call is in progress). */
struct nvm_mgmt *nvm_mgmt_remote(struct nvm_link *link, const struct nvm_link_addr *to);

/* All return 0 or a negative errno; h->err then says why. */
static inline int nvm_mgmt_load(struct nvm_mgmt *h, uint32_t prog, const void *img, size_t len)
{ return h->ops->load(h, prog, img, len); }
static inline int nvm_mgmt_unload(struct nvm_mgmt *h, uint32_t prog)
{ return h->ops->unload(h, prog); }
static inline int nvm_mgmt_replace(struct nvm_mgmt *h, uint32_t prog, const void *img, size_t len)
{ return h->ops->replace(h, prog, img, len); }
static inline int nvm_mgmt_run(struct nvm_mgmt *h, uint32_t prog)
{ return h->ops->run(h, prog); }
static inline int nvm_mgmt_send(struct nvm_mgmt *h, uint32_t prog, uint16_t trig, const void *buf, size_t len)
{ return h->ops->send(h, prog, trig, buf, len); }
static inline void nvm_mgmt_close(struct nvm_mgmt *h)
{ if (h) h->ops->close(h); }

#endif
