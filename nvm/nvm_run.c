/*
 * nvm_run.c - the interpreter loop.  Compiled as is it defines nvm_run_goto
 * (computed goto when the compiler has labels-as-values, else a switch); with
 * NVM_RUN_SWITCH defined (nvm_run_switch.c) it defines nvm_run_switch.  Both
 * come from the same lines below, so the benchmark compares like with like.
 */
#include "nvm_run.h"
#include "nvm_module.h"
#include "nvm_vm.h"

#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "operand decoding assumes a little-endian host"
#endif

#if defined(NVM_RUN_SWITCH)
#define NVM_RUN_FN nvm_run_switch
#undef NVM_USE_GOTO
#else
#define NVM_RUN_FN nvm_run_goto
#if defined(__GNUC__) || defined(__clang__)
#define NVM_USE_GOTO 1
int nvm_have_goto(void) { return 1; }
#else
int nvm_have_goto(void) { return 0; }
#endif
#endif

#define unlikely(x) __builtin_expect(!!(x), 0)

static inline int16_t rd_u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return (int16_t)v; }
static inline int32_t rd_i32(const uint8_t *p) { int32_t v; memcpy(&v, p, 4); return v; }
static inline int64_t rd_i64(const uint8_t *p) { int64_t v; memcpy(&v, p, 8); return v; }
#define VARIDX() ((uint16_t)rd_u16(ip + 1))

#ifdef NVM_USE_GOTO
#define vmdispatch(o) goto *labels[o];
#define vmcase(n) L_##n:
#define vmbreak do { if (unlikely(--budget == 0)) goto out_budget; goto *labels[*ip]; } while (0)
#else
#define vmdispatch(o) switch (o)
#define vmcase(n) case NVM_OP_##n:
#define vmbreak break
#endif

/* Binary operation on the two top words; u/v are uint64 to make wrap-around defined. */
#define BINOP(expr) do { uint64_t v = (uint64_t)sp[-1], u = (uint64_t)sp[-2]; (void)u; (void)v; \
	sp[-2] = (int64_t)(expr); sp--; ip += 1; } while (0)
#define CMPOP(op) do { sp[-2] = sp[-2] op sp[-1]; sp--; ip += 1; } while (0)
#define FAULT(f) do { fault = (f); goto out_fault; } while (0)
#define CHECK(call) do { int f_ = (call); if (unlikely(f_)) FAULT(f_); } while (0)

