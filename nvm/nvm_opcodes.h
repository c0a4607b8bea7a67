/*
 * nvm_opcodes.h - the NIC virtual machine instruction set, one line per opcode.
 *
 * This table is the single source of truth: the emitter, the verifier, the
 * disassembler and both interpreter builds (computed goto and switch) are
 * generated from it.  Change an instruction here and everything follows.
 *
 * Machine model: a stack machine over signed 64-bit words.  A program owns a
 * data section of words (its variables) and, per activation, an operand stack
 * of at most NVM_STACK_MAX words.  An instruction is one opcode byte followed
 * by its operand, little-endian, whose width is given by its operand kind.
 * Jumps are relative to the start of the next instruction, so code is
 * relocatable; variables are named by index into the module's variable
 * table and resolved relative to the program's data section, so data is too.
 *
 * Columns: X(name, operand kind, pops, pushes, flow, description)
 *   operand kinds: NONE (0 bytes), I8 (1, signed), I32 (4, signed),
 *                  I64 (8), VAR (2, variable index), ADR (2, address table
 *                  index, 0xffff = this VM), REL (4, signed jump offset)
 *   flow: NEXT (falls through), JUMP (always jumps), BRANCH (jumps or falls
 *         through), END (ends the activation, no fall through)
 *   Stack effects read "a b -> c" with b on top.
 */
#ifndef NVM_OPCODES_H
#define NVM_OPCODES_H

#include <stdint.h>

#define NVM_STACK_MAX 64     /* operand stack words per activation */
#define NVM_ADDR_LOCAL 0xffffu /* ADR operand meaning "this VM" */

