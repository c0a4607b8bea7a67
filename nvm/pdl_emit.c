/* pdl_emit.c - PDL tree to NVM bytecode. */
#include "pdl_emit.h"
#include "nvm_opcodes.h"
#include "nvm_verify.h"
#include "common/sm_bytes.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct emitter {
	const struct pdl_unit *u;
	const char *file;
	uint8_t *code;
	uint32_t len, cap;
	jmp_buf fail;
	int nomem;
	int depth;      /* operand stack depth at this point of straight-line code */
	int line, col;  /* of the expression being emitted, for errors */
	char *err;
	size_t errlen;
};

static void byte(struct emitter *g, uint8_t b)
{
	if (g->len == NVM_CODE_MAX) {
		snprintf(g->err, g->errlen, "%s: error: program needs more than %d bytes of code",
			 g->file, NVM_CODE_MAX);
		longjmp(g->fail, 1);
	}
	if (g->len == g->cap) {
		uint32_t cap = g->cap ? g->cap * 2 : 256;
		uint8_t *c = realloc(g->code, cap);
		if (!c) {
			g->nomem = 1;
			snprintf(g->err, g->errlen, "%s: error: out of memory", g->file);
			longjmp(g->fail, 1);
		}
		g->code = c;
		g->cap = cap;
	}
	g->code[g->len++] = b;
}

static void le(struct emitter *g, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		byte(g, (uint8_t)(v >> (8 * i)));
}

static void op(struct emitter *g, int o)
{
	byte(g, (uint8_t)o);
	g->depth += nvm_opinfo[o].pushes - nvm_opinfo[o].pops;
	if (g->depth > NVM_STACK_MAX) {
		snprintf(g->err, g->errlen, "%s:%d:%d: error: expression too deeply nested "
			 "(needs more than %d stack words)", g->file, g->line, g->col, NVM_STACK_MAX);
		longjmp(g->fail, 1);
	}
}

static void op_var(struct emitter *g, int o, int var)
{
	op(g, o);
	le(g, (uint16_t)var, 2);
}

static void push(struct emitter *g, int64_t v)
{
	if (v >= INT8_MIN && v <= INT8_MAX) {
		op(g, NVM_OP_PUSH8);
		le(g, (uint64_t)v, 1);
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		op(g, NVM_OP_PUSH32);
		le(g, (uint64_t)v, 4);
	} else {
		op(g, NVM_OP_PUSH64);
		le(g, (uint64_t)v, 8);
	}
}

/* Emit a jump with a placeholder; returns where to patch. */
static uint32_t jump(struct emitter *g, int o)
{
	op(g, o);
	uint32_t at = g->len;
	le(g, 0, 4);
	return at;
}

static void patch(struct emitter *g, uint32_t at, uint32_t target)
{
	int32_t rel = (int32_t)target - (int32_t)(at + 4);
	sm_put_le32(g->code + at, (uint32_t)rel);
}

static void jump_back(struct emitter *g, int o, uint32_t target)
{
	patch(g, jump(g, o), target);
}

static int binop(int tok)
{
	switch (tok) {
	case PDL_T_PLUS: return NVM_OP_ADD;
	case PDL_T_MINUS: return NVM_OP_SUB;
	case PDL_T_STAR: return NVM_OP_MUL;
	case PDL_T_SLASH: return NVM_OP_DIV;
	case PDL_T_PERCENT: return NVM_OP_MOD;
	case PDL_T_AMP: return NVM_OP_BAND;
	case PDL_T_BAR: return NVM_OP_BOR;
	case PDL_T_CARET: return NVM_OP_BXOR;
	case PDL_T_SHL: return NVM_OP_SHL;
	case PDL_T_SHR: return NVM_OP_SHR;
	case PDL_T_EQ: return NVM_OP_EQ;
	case PDL_T_NE: return NVM_OP_NE;
	case PDL_T_LT: return NVM_OP_LT;
	case PDL_T_LE: return NVM_OP_LE;
	case PDL_T_GT: return NVM_OP_GT;
	default: return NVM_OP_GE;
	}
}

/* Constant value of e if it has one (no side effects, no faults). */
static int constant(const struct pdl_expr *e, int64_t *v)
{
	int64_t a, b;
	switch (e->kind) {
	case PDL_E_NUM:
		*v = e->val;
		return 1;
	case PDL_E_NEG:
		return constant(e->a, &a) ? (*v = (int64_t)(0 - (uint64_t)a), 1) : 0;
	case PDL_E_BNOT:
		return constant(e->a, &a) ? (*v = ~a, 1) : 0;
	case PDL_E_BIN:
		if (!constant(e->a, &a) || !constant(e->b, &b))
			return 0;
		switch (e->op) {
		case PDL_T_PLUS: *v = (int64_t)((uint64_t)a + (uint64_t)b); return 1;
		case PDL_T_MINUS: *v = (int64_t)((uint64_t)a - (uint64_t)b); return 1;
		case PDL_T_STAR: *v = (int64_t)((uint64_t)a * (uint64_t)b); return 1;
		case PDL_T_AMP: *v = a & b; return 1;
		case PDL_T_BAR: *v = a | b; return 1;
		case PDL_T_CARET: *v = a ^ b; return 1;
		case PDL_T_SHL: *v = (int64_t)((uint64_t)a << (b & 63)); return 1;
		default: return 0; /* leave division and comparisons to the machine */
		}
	default:
		return 0;
	}
}

