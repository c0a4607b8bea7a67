/*
 * nvm_vm.h - one NIC virtual machine: its loader (load, unload, replace, several
 * programs side by side in relocatable code and data arenas), its message queue
 * and trigger dispatch, the host interface (segments, display buffer, events)
 * and its optional link to other VMs.
 *
 * Threading: every function here takes the VM's mutex, so the host may call them
 * from any thread while another thread runs nvm_vm_progress.  Segment locks and
 * flags (nvm_seg.h) need no mutex.
 *
 * Program life: LOADED (after load) -> run -> the BEGIN block runs; then
 * WAITING between messages; each message for a declared trigger runs its
 * MESSAGE block until RET, AWAIT or STOP.  STOP -> STOPPED (messages dropped).
 * A fault (bad index, region, division by zero, budget) unloads the program and
 * queues an NVM_EV_FAULT event saying why.
 */
#ifndef NVM_VM_H
#define NVM_VM_H

#include <stddef.h>
#include <stdint.h>

#include "nvm_link.h"
#include "nvm_module.h"
#include "nvm_seg.h"

#define NVM_MSG_MAX 8192   /* payload bytes per message */
#define NVM_PROGS_MAX 64
#define NVM_SEGS_MAX 64
#define NVM_HOST_PROG 0    /* program id of the host as a sender */

enum nvm_dispatch { NVM_DISPATCH_GOTO, NVM_DISPATCH_SWITCH };

struct nvm_vm_config {
	uint32_t code_bytes;     /* code arena, default 1 MiB */
	uint32_t data_words;     /* data arena, default 1 Mi words */
	uint64_t budget;         /* instructions per activation, default 1000000 */
	unsigned queue_len;      /* queued messages, default 64 */
	unsigned dispatch;       /* enum nvm_dispatch; goto falls back to switch if unsupported */
	struct nvm_link *link;   /* optional: reach other VMs; not owned */
	unsigned display_len;    /* display buffer entries, default 4096 */
};

enum nvm_prog_state { NVM_ST_NONE, NVM_ST_LOADED, NVM_ST_WAITING, NVM_ST_STOPPED };

enum nvm_fault {
	NVM_F_NONE, NVM_F_BUDGET, NVM_F_INDEX, NVM_F_DIV, NVM_F_REGION, NVM_F_RIGHTS,
	NVM_F_SEG, NVM_F_LEN, NVM_F_MSG
};

enum nvm_event_kind {
	NVM_EV_FAULT = 1, /* program unloaded: code = enum nvm_fault, pc = where */
	NVM_EV_STOP,      /* program executed STOP */
	NVM_EV_DROP,      /* a message was dropped: text says why */
	NVM_EV_SENDERR    /* SEND/REPLY could not be delivered: text says why */
};

struct nvm_event {
	int kind;
	uint32_t prog;
	int code;
	uint32_t pc;
	char text[112];
};

struct nvm_prog_stats {
	int state;
	uint64_t activations, instructions;
	uint32_t code_off, code_len, data_off, data_words; /* where the loader put it */
};

struct nvm_vm;

struct nvm_vm *nvm_vm_new(const struct nvm_vm_config *cfg); /* cfg NULL = defaults */
void nvm_vm_free(struct nvm_vm *vm);

/* Verify and load m as program prog_id (> 0); the module is copied. 0 or -errno
 * (-EEXIST, -ENOSPC, -EINVAL with the verifier's message in err). */
int nvm_vm_load(struct nvm_vm *vm, uint32_t prog_id, const struct nvm_module *m,
		char *err, size_t errlen);
/* Decode + verify + load a module image (what the remote API carries). */
int nvm_vm_load_image(struct nvm_vm *vm, uint32_t prog_id, const void *img, size_t len,
		      char *err, size_t errlen);
int nvm_vm_unload(struct nvm_vm *vm, uint32_t prog_id);
/* Swap in new code for a loaded program, even between activations of a running
 * one.  Data is kept when the variable layout is identical, else zeroed; a saved
 * AWAIT point is dropped; the program's state is kept.  Queued messages go to
 * the new code. */
