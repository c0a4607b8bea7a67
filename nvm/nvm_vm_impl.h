/* nvm_vm_impl.h - the VM's internal structures, shared by nvm_vm.c and nvm_mgmt.c. */
#ifndef NVM_VM_IMPL_H
#define NVM_VM_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "nvm_run.h"
#include "nvm_vm.h"

struct nvm_msg {
	uint32_t dst_prog;
	uint16_t trig;
	uint32_t src_prog;
	uint8_t remote;             /* came over the link from `from` */
	struct nvm_link_addr from;
	uint32_t len;
	uint8_t data[NVM_MSG_MAX];
};

struct nvm_prog {
	uint32_t id;
	int state;
	struct nvm_module *mod;     /* tables; mod->code is the pristine copy */
	struct nvm_slot *slots;
	uint32_t code_off, code_len;
	uint32_t data_off, data_words;
	uint32_t cont_pc;
	uint64_t activations, instructions;
};

struct nvm_addrmap {
	struct nvm_addr pdl;
	struct nvm_link_addr to;
};

struct nvm_vm {
	pthread_mutex_t lock;
	struct nvm_vm_config cfg;
	int (*run)(struct nvm_exec *, uint32_t);
	uint8_t *code;              /* code arena */
	int64_t *data;              /* data arena */
	uint32_t code_used, data_used;
	struct nvm_prog progs[NVM_PROGS_MAX];
	unsigned nprogs;            /* progs[0..nprogs) in arena order */
	struct nvm_seg *segs[NVM_SEGS_MAX];
	struct nvm_addrmap *amap;
	unsigned namap;
	struct nvm_msg *queue;      /* ring */
	unsigned qhead, qcount;
	/* Host posts land in their own ring under their own mutex, so a host thread
	 * never waits for a progress thread that holds the VM lock in a tight loop. */
	pthread_mutex_t inbox_lock;
	struct nvm_msg *inbox;
	unsigned ihead, icount;
	atomic_uint inbox_n;
	int64_t *disp_val;
	uint32_t *disp_prog;
	unsigned dhead, dcount;
	struct nvm_msg *hostq;      /* messages from programs to the host (ring) */
	unsigned hhead, hcount;
	struct nvm_event events[64];
	unsigned ehead, ecount;
	uint8_t *pkt;               /* link send/receive buffer */
	struct nvm_exec x;          /* the activation being run (one at a time) */
};

void nvm_vm_event(struct nvm_vm *vm, int kind, uint32_t prog, int code, uint32_t pc,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Handle one datagram from the link; lock held. */
void nvm_vm_input(struct nvm_vm *vm, const uint8_t *pkt, size_t len,
		  const struct nvm_link_addr *from);
/* Management request from the link (nvm_mgmt.c); lock held. */
void nvm_mgmt_serve(struct nvm_vm *vm, const uint8_t *pkt, size_t len,
		    const struct nvm_link_addr *from);



/* Shared between nvm_vm.c, nvm_loader.c and nvm_ops.c; VM lock held. */
struct nvm_prog *nvm_vm_find_prog(struct nvm_vm *vm, uint32_t id);
void nvm_vm_remove_prog(struct nvm_vm *vm, unsigned i); /* unload progs[i], relocate the rest */
void nvm_prog_release(struct nvm_prog *p);
struct nvm_msg *nvm_vm_enqueue(struct nvm_vm *vm);     /* a free queue slot or NULL */
/* A message for the host (program 0); dropped with an event when the host queue is full. */
void nvm_vm_host_put(struct nvm_vm *vm, uint32_t src, uint16_t trig, const void *buf, size_t n);

/* The public operations with the VM lock already held. */
int nvm_vm_load_l(struct nvm_vm *vm, uint32_t id, const struct nvm_module *m, char *err, size_t errlen);
int nvm_vm_unload_l(struct nvm_vm *vm, uint32_t id);
int nvm_vm_replace_l(struct nvm_vm *vm, uint32_t id, const struct nvm_module *m, char *err, size_t errlen);
int nvm_vm_run_l(struct nvm_vm *vm, uint32_t id);
int nvm_vm_post_l(struct nvm_vm *vm, uint32_t id, uint16_t trig, const void *buf, size_t len);
#endif