static void expr(struct emitter *g, const struct pdl_expr *e)
{
	int64_t k;
	uint32_t j1, j2;
	g->line = e->line;
	g->col = e->col;
	if (constant(e, &k)) {
		push(g, k);
		return;
	}
	switch (e->kind) {
	case PDL_E_VAR:
		if (e->a) {
			expr(g, e->a);
			op_var(g, NVM_OP_LOADX, e->var);
		} else {
			op_var(g, NVM_OP_LOAD, e->var);
		}
		return;
	case PDL_E_BIN:
		expr(g, e->a);
		expr(g, e->b);
		op(g, binop(e->op));
		return;
	case PDL_E_NEG:
	case PDL_E_BNOT:
	case PDL_E_LNOT:
		expr(g, e->a);
		op(g, e->kind == PDL_E_NEG ? NVM_OP_NEG : e->kind == PDL_E_BNOT ? NVM_OP_BNOT
										 : NVM_OP_LNOT);
		return;
	case PDL_E_AND:
	case PDL_E_OR: /* short-circuit, result 0 or 1 */
		expr(g, e->a);
		j1 = jump(g, e->kind == PDL_E_AND ? NVM_OP_JZ : NVM_OP_JNZ);
		expr(g, e->b);
		op(g, NVM_OP_LNOT);
		op(g, NVM_OP_LNOT);
		j2 = jump(g, NVM_OP_JMP);
		patch(g, j1, g->len);
		g->depth--; /* the other path arrives here without b's value */
		push(g, e->kind == PDL_E_AND ? 0 : 1);
		patch(g, j2, g->len);
		return;
	case PDL_E_CLOCK:
		op(g, NVM_OP_CLOCK);
		return;
	case PDL_E_MSGLEN:
		op(g, NVM_OP_MSGLEN);
		return;
	case PDL_E_SENDER:
		op(g, NVM_OP_SENDER);
		return;
	case PDL_E_FIELD:
	case PDL_E_BYTE:
	case PDL_E_LOCKED:
		expr(g, e->a);
		op(g, e->kind == PDL_E_FIELD ? NVM_OP_MSGW :
		      e->kind == PDL_E_BYTE ? NVM_OP_MSGB : NVM_OP_LOCKED);
		return;
	}
}

/* Push the byte address of a buffer operand. */
static void buffer(struct emitter *g, const struct pdl_buf *b)
{
	int64_t k;
	if (!b->index) {
		push(g, (int64_t)g->u->vars[b->var].off * 8);
	} else if (constant(b->index, &k) && k >= 0 && (uint64_t)k < g->u->vars[b->var].len) {
		push(g, ((int64_t)g->u->vars[b->var].off + k) * 8);
	} else {
		expr(g, b->index);
		op_var(g, NVM_OP_ADDR, b->var);
	}
}

static void stmt(struct emitter *g, const struct pdl_stmt *s)
{
	uint32_t j1, j2, top;
	for (; s; s = s->next) {
		switch (s->kind) {
		case PDL_S_ASSIGN:
			if (s->buf.index) {
				expr(g, s->buf.index);
				expr(g, s->e[0]);
				op_var(g, NVM_OP_STOREX, s->buf.var);
			} else {
				expr(g, s->e[0]);
				op_var(g, NVM_OP_STORE, s->buf.var);
			}
			break;
		case PDL_S_IF:
			expr(g, s->e[0]);
			j1 = jump(g, NVM_OP_JZ);
			stmt(g, s->body);
			if (s->els) {
				j2 = jump(g, NVM_OP_JMP);
				patch(g, j1, g->len);
				stmt(g, s->els);
				patch(g, j2, g->len);
			} else {
				patch(g, j1, g->len);
			}
			break;
		case PDL_S_WHILE: /* test at the bottom: one jump per iteration */
			j1 = jump(g, NVM_OP_JMP);
			top = g->len;
			stmt(g, s->body);
			patch(g, j1, g->len);
			expr(g, s->e[0]);
			jump_back(g, NVM_OP_JNZ, top);
			break;
		case PDL_S_BLOCK:
			stmt(g, s->body);
			break;
		case PDL_S_AWAIT:
			op(g, NVM_OP_AWAIT);
			break;
		case PDL_S_STOP:
			op(g, NVM_OP_STOP);
			break;
		case PDL_S_DISPLAY:
		case PDL_S_FLAG:
		case PDL_S_UNLOCK:
			expr(g, s->e[0]);
			op(g, s->kind == PDL_S_DISPLAY ? NVM_OP_DISPLAY :
			      s->kind == PDL_S_FLAG ? NVM_OP_FLAG : NVM_OP_UNLOCK);
			break;
		case PDL_S_SEND:
			buffer(g, &s->buf);
			expr(g, s->e[0]);
			expr(g, s->e[1]);
			if (s->e[2])
				expr(g, s->e[2]);
			else
				op(g, NVM_OP_SELF); /* no TO: this program */
			op(g, NVM_OP_SEND);
			le(g, s->addr < 0 ? NVM_ADDR_LOCAL : (uint16_t)s->addr, 2);
			break;
		case PDL_S_REPLY:
			buffer(g, &s->buf);
			expr(g, s->e[0]);
			expr(g, s->e[1]);
			op(g, NVM_OP_REPLY);
			break;
		case PDL_S_DELIVER:
		case PDL_S_GET:
			buffer(g, &s->buf);
			expr(g, s->e[0]);
			expr(g, s->e[1]);
			expr(g, s->e[2]);
			op(g, s->kind == PDL_S_DELIVER ? NVM_OP_DELIVER : NVM_OP_GET);
			break;
		case PDL_S_GETMSG:
			buffer(g, &s->buf);
			expr(g, s->e[0]);
			expr(g, s->e[2]);
			op(g, NVM_OP_GETMSG);
			break;
		}
	}
}