int nvm_vm_replace(struct nvm_vm *vm, uint32_t prog_id, const struct nvm_module *m,
		   char *err, size_t errlen);
int nvm_vm_replace_image(struct nvm_vm *vm, uint32_t prog_id, const void *img, size_t len,
			 char *err, size_t errlen);
/* Run the BEGIN block now.  0, or -ENOENT, -EALREADY (not LOADED), -EFAULT (faulted). */
int nvm_vm_run(struct nvm_vm *vm, uint32_t prog_id);

/* Queue a message from the host for (prog, trig); run by nvm_vm_progress. */
int nvm_vm_post(struct nvm_vm *vm, uint32_t prog_id, uint16_t trig, const void *buf, size_t len);
/* Run the handler for (prog, trig) now, bypassing the queue.  0 or -errno. */
int nvm_vm_dispatch(struct nvm_vm *vm, uint32_t prog_id, uint16_t trig, const void *buf, size_t len);
/* Receive what the link has (and answer management requests), then run up to
 * max queued messages.  Returns the number of messages handled. */
int nvm_vm_progress(struct nvm_vm *vm, unsigned max);

/* For a transport that owns the socket: hand the VM a datagram it received from
 * `from` (a message for a program, or a management request; answers and SENDs still
 * go out through cfg.link).  Queued like link input; run by nvm_vm_progress.
 * Returns 0, or -EPROTO if the bytes are not a VM packet (nvm_proto.h). */
int nvm_vm_input_packet(struct nvm_vm *vm, const void *pkt, size_t len,
			const struct nvm_link_addr *from);

/* Map a PDL AT address (bytes) to a link address.  A mapping to the VM's own link
 * address, or an AT address never mapped but equal to it, means "this VM". */
int nvm_vm_map_addr(struct nvm_vm *vm, const uint8_t *pdl, size_t n, const struct nvm_link_addr *to);

/* Attach a host segment (VM takes a reference) with rights NVM_SEG_R|W. */
int nvm_vm_seg_attach(struct nvm_vm *vm, struct nvm_seg *s);
int nvm_vm_seg_detach(struct nvm_vm *vm, uint32_t seg_id);

/* Host reads: up to max DISPLAYed values (oldest first); returns the count. */
size_t nvm_vm_display_read(struct nvm_vm *vm, int64_t *vals, uint32_t *progs, size_t max);
/* Messages programs send to the host: SEND .. TO 0, or REPLY to a message the host
 * posted (locally or through the management API).  Next one: 1 and *info, payload
 * copied up to cap bytes (info->len is the full length); 0 if none.  The host queue
 * holds NVM_HOSTQ_LEN messages; more are dropped with an NVM_EV_DROP event. */
#define NVM_HOSTQ_LEN 16
struct nvm_host_msg {
	uint32_t src_prog;
	uint16_t trig;
	uint32_t len;
};
int nvm_vm_host_recv(struct nvm_vm *vm, struct nvm_host_msg *info, void *buf, size_t cap);

/* Next event, 1 if one was returned, 0 if none. */
int nvm_vm_event_next(struct nvm_vm *vm, struct nvm_event *ev);

/* Ids of the loaded programs, up to max; returns how many are loaded. */
size_t nvm_vm_programs(struct nvm_vm *vm, uint32_t *ids, size_t max);
int nvm_vm_prog_stats(struct nvm_vm *vm, uint32_t prog_id, struct nvm_prog_stats *st);
/* Data word index of variable `name` in program prog (case-insensitive) and a
 * copy of n words from it: for tests and tools.  0 or -ENOENT/-ERANGE. */
int nvm_vm_peek(struct nvm_vm *vm, uint32_t prog_id, const char *var, uint32_t idx,
		int64_t *out, size_t n);

const char *nvm_fault_str(int fault);
/* Does this build have computed-goto dispatch? */
int nvm_have_goto(void);

#endif