int NVM_RUN_FN(struct nvm_exec *x, uint32_t pc)
{
	const uint8_t *const code = x->code;
	const uint8_t *ip = code + pc;
	int64_t *const stack = x->stack;
	int64_t *sp = stack;
	int64_t *const d = x->data;
	const struct nvm_slot *const slot = x->slots;
	uint64_t budget = x->budget + 1;
	int fault = NVM_F_NONE;
	int result;
#ifdef NVM_USE_GOTO
	static const void *const labels[NVM_OP__COUNT] = {
#define NVM_X_LABEL(name, kind, pop, push, flow, doc) [NVM_OP_##name] = &&L_##name,
		NVM_OPCODES(NVM_X_LABEL)
#undef NVM_X_LABEL
	};
#endif

	for (;;) {
		if (unlikely(--budget == 0))
			goto out_budget;
		vmdispatch(*ip) {
		vmcase(NOP) ip += 1; vmbreak;
		vmcase(PUSH8) *sp++ = (int8_t)ip[1]; ip += 2; vmbreak;
		vmcase(PUSH32) *sp++ = rd_i32(ip + 1); ip += 5; vmbreak;
		vmcase(PUSH64) *sp++ = rd_i64(ip + 1); ip += 9; vmbreak;
		vmcase(POP) sp--; ip += 1; vmbreak;
		vmcase(DUP) sp[0] = sp[-1]; sp++; ip += 1; vmbreak;
		vmcase(LOAD) *sp++ = d[slot[VARIDX()].off]; ip += 3; vmbreak;
		vmcase(STORE) d[slot[VARIDX()].off] = *--sp; ip += 3; vmbreak;
		vmcase(LOADX) {
			const struct nvm_slot *s = &slot[VARIDX()];
			uint64_t i = (uint64_t)sp[-1];
			if (unlikely(i >= s->len))
				FAULT(NVM_F_INDEX);
			sp[-1] = d[s->off + i];
			ip += 3;
			vmbreak;
		}
		vmcase(STOREX) {
			const struct nvm_slot *s = &slot[VARIDX()];
			uint64_t i = (uint64_t)sp[-2];
			if (unlikely(i >= s->len))
				FAULT(NVM_F_INDEX);
			d[s->off + i] = sp[-1];
			sp -= 2;
			ip += 3;
			vmbreak;
		}
		vmcase(ADDR) {
			const struct nvm_slot *s = &slot[VARIDX()];
			uint64_t i = (uint64_t)sp[-1];
			if (unlikely(i >= s->len))
				FAULT(NVM_F_INDEX);
			sp[-1] = (int64_t)((s->off + i) * 8);
			ip += 3;
			vmbreak;
		}
		vmcase(ADD) BINOP(u + v); vmbreak;
		vmcase(SUB) BINOP(u - v); vmbreak;
		vmcase(MUL) BINOP(u * v); vmbreak;
		vmcase(DIV) {
			int64_t b = sp[-1], a = sp[-2];
			if (unlikely(b == 0))
				FAULT(NVM_F_DIV);
			sp[-2] = (b == -1) ? (int64_t)(0 - (uint64_t)a) : a / b;
			sp--;
			ip += 1;
			vmbreak;
		}
		vmcase(MOD) {
			int64_t b = sp[-1], a = sp[-2];
			if (unlikely(b == 0))
				FAULT(NVM_F_DIV);
			sp[-2] = (b == -1) ? 0 : a % b;
			sp--;
			ip += 1;
			vmbreak;
		}
		vmcase(BAND) BINOP(u & v); vmbreak;
		vmcase(BOR) BINOP(u | v); vmbreak;
		vmcase(BXOR) BINOP(u ^ v); vmbreak;
		vmcase(SHL) BINOP(u << (v & 63)); vmbreak;
		vmcase(SHR) BINOP(u >> (v & 63)); vmbreak;
		vmcase(EQ) CMPOP(==); vmbreak;
		vmcase(NE) CMPOP(!=); vmbreak;
		vmcase(LT) CMPOP(<); vmbreak;
		vmcase(LE) CMPOP(<=); vmbreak;
		vmcase(GT) CMPOP(>); vmbreak;
		vmcase(GE) CMPOP(>=); vmbreak;
		vmcase(NEG) sp[-1] = (int64_t)(0 - (uint64_t)sp[-1]); ip += 1; vmbreak;
		vmcase(BNOT) sp[-1] = ~sp[-1]; ip += 1; vmbreak;
		vmcase(LNOT) sp[-1] = !sp[-1]; ip += 1; vmbreak;
		vmcase(JMP) ip += 5 + rd_i32(ip + 1); vmbreak;
		vmcase(JZ) ip += (*--sp == 0) ? 5 + rd_i32(ip + 1) : 5; vmbreak;
		vmcase(JNZ) ip += (*--sp != 0) ? 5 + rd_i32(ip + 1) : 5; vmbreak;
		vmcase(CLOCK) *sp++ = nvm_op_clock(); ip += 1; vmbreak;
		vmcase(SEND) {
			sp -= 4;
			x->pc = (uint32_t)(ip - code);
			CHECK(nvm_op_send(x, sp[0], sp[1], sp[2], sp[3], (uint16_t)rd_u16(ip + 1)));
			ip += 3;
			vmbreak;
		}
		vmcase(REPLY) {
			sp -= 3;
			x->pc = (uint32_t)(ip - code);
			CHECK(nvm_op_reply(x, sp[0], sp[1], sp[2]));
			ip += 1;
			vmbreak;
		}
		vmcase(DELIVER) {
			sp -= 4;
			CHECK(nvm_op_deliver(x, sp[0], sp[1], sp[2], sp[3]));
			ip += 1;
			vmbreak;
		}
		vmcase(GET) {
			sp -= 4;
			CHECK(nvm_op_get(x, sp[0], sp[1], sp[2], sp[3]));
			ip += 1;
			vmbreak;
		}
		vmcase(GETMSG) {
			sp -= 3;
			CHECK(nvm_op_getmsg(x, sp[0], sp[1], sp[2]));
			ip += 1;
			vmbreak;
		}
		vmcase(MSGW) CHECK(nvm_op_msgw(x, sp[-1], &sp[-1])); ip += 1; vmbreak;
		vmcase(MSGB) CHECK(nvm_op_msgb(x, sp[-1], &sp[-1])); ip += 1; vmbreak;
		vmcase(MSGLEN) *sp++ = nvm_op_msglen(x); ip += 1; vmbreak;
		vmcase(SENDER) *sp++ = nvm_op_sender(x); ip += 1; vmbreak;
		vmcase(SELF) *sp++ = nvm_op_self(x); ip += 1; vmbreak;
		vmcase(DISPLAY) nvm_op_display(x, *--sp); ip += 1; vmbreak;
		vmcase(FLAG) sp--; CHECK(nvm_op_flag(x, *sp)); ip += 1; vmbreak;
		vmcase(UNLOCK) sp--; CHECK(nvm_op_unlock(x, *sp)); ip += 1; vmbreak;
		vmcase(LOCKED) CHECK(nvm_op_locked(x, sp[-1], &sp[-1])); ip += 1; vmbreak;
		vmcase(AWAIT) {
			x->pc = (uint32_t)(ip + 1 - code);
			result = NVM_R_AWAIT;
			goto out;
		}
		vmcase(RET) {
			if (*x->cont_pc != NVM_NO_PC) {
				ip = code + *x->cont_pc;
				*x->cont_pc = NVM_NO_PC;
				sp = stack;
				vmbreak;
			}
			result = NVM_R_IDLE;
			goto out;
		}
		vmcase(STOP) result = NVM_R_STOP; goto out;
#ifndef NVM_USE_GOTO
		default:
			FAULT(NVM_F_INDEX); /* unreachable after nvm_verify */
#endif
		}
	}
out_budget:
	fault = NVM_F_BUDGET;
out_fault:
	x->fault = fault;
	x->pc = (uint32_t)(ip - code);
	result = NVM_R_FAULT;
out:
	x->budget = budget ? budget - 1 : 0;
	return result;
}
