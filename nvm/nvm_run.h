/*
 * nvm_run.h - the interpreter, internal to the library.  nvm_run.c holds the one
 * loop; it is compiled twice: with computed goto (nvm_run_goto) where the
 * compiler has labels-as-values, and with a switch (nvm_run_switch).
 *
 * The loop trusts nvm_verify for everything static and checks the rest: array
 * indexes, memory regions (through nvm_vm.c's helpers), division by zero and
 * the instruction budget.
 */
#ifndef NVM_RUN_H
#define NVM_RUN_H

#include <stdint.h>

#include "nvm_opcodes.h"

struct nvm_vm;
struct nvm_prog;
struct nvm_msg;

struct nvm_slot {
	uint32_t off, len; /* words, resolved against the program's data section */
};

/* One activation: what the loop needs, gathered in one place. */
struct nvm_exec {
	struct nvm_vm *vm;
	struct nvm_prog *prog;
	const struct nvm_msg *msg; /* NULL for BEGIN */
	const uint8_t *code;
	uint32_t code_len;
	int64_t *data;
	uint32_t data_words;
	const struct nvm_slot *slots;
	uint32_t *cont_pc;         /* saved AWAIT point, NVM_NO_PC if none */
	uint64_t budget;           /* in: allowed, out: left */
	int fault;                 /* enum nvm_fault when the result is NVM_R_FAULT */
	uint32_t pc;               /* out: pc of the fault, or the AWAIT continuation */
	int64_t stack[NVM_STACK_MAX];
};

enum nvm_run_result { NVM_R_IDLE, NVM_R_AWAIT, NVM_R_STOP, NVM_R_FAULT };

int nvm_run_goto(struct nvm_exec *x, uint32_t pc);
int nvm_run_switch(struct nvm_exec *x, uint32_t pc);

/* Special instructions, in nvm_vm.c.  0 or a fault code. */
int nvm_op_send(struct nvm_exec *x, int64_t p, int64_t n, int64_t trig, int64_t prog, unsigned adr);
int nvm_op_reply(struct nvm_exec *x, int64_t p, int64_t n, int64_t trig);
int nvm_op_deliver(struct nvm_exec *x, int64_t p, int64_t off, int64_t seg, int64_t n);
int nvm_op_get(struct nvm_exec *x, int64_t p, int64_t off, int64_t seg, int64_t n);
int nvm_op_getmsg(struct nvm_exec *x, int64_t p, int64_t off, int64_t n);
int nvm_op_msgw(struct nvm_exec *x, int64_t i, int64_t *out);
int nvm_op_msgb(struct nvm_exec *x, int64_t i, int64_t *out);
int64_t nvm_op_msglen(struct nvm_exec *x);
int64_t nvm_op_sender(struct nvm_exec *x);
int64_t nvm_op_self(struct nvm_exec *x);
void nvm_op_display(struct nvm_exec *x, int64_t v);
int nvm_op_flag(struct nvm_exec *x, int64_t seg);
int nvm_op_unlock(struct nvm_exec *x, int64_t seg);
int nvm_op_locked(struct nvm_exec *x, int64_t seg, int64_t *out);
int64_t nvm_op_clock(void);

#endif
