/*
 * pdl_parse.h - the PDL parser: source text to a checked syntax tree (pdl_unit).
 * Names are resolved here (undeclared, duplicate, scalar vs array, undeclared
 * trigger), constants are folded; code generation is pdl_emit's.
 *
 * Grammar (case-insensitive; ';' between statements may be left out):
 *   program  = PROGRAM name ':' { decl } [ block [';'] ] { trigger } END [';' | '.']
 *   decl     = VAR name ['[' const ']'] {',' ...} ';'
 *            | CONST name '=' const {',' ...} ';'
 *            | TRIGGERS const {',' const} ';'
 *   trigger  = MESSAGE const ':' stmt [';']
 *   stmt     = lvalue '=' expr | IF expr THEN stmt [ELSE stmt] | WHILE expr DO stmt
 *            | BEGIN {stmt} END | AWAIT | STOP | DISPLAY expr
 *            | SEND buf LEN expr AS expr [TO expr] [AT byte {':' byte}]
 *            | REPLY buf LEN expr AS expr
 *            | DELIVER buf OFFSET expr INTO expr LEN expr
 *            | GET buf OFFSET expr FROM (MESSAGE | expr) LEN expr
 *            | FLAG expr | UNLOCK expr
 *   expr     = or-expression over: OR; AND; NOT; = == <> != < <= > >=;
 *              | ^; &; << >>; + -; * / % MOD; unary - ~; primary
 *   primary  = number | name | name '[' expr ']' | '(' expr ')' | CLOCK | MSGLEN
 *            | SENDER | FIELD '(' expr ')' | BYTE '(' expr ')' | LOCKED '(' expr ')'
 */
#ifndef PDL_PARSE_H
#define PDL_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "nvm_module.h"
#include "pdl_lex.h"

enum pdl_expr_kind {
	PDL_E_NUM, PDL_E_VAR, PDL_E_BIN, PDL_E_NEG, PDL_E_BNOT, PDL_E_LNOT, PDL_E_AND, PDL_E_OR,
	PDL_E_CLOCK, PDL_E_MSGLEN, PDL_E_SENDER, PDL_E_FIELD, PDL_E_BYTE, PDL_E_LOCKED
};

struct pdl_expr {
	int kind;
	int op;             /* PDL_E_BIN: the operator's token kind */
	int64_t val;        /* PDL_E_NUM */
	int var;            /* PDL_E_VAR: variable index */
	struct pdl_expr *a, *b; /* operands; PDL_E_VAR: a = index or NULL */
	int line, col;
};

enum pdl_stmt_kind {
	PDL_S_ASSIGN, PDL_S_IF, PDL_S_WHILE, PDL_S_BLOCK, PDL_S_AWAIT, PDL_S_STOP, PDL_S_DISPLAY,
	PDL_S_SEND, PDL_S_REPLY, PDL_S_DELIVER, PDL_S_GET, PDL_S_GETMSG, PDL_S_FLAG, PDL_S_UNLOCK
};

/* A buffer operand (SEND/REPLY/DELIVER/GET): variable and element index. */
struct pdl_buf {
	int var;
	struct pdl_expr *index; /* NULL = element 0 */
};

struct pdl_stmt {
	int kind;
	int line, col;
	struct pdl_stmt *next;      /* in a block */
	struct pdl_buf buf;         /* ASSIGN target, or the buffer of SEND..GET */
	struct pdl_expr *e[4];      /* ASSIGN: value; IF/WHILE: cond; SEND: len trig prog;
				     * REPLY: len trig; DELIVER/GET: off seg len; GETMSG: off len;
				     * DISPLAY/FLAG/UNLOCK: operand */
	struct pdl_stmt *body, *els; /* IF/WHILE/BLOCK */
	int addr;                   /* SEND: address table index, -1 = this VM */
};

struct pdl_sym_var {
	char name[PDL_NAME_MAX + 1];
	uint32_t off, len;
	int array;
};

struct pdl_sym_const {
	char name[PDL_NAME_MAX + 1];
	int64_t val;
};

struct pdl_trigger {
	uint16_t id;
	struct pdl_stmt *body; /* NULL: declared, no MESSAGE block */
	int line, col;
};

struct pdl_unit {
	char name[PDL_NAME_MAX + 1];
	struct pdl_sym_var *vars;
	int nvars;
	struct pdl_sym_const *consts;
	int nconsts;
	struct pdl_trigger *trigs;
	int ntrigs;
	struct nvm_addr *addrs;
	int naddrs;
	uint32_t data_words;
	struct pdl_stmt *init; /* BEGIN block or NULL */
	struct pdl_arena *arena;
};

/* Parse src.  0 and *out, or -EINVAL with "file:line:col: error: ..." in err. */
int pdl_parse(const char *file, const char *src, size_t len, struct pdl_unit **out,
	      char *err, size_t errlen);
void pdl_unit_free(struct pdl_unit *u);

#endif