#define NVM_OPCODES(X) \
	X(NOP,     NONE, 0, 0, NEXT,   "-> ; do nothing") \
	X(PUSH8,   I8,   0, 1, NEXT,   "-> k ; push sign-extended 8-bit constant") \
	X(PUSH32,  I32,  0, 1, NEXT,   "-> k ; push sign-extended 32-bit constant") \
	X(PUSH64,  I64,  0, 1, NEXT,   "-> k ; push 64-bit constant") \
	X(POP,     NONE, 1, 0, NEXT,   "a -> ; drop top of stack") \
	X(DUP,     NONE, 1, 2, NEXT,   "a -> a a ; duplicate top of stack") \
	X(LOAD,    VAR,  0, 1, NEXT,   "-> v[0] ; push scalar (element 0 of variable)") \
	X(STORE,   VAR,  1, 0, NEXT,   "a -> ; v[0] = a") \
	X(LOADX,   VAR,  1, 1, NEXT,   "i -> v[i] ; index checked against the variable's length") \
	X(STOREX,  VAR,  2, 0, NEXT,   "i a -> ; v[i] = a, index checked") \
	X(ADDR,    VAR,  1, 1, NEXT,   "i -> p ; byte address of v[i] in the data section, checked") \
	X(ADD,     NONE, 2, 1, NEXT,   "a b -> a+b ; wraps modulo 2^64") \
	X(SUB,     NONE, 2, 1, NEXT,   "a b -> a-b ; wraps") \
	X(MUL,     NONE, 2, 1, NEXT,   "a b -> a*b ; wraps") \
	X(DIV,     NONE, 2, 1, NEXT,   "a b -> a/b ; truncates, b = 0 faults") \
	X(MOD,     NONE, 2, 1, NEXT,   "a b -> a%b ; sign of a, b = 0 faults") \
	X(BAND,    NONE, 2, 1, NEXT,   "a b -> a&b") \
	X(BOR,     NONE, 2, 1, NEXT,   "a b -> a|b") \
	X(BXOR,    NONE, 2, 1, NEXT,   "a b -> a^b") \
	X(SHL,     NONE, 2, 1, NEXT,   "a b -> a<<(b&63)") \
	X(SHR,     NONE, 2, 1, NEXT,   "a b -> a>>(b&63) ; logical (zero fill)") \
	X(EQ,      NONE, 2, 1, NEXT,   "a b -> a==b ; 1 or 0") \
	X(NE,      NONE, 2, 1, NEXT,   "a b -> a!=b") \
	X(LT,      NONE, 2, 1, NEXT,   "a b -> a<b ; signed") \
	X(LE,      NONE, 2, 1, NEXT,   "a b -> a<=b") \
	X(GT,      NONE, 2, 1, NEXT,   "a b -> a>b") \
	X(GE,      NONE, 2, 1, NEXT,   "a b -> a>=b") \
	X(NEG,     NONE, 1, 1, NEXT,   "a -> -a ; wraps") \
	X(BNOT,    NONE, 1, 1, NEXT,   "a -> ~a") \
	X(LNOT,    NONE, 1, 1, NEXT,   "a -> !a ; 1 if a == 0 else 0") \
	X(JMP,     REL,  0, 0, JUMP,   "-> ; pc += off") \
	X(JZ,      REL,  1, 0, BRANCH, "a -> ; if a == 0 then pc += off") \
	X(JNZ,     REL,  1, 0, BRANCH, "a -> ; if a != 0 then pc += off") \
	X(CLOCK,   NONE, 0, 1, NEXT,   "-> t ; monotonic clock in nanoseconds") \
	X(SEND,    ADR,  4, 0, NEXT,   "p n trig prog -> ; send n bytes at data p to (prog, trig) at address") \
	X(REPLY,   NONE, 3, 0, NEXT,   "p n trig -> ; send n bytes at data p to the sender of this message") \
	X(DELIVER, NONE, 4, 0, NEXT,   "p off seg n -> ; copy n bytes data p -> segment seg at off") \
	X(GET,     NONE, 4, 0, NEXT,   "p off seg n -> ; copy n bytes segment seg at off -> data p") \
	X(GETMSG,  NONE, 3, 0, NEXT,   "p off n -> ; copy n bytes of the message payload at off -> data p") \
	X(MSGW,    NONE, 1, 1, NEXT,   "i -> w ; 64-bit word i of the message payload, checked") \
	X(MSGB,    NONE, 1, 1, NEXT,   "i -> b ; byte i of the message payload (0..255), checked") \
	X(MSGLEN,  NONE, 0, 1, NEXT,   "-> n ; payload length of the message in bytes (0 outside MESSAGE)") \
	X(SENDER,  NONE, 0, 1, NEXT,   "-> prog ; program id of the sender (0 = host)") \
	X(SELF,    NONE, 0, 1, NEXT,   "-> prog ; this program's id") \
	X(DISPLAY, NONE, 1, 0, NEXT,   "a -> ; append a to the VM's display buffer for the host") \
	X(FLAG,    NONE, 1, 0, NEXT,   "seg -> ; set the flag of segment seg (host clears it)") \
	X(UNLOCK,  NONE, 1, 0, NEXT,   "seg -> ; clear the lock of segment seg (host sets it)") \
	X(LOCKED,  NONE, 1, 1, NEXT,   "seg -> l ; 1 if the host holds the lock of segment seg") \
	X(AWAIT,   NONE, 0, 0, NEXT,   "-> ; yield: save pc, end activation; resumes after the next handler returns (stack must be empty)") \
	X(RET,     NONE, 0, 0, END,    "-> ; end of a block: resume a saved AWAIT, else go idle") \
	X(STOP,    NONE, 0, 0, END,    "-> ; stop the program for good")

enum nvm_opcode {
#define NVM_X_ENUM(name, kind, pop, push, flow, doc) NVM_OP_##name,
	NVM_OPCODES(NVM_X_ENUM)
#undef NVM_X_ENUM
	NVM_OP__COUNT
};

enum nvm_operand_kind { NVM_OPND_NONE, NVM_OPND_I8, NVM_OPND_I32, NVM_OPND_I64,
			NVM_OPND_VAR, NVM_OPND_ADR, NVM_OPND_REL };

enum nvm_flow { NVM_FLOW_NEXT, NVM_FLOW_JUMP, NVM_FLOW_BRANCH, NVM_FLOW_END };

struct nvm_opinfo {
	const char *name;
	uint8_t kind;  /* enum nvm_operand_kind */
	uint8_t size;  /* operand bytes */
	uint8_t pops, pushes;
	uint8_t flow;  /* enum nvm_flow */
	const char *doc;
};

/* Operand widths by kind, in the order of enum nvm_operand_kind. */
#define NVM_OPND_SIZE_NONE 0
#define NVM_OPND_SIZE_I8   1
#define NVM_OPND_SIZE_I32  4
#define NVM_OPND_SIZE_I64  8
#define NVM_OPND_SIZE_VAR  2
#define NVM_OPND_SIZE_ADR  2
#define NVM_OPND_SIZE_REL  4

extern const struct nvm_opinfo nvm_opinfo[NVM_OP__COUNT]; /* nvm_opcodes.c */

#endif