static void block(struct emitter *g, const struct pdl_stmt *s)
{
	stmt(g, s);
	op(g, NVM_OP_RET);
}

int pdl_emit(const struct pdl_unit *u, const char *file, struct nvm_module **out, char *err,
	     size_t errlen)
{
	struct emitter *g = calloc(1, sizeof(*g));
	struct nvm_module *m = calloc(1, sizeof(*m));
	*out = NULL;
	if (!g || !m) {
		free(g);
		free(m);
		return -ENOMEM;
	}
	g->u = u;
	g->file = file ? file : "<input>";
	static char dummy[1];
	g->err = err ? err : dummy;
	g->errlen = err ? errlen : sizeof(dummy);
	if (setjmp(g->fail)) {
		int rc = g->nomem ? -ENOMEM : -EINVAL;
		free(g->code);
		free(g);
		nvm_module_free(m);
		return rc;
	}
	m->vars = calloc((size_t)u->nvars + 1, sizeof(*m->vars));
	m->trigs = calloc((size_t)u->ntrigs + 1, sizeof(*m->trigs));
	m->addrs = calloc((size_t)u->naddrs + 1, sizeof(*m->addrs));
	if (!m->vars || !m->trigs || !m->addrs) {
		g->nomem = 1;
		longjmp(g->fail, 1);
	}
	snprintf(m->name, sizeof(m->name), "%s", u->name);
	m->data_words = u->data_words;
	m->nvars = (uint16_t)u->nvars;
	for (int i = 0; i < u->nvars; i++) {
		m->vars[i].off = u->vars[i].off;
		m->vars[i].len = u->vars[i].len;
		snprintf(m->vars[i].name, sizeof(m->vars[i].name), "%s", u->vars[i].name);
	}
	m->naddr = (uint16_t)u->naddrs;
	if (u->naddrs)
		memcpy(m->addrs, u->addrs, (size_t)u->naddrs * sizeof(*m->addrs));
	m->init_pc = NVM_NO_PC;
	if (u->init) {
		m->init_pc = g->len;
		block(g, u->init);
	}
	m->ntrig = (uint16_t)u->ntrigs;
	for (int i = 0; i < u->ntrigs; i++) {
		m->trigs[i].id = u->trigs[i].id;
		m->trigs[i].pc = NVM_NO_PC;
		if (u->trigs[i].body) {
			m->trigs[i].pc = g->len;
			block(g, u->trigs[i].body);
		}
	}
	if (g->len == 0)
		op(g, NVM_OP_RET); /* an empty program still has code */
	m->code = g->code;
	m->code_len = g->len;
	free(g);
	*out = m;
	return 0;
}

int pdl_compile(const char *file, const char *src, size_t len, struct nvm_module **out,
		char *err, size_t errlen)
{
	struct pdl_unit *u;
	int rc = pdl_parse(file, src, len, &u, err, errlen);
	if (rc)
		return rc;
	rc = pdl_emit(u, file, out, err, errlen);
	pdl_unit_free(u);
	if (rc)
		return rc;
	char verr[128];
	rc = nvm_verify(*out, verr, sizeof(verr));
	if (rc) { /* a compiler bug: say so plainly */
		snprintf(err, errlen, "%s: internal error: generated code fails verification: %s",
			 file ? file : "<input>", verr);
		nvm_module_free(*out);
		*out = NULL;
	}
	return rc;
}
