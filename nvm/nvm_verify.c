/* nvm_verify.c - the load-time verifier: a linear decode pass, then a stack-depth
 * dataflow pass from every entry point. */
#include "nvm_verify.h"
#include "nvm_opcodes.h"
#include "common/sm_err.h"
#include "common/sm_bytes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define START 0x01 /* an instruction starts here */

struct vctx {
	const struct nvm_module *m;
	uint8_t *mark;  /* per byte: START */
	int16_t *depth; /* per byte: stack depth on entry, -1 unknown */
	uint32_t *work;
	size_t nwork;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4)))
static int reject(struct vctx *v, uint32_t pc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sm_err(v->err, v->errlen, 0, "pc %u: ", pc);
	sm_verr_append(v->err, v->errlen, 0, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Jump target of the REL instruction at pc, or -1 if outside the code. */
static int64_t target(const struct nvm_module *m, uint32_t pc)
{
	int64_t t = (int64_t)pc + 5 + (int32_t)sm_get_le32(m->code + pc + 1);
	return (t < 0 || t >= m->code_len) ? -1 : t;
}

/* Pass 1: every byte reachable by linear decoding is an opcode or its operand. */
static int decode_pass(struct vctx *v)
{
	const struct nvm_module *m = v->m;
	for (uint32_t pc = 0; pc < m->code_len;) {
		uint8_t op = m->code[pc];
		if (op >= NVM_OP__COUNT)
			return reject(v, pc, "unknown opcode 0x%02x", op);
		const struct nvm_opinfo *oi = &nvm_opinfo[op];
		if (m->code_len - pc - 1 < oi->size)
			return reject(v, pc, "%s: operand runs past the end of the code", oi->name);
		const uint8_t *a = m->code + pc + 1;
		if (oi->kind == NVM_OPND_VAR && sm_get_le16(a) >= m->nvars)
			return reject(v, pc, "%s: variable index %u out of range (%u variables)",
				      oi->name, sm_get_le16(a), m->nvars);
		if (oi->kind == NVM_OPND_ADR && sm_get_le16(a) != NVM_ADDR_LOCAL &&
		    sm_get_le16(a) >= m->naddr)
			return reject(v, pc, "%s: address index %u out of range (%u addresses)",
				      oi->name, sm_get_le16(a), m->naddr);
		v->mark[pc] = START;
		pc += 1 + oi->size;
	}
	return 0;
}

static int check_tables(struct vctx *v)
{
	const struct nvm_module *m = v->m;
	for (unsigned i = 0; i < m->nvars; i++) {
		const struct nvm_var *var = &m->vars[i];
		if (var->len == 0 || var->off > m->data_words || var->len > m->data_words - var->off)
			return reject(v, 0, "variable %u (%s) outside the data section", i, var->name);
	}
	for (unsigned i = 0; i < m->ntrig; i++) {
		uint32_t pc = m->trigs[i].pc;
		for (unsigned j = 0; j < i; j++)
			if (m->trigs[j].id == m->trigs[i].id)
				return reject(v, 0, "trigger %u declared twice", m->trigs[i].id);
		if (pc != NVM_NO_PC && (pc >= m->code_len || !(v->mark[pc] & START)))
			return reject(v, pc, "trigger %u entry is not an instruction start",
				      m->trigs[i].id);
	}
	if (m->init_pc != NVM_NO_PC && (m->init_pc >= m->code_len || !(v->mark[m->init_pc] & START)))
		return reject(v, m->init_pc, "BEGIN entry is not an instruction start");
	for (unsigned i = 0; i < m->naddr; i++)
		if (m->addrs[i].len == 0 || m->addrs[i].len > NVM_ADDR_MAX)
			return reject(v, 0, "address %u has bad length %u", i, m->addrs[i].len);
	return 0;
}

/* Record depth d on entry to pc; queue pc the first time. */
static int flow_to(struct vctx *v, uint32_t from, int64_t pc, int d)
{
	if (pc < 0 || pc >= v->m->code_len)
		return reject(v, from, "control leaves the code");
	if (!(v->mark[pc] & START))
		return reject(v, from, "jump into the middle of an instruction (to %lld)", (long long)pc);
	if (v->depth[pc] < 0) {
		v->depth[pc] = (int16_t)d;
		v->work[v->nwork++] = (uint32_t)pc;
		return 0;
	}
	if (v->depth[pc] != d)
		return reject(v, from, "stack depth %d meets depth %d at pc %lld", d, v->depth[pc],
			      (long long)pc);
	return 0;
}

static int flow_pass(struct vctx *v)
{
	const struct nvm_module *m = v->m;
	int rc = 0;
	if (m->init_pc != NVM_NO_PC)
		rc = flow_to(v, m->init_pc, m->init_pc, 0);
	for (unsigned i = 0; !rc && i < m->ntrig; i++)
		if (m->trigs[i].pc != NVM_NO_PC)
			rc = flow_to(v, m->trigs[i].pc, m->trigs[i].pc, 0);
	while (!rc && v->nwork) {
		uint32_t pc = v->work[--v->nwork];
		const struct nvm_opinfo *oi = &nvm_opinfo[m->code[pc]];
		int d = v->depth[pc];
		if (d < oi->pops)
			return reject(v, pc, "%s: stack underflow (depth %d, needs %d)", oi->name, d,
				      oi->pops);
		d = d - oi->pops + oi->pushes;
		if (d > NVM_STACK_MAX)
			return reject(v, pc, "%s: stack overflow (depth %d > %d)", oi->name, d,
				      NVM_STACK_MAX);
		if (m->code[pc] == NVM_OP_AWAIT && d != 0)
			return reject(v, pc, "AWAIT with %d words on the stack", d);
		uint32_t next = pc + 1 + oi->size;
		switch (oi->flow) {
		case NVM_FLOW_NEXT:
			rc = flow_to(v, pc, next, d);
			break;
		case NVM_FLOW_JUMP:
			rc = flow_to(v, pc, target(m, pc), d);
			break;
		case NVM_FLOW_BRANCH:
			rc = flow_to(v, pc, target(m, pc), d);
			if (!rc)
				rc = flow_to(v, pc, next, d);
			break;
		case NVM_FLOW_END:
			break;
		}
	}
	return rc;
}

int nvm_verify(const struct nvm_module *m, char *err, size_t errlen)
{
	if (m->code_len == 0 || m->code_len > NVM_CODE_MAX) {
		if (err && errlen)
			snprintf(err, errlen, "code size %u out of range", m->code_len);
		return -EINVAL;
	}
	struct vctx v = { .m = m, .err = err, .errlen = errlen };
	v.mark = calloc(m->code_len, 1);
	v.depth = malloc(m->code_len * sizeof(*v.depth));
	v.work = malloc(m->code_len * sizeof(*v.work));
	int rc = -ENOMEM;
	if (v.mark && v.depth && v.work) {
		memset(v.depth, 0xff, m->code_len * sizeof(*v.depth));
		rc = decode_pass(&v);
		if (!rc)
			rc = check_tables(&v);
		if (!rc)
			rc = flow_pass(&v);
	}
	free(v.mark);
	free(v.depth);
	free(v.work);
	return rc;
}
