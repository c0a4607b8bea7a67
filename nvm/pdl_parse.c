/* pdl_parse.c - recursive-descent parser for PDL, producing a checked tree. */
#include "pdl_parse.h"

#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

struct pdl_arena {
	struct pdl_arena *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
};

struct parser {
	struct pdl_lexer lx;
	struct pdl_token tok, ahead;
	int have_ahead;
	struct pdl_unit *u;
	int depth;
};

#define MAX_DEPTH 1000 /* nesting of expressions and statements */

static void *arena_alloc(struct parser *p, size_t n)
{
	struct pdl_arena *a = p->u->arena;
	n = (n + 15) & ~(size_t)15;
	if (!a || a->cap - a->used < n) {
		size_t cap = n > 16384 ? n : 16384;
		struct pdl_arena *na = malloc(sizeof(*na) + cap);
		if (!na)
			pdl_error(&p->lx, p->tok.line, p->tok.col, "out of memory");
		na->next = a;
		na->used = 0;
		na->cap = cap;
		p->u->arena = a = na;
	}
	void *r = a->mem + a->used;
	a->used += n;
	memset(r, 0, n);
	return r;
}

/* Grow a table by one element, with a hard cap. */
static void *grow(struct parser *p, void *arr, int *n, size_t elem, int max, const char *what)
{
	if (*n >= max)
		pdl_error(&p->lx, p->tok.line, p->tok.col, "too many %s (at most %d)", what, max);
	void *r = realloc(arr, (size_t)(*n + 1) * elem);
	if (!r)
		pdl_error(&p->lx, p->tok.line, p->tok.col, "out of memory");
	memset((char *)r + (size_t)*n * elem, 0, elem);
	(*n)++;
	return r;
}

void pdl_unit_free(struct pdl_unit *u)
{
	if (!u)
		return;
	while (u->arena) {
		struct pdl_arena *n = u->arena->next;
		free(u->arena);
		u->arena = n;
	}
	free(u->vars);
	free(u->consts);
	free(u->trigs);
	free(u->addrs);
	free(u);
}

/* ---- tokens ---- */

static void next(struct parser *p)
{
	if (p->have_ahead) {
		p->tok = p->ahead;
		p->have_ahead = 0;
	} else {
		pdl_lex_next(&p->lx, &p->tok);
	}
}

static const struct pdl_token *peek2(struct parser *p)
{
	if (!p->have_ahead) {
		pdl_lex_next(&p->lx, &p->ahead);
		p->have_ahead = 1;
	}
	return &p->ahead;
}

static int accept(struct parser *p, int kind)
{
	if (p->tok.kind != kind)
		return 0;
	next(p);
	return 1;
}

static _Noreturn void unexpected(struct parser *p, const char *wanted)
{
	const char *got = p->tok.kind == PDL_T_NAME ? p->tok.name : pdl_tok_str(p->tok.kind);
	pdl_error(&p->lx, p->tok.line, p->tok.col, "expected %s, found %s%s%s", wanted,
		  p->tok.kind == PDL_T_NAME ? "'" : "", got, p->tok.kind == PDL_T_NAME ? "'" : "");
}

static void expect(struct parser *p, int kind, const char *wanted)
{
	if (!accept(p, kind))
		unexpected(p, wanted);
}

static void enter(struct parser *p)
{
	if (++p->depth > MAX_DEPTH)
		pdl_error(&p->lx, p->tok.line, p->tok.col, "nesting deeper than %d", MAX_DEPTH);
}

/* ---- symbols ---- */

static int find_var(struct pdl_unit *u, const char *name)
{
	for (int i = 0; i < u->nvars; i++)
		if (strcmp(u->vars[i].name, name) == 0)
			return i;
	return -1;
}

static int find_const(struct pdl_unit *u, const char *name)
{
	for (int i = 0; i < u->nconsts; i++)
		if (strcmp(u->consts[i].name, name) == 0)
			return i;
	return -1;
}

static int find_trig(struct pdl_unit *u, int64_t id)
{
	for (int i = 0; i < u->ntrigs; i++)
		if (u->trigs[i].id == id)
			return i;
	return -1;
}

static void check_new_name(struct parser *p, const struct pdl_token *t)
{
	if (find_var(p->u, t->name) >= 0 || find_const(p->u, t->name) >= 0)
		pdl_error(&p->lx, t->line, t->col, "'%s' is already declared", t->name);
}

/* ---- expressions ---- */

static struct pdl_expr *expr(struct parser *p);

static struct pdl_expr *mk(struct parser *p, int kind, const struct pdl_token *at)
{
	struct pdl_expr *e = arena_alloc(p, sizeof(*e));
	e->kind = kind;
	e->line = at->line;
	e->col = at->col;
	return e;
}

/* Fold e if it is constant: 1 and *v, else 0.  Errors on constant division by zero. */
static int fold(struct parser *p, const struct pdl_expr *e, int64_t *v)
{
	int64_t a, b;
	switch (e->kind) {
	case PDL_E_NUM:
		*v = e->val;
		return 1;
	case PDL_E_NEG:
		if (!fold(p, e->a, &a))
			return 0;
		*v = (int64_t)(0 - (uint64_t)a);
		return 1;
	case PDL_E_BNOT:
		if (!fold(p, e->a, &a))
			return 0;
		*v = ~a;
		return 1;
	case PDL_E_LNOT:
		if (!fold(p, e->a, &a))
			return 0;
		*v = !a;
		return 1;
	case PDL_E_AND:
	case PDL_E_OR:
		if (!fold(p, e->a, &a) || !fold(p, e->b, &b))
			return 0;
		*v = e->kind == PDL_E_AND ? (a && b) : (a || b);
		return 1;
	case PDL_E_BIN:
		break;
	default:
		return 0;
	}
	if (!fold(p, e->a, &a) || !fold(p, e->b, &b))
		return 0;
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	switch (e->op) {
	case PDL_T_PLUS: *v = (int64_t)(ua + ub); break;
	case PDL_T_MINUS: *v = (int64_t)(ua - ub); break;
	case PDL_T_STAR: *v = (int64_t)(ua * ub); break;
	case PDL_T_SLASH:
	case PDL_T_PERCENT:
	case PDL_T_MOD:
		if (b == 0)
			pdl_error(&p->lx, e->line, e->col, "division by zero in a constant expression");
		if (b == -1)
			*v = e->op == PDL_T_SLASH ? (int64_t)(0 - ua) : 0;
		else
			*v = e->op == PDL_T_SLASH ? a / b : a % b;
		break;
	case PDL_T_AMP: *v = a & b; break;
	case PDL_T_BAR: *v = a | b; break;
	case PDL_T_CARET: *v = a ^ b; break;
	case PDL_T_SHL: *v = (int64_t)(ua << (ub & 63)); break;
	case PDL_T_SHR: *v = (int64_t)(ua >> (ub & 63)); break;
	case PDL_T_EQ: *v = a == b; break;
	case PDL_T_NE: *v = a != b; break;
	case PDL_T_LT: *v = a < b; break;
	case PDL_T_LE: *v = a <= b; break;
	case PDL_T_GT: *v = a > b; break;
	case PDL_T_GE: *v = a >= b; break;
	default: return 0;
	}
	return 1;
}

static int64_t const_expr(struct parser *p, const char *what)
{
	struct pdl_token at = p->tok;
	int64_t v;
	if (!fold(p, expr(p), &v))
		pdl_error(&p->lx, at.line, at.col, "%s must be a constant expression", what);
	return v;
}

/* name ['[' expr ']'] after the name token has been read into t. */
static struct pdl_expr *var_ref(struct parser *p, const struct pdl_token *t)
{
	int c = find_const(p->u, t->name);
	if (c >= 0) {
		struct pdl_expr *e = mk(p, PDL_E_NUM, t);
		e->val = p->u->consts[c].val;
		return e;
	}
	int v = find_var(p->u, t->name);
	if (v < 0)
		pdl_error(&p->lx, t->line, t->col, "'%s' is not declared", t->name);
	struct pdl_expr *e = mk(p, PDL_E_VAR, t);
	e->var = v;
	if (accept(p, PDL_T_LBRACK)) {
		if (!p->u->vars[v].array)
			pdl_error(&p->lx, t->line, t->col, "'%s' is not an array", t->name);
		e->a = expr(p);
		expect(p, PDL_T_RBRACK, "']'");
	} else if (p->u->vars[v].array) {
		pdl_error(&p->lx, t->line, t->col, "array '%s' needs an index", t->name);
	}
	return e;
}

static struct pdl_expr *paren_arg(struct parser *p)
{
	expect(p, PDL_T_LPAREN, "'('");
	struct pdl_expr *e = expr(p);
	expect(p, PDL_T_RPAREN, "')'");
	return e;
}

static struct pdl_expr *primary(struct parser *p)
{
	struct pdl_token t = p->tok;
	struct pdl_expr *e;
	switch (t.kind) {
	case PDL_T_NUM:
		next(p);
		e = mk(p, PDL_E_NUM, &t);
		e->val = t.num;
		return e;
	case PDL_T_NAME:
		next(p);
		return var_ref(p, &t);
	case PDL_T_LPAREN:
		return paren_arg(p);
	case PDL_T_CLOCK:
		next(p);
		return mk(p, PDL_E_CLOCK, &t);
	case PDL_T_MSGLEN:
		next(p);
		return mk(p, PDL_E_MSGLEN, &t);
	case PDL_T_SENDER:
		next(p);
		return mk(p, PDL_E_SENDER, &t);
	case PDL_T_FIELD:
	case PDL_T_BYTE:
	case PDL_T_LOCKED:
		next(p);
		e = mk(p, t.kind == PDL_T_FIELD ? PDL_E_FIELD :
			  t.kind == PDL_T_BYTE ? PDL_E_BYTE : PDL_E_LOCKED, &t);
		e->a = paren_arg(p);
		return e;
	default:
		unexpected(p, "an expression");
	}
}

static struct pdl_expr *unary(struct parser *p)
{
	struct pdl_token t = p->tok;
	if (t.kind == PDL_T_MINUS || t.kind == PDL_T_TILDE) {
		next(p);
		enter(p);
		struct pdl_expr *e = mk(p, t.kind == PDL_T_MINUS ? PDL_E_NEG : PDL_E_BNOT, &t);
		e->a = unary(p);
		p->depth--;
		return e;
	}
	return primary(p);
}

/* Binary levels, loosest first; each lists its operators, 0-terminated. */
static const int levels[][7] = {
	{ PDL_T_ASSIGN, PDL_T_EQ, PDL_T_NE, PDL_T_LT, PDL_T_LE, PDL_T_GT, PDL_T_GE },
	{ PDL_T_BAR, PDL_T_CARET },
	{ PDL_T_AMP },
	{ PDL_T_SHL, PDL_T_SHR },
	{ PDL_T_PLUS, PDL_T_MINUS },
	{ PDL_T_STAR, PDL_T_SLASH, PDL_T_PERCENT, PDL_T_MOD },
};
#define NLEVELS ((int)(sizeof(levels) / sizeof(levels[0])))

static int in_level(int level, int kind)
{
	for (int i = 0; i < 7 && levels[level][i]; i++)
		if (levels[level][i] == kind)
			return 1;
	return 0;
}

static struct pdl_expr *binary(struct parser *p, int level)
{
	if (level == NLEVELS)
		return unary(p);
	enter(p);
	struct pdl_expr *l = binary(p, level + 1);
	while (in_level(level, p->tok.kind)) {
		struct pdl_token t = p->tok;
		next(p);
		struct pdl_expr *e = mk(p, PDL_E_BIN, &t);
		e->op = t.kind == PDL_T_ASSIGN ? PDL_T_EQ : t.kind;
		if (e->op == PDL_T_MOD)
			e->op = PDL_T_PERCENT;
		e->a = l;
		e->b = binary(p, level + 1);
		l = e;
		if (level == 0 && in_level(0, p->tok.kind))
			pdl_error(&p->lx, p->tok.line, p->tok.col,
				  "comparisons do not chain; use AND");
	}
	p->depth--;
	return l;
}

static struct pdl_expr *not_expr(struct parser *p)
{
	struct pdl_token t = p->tok;
	if (accept(p, PDL_T_NOT)) {
		enter(p);
		struct pdl_expr *e = mk(p, PDL_E_LNOT, &t);
		e->a = not_expr(p);
		p->depth--;
		return e;
	}
	return binary(p, 0);
}

static struct pdl_expr *and_expr(struct parser *p)
{
	struct pdl_expr *l = not_expr(p);
	while (p->tok.kind == PDL_T_AND) {
		struct pdl_token t = p->tok;
		next(p);
		enter(p);
		struct pdl_expr *e = mk(p, PDL_E_AND, &t);
		e->a = l;
		e->b = not_expr(p);
		l = e;
		p->depth--;
	}
	return l;
}

static struct pdl_expr *expr(struct parser *p)
{
	enter(p);
	struct pdl_expr *l = and_expr(p);
	while (p->tok.kind == PDL_T_OR) {
		struct pdl_token t = p->tok;
		next(p);
		struct pdl_expr *e = mk(p, PDL_E_OR, &t);
		e->a = l;
		e->b = and_expr(p);
		l = e;
	}
	p->depth--;
	return l;
}

/* ---- statements ---- */

static struct pdl_stmt *stmt(struct parser *p);

static struct pdl_stmt *mks(struct parser *p, int kind, const struct pdl_token *at)
{
	struct pdl_stmt *s = arena_alloc(p, sizeof(*s));
	s->kind = kind;
	s->line = at->line;
	s->col = at->col;
	s->addr = -1;
	return s;
}

/* A buffer operand: a variable, optionally indexed (no index = element 0). */
static void buffer(struct parser *p, struct pdl_buf *b)
{
	struct pdl_token t = p->tok;
	expect(p, PDL_T_NAME, "a variable");
	b->var = find_var(p->u, t.name);
	if (b->var < 0)
		pdl_error(&p->lx, t.line, t.col, "'%s' is not a declared variable", t.name);
	b->index = NULL;
	if (accept(p, PDL_T_LBRACK)) {
		if (!p->u->vars[b->var].array)
			pdl_error(&p->lx, t.line, t.col, "'%s' is not an array", t.name);
		b->index = expr(p);
		expect(p, PDL_T_RBRACK, "']'");
	}
	int64_t i;
	if (b->index && fold(p, b->index, &i) &&
	    (i < 0 || (uint64_t)i >= p->u->vars[b->var].len))
		pdl_error(&p->lx, t.line, t.col, "index %lld outside '%s' [0..%u)", (long long)i,
			  t.name, p->u->vars[b->var].len);
}

static int address(struct parser *p)
{
	struct nvm_addr a = { 0 };
	struct pdl_token t = p->tok;
	do {
		struct pdl_token b = p->tok;
		expect(p, PDL_T_NUM, "an address byte");
		if (b.num < 0 || b.num > 255)
			pdl_error(&p->lx, b.line, b.col, "address byte %lld is not in 0..255",
				  (long long)b.num);
		if (a.len == NVM_ADDR_MAX)
			pdl_error(&p->lx, t.line, t.col, "address longer than %d bytes", NVM_ADDR_MAX);
		a.b[a.len++] = (uint8_t)b.num;
	} while (accept(p, PDL_T_COLON));
	struct pdl_unit *u = p->u;
	for (int i = 0; i < u->naddrs; i++)
		if (u->addrs[i].len == a.len && memcmp(u->addrs[i].b, a.b, a.len) == 0)
			return i;
	u->addrs = grow(p, u->addrs, &u->naddrs, sizeof(*u->addrs), NVM_ADDRS_MAX, "addresses");
	u->addrs[u->naddrs - 1] = a;
	return u->naddrs - 1;
}

static struct pdl_stmt *block_body(struct parser *p, const struct pdl_token *at)
{
	struct pdl_stmt *s = mks(p, PDL_S_BLOCK, at), **tail = &s->body;
	for (;;) {
		if (accept(p, PDL_T_SEMI))
			continue;
		if (accept(p, PDL_T_END))
			return s;
		if (p->tok.kind == PDL_T_EOF)
			pdl_error(&p->lx, at->line, at->col, "BEGIN without END");
		*tail = stmt(p);
		tail = &(*tail)->next;
	}
}

static struct pdl_stmt *stmt_send(struct parser *p, const struct pdl_token *t, int reply)
{
	struct pdl_stmt *s = mks(p, reply ? PDL_S_REPLY : PDL_S_SEND, t);
	buffer(p, &s->buf);
	expect(p, PDL_T_LEN, "LEN");
	s->e[0] = expr(p);
	expect(p, PDL_T_AS, "AS");
	s->e[1] = expr(p);
	if (reply)
		return s;
	if (accept(p, PDL_T_TO))
		s->e[2] = expr(p);
	if (accept(p, PDL_T_AT))
		s->addr = address(p);
	return s;
}

static struct pdl_stmt *stmt_copy(struct parser *p, const struct pdl_token *t, int get)
{
	struct pdl_stmt *s = mks(p, get ? PDL_S_GET : PDL_S_DELIVER, t);
	buffer(p, &s->buf);
	expect(p, PDL_T_OFFSET, "OFFSET");
	s->e[0] = expr(p);
	if (get) {
		expect(p, PDL_T_FROM, "FROM");
		if (accept(p, PDL_T_MESSAGE))
			s->kind = PDL_S_GETMSG;
		else
			s->e[1] = expr(p);
	} else {
		expect(p, PDL_T_INTO, "INTO");
		s->e[1] = expr(p);
	}
	expect(p, PDL_T_LEN, "LEN");
	s->e[2] = expr(p);
	return s;
}

static struct pdl_stmt *stmt(struct parser *p)
{
	struct pdl_token t = p->tok;
	struct pdl_stmt *s;
	enter(p);
	switch (t.kind) {
	case PDL_T_NAME: {
		next(p);
		if (find_const(p->u, t.name) >= 0)
			pdl_error(&p->lx, t.line, t.col, "cannot assign to constant '%s'", t.name);
		struct pdl_expr *target = var_ref(p, &t);
		s = mks(p, PDL_S_ASSIGN, &t);
		s->buf.var = target->var;
		s->buf.index = target->a;
		expect(p, PDL_T_ASSIGN, "'='");
		s->e[0] = expr(p);
		break;
	}
	case PDL_T_IF:
		next(p);
		s = mks(p, PDL_S_IF, &t);
		s->e[0] = expr(p);
		expect(p, PDL_T_THEN, "THEN");
		s->body = stmt(p);
		if (p->tok.kind == PDL_T_SEMI && peek2(p)->kind == PDL_T_ELSE)
			next(p);
		if (accept(p, PDL_T_ELSE))
			s->els = stmt(p);
		break;
	case PDL_T_WHILE:
		next(p);
		s = mks(p, PDL_S_WHILE, &t);
		s->e[0] = expr(p);
		expect(p, PDL_T_DO, "DO");
		s->body = stmt(p);
		break;
	case PDL_T_BEGIN:
		next(p);
		s = block_body(p, &t);
		break;
	case PDL_T_AWAIT:
	case PDL_T_STOP:
		next(p);
		s = mks(p, t.kind == PDL_T_AWAIT ? PDL_S_AWAIT : PDL_S_STOP, &t);
		break;
	case PDL_T_DISPLAY:
	case PDL_T_FLAG:
	case PDL_T_UNLOCK:
		next(p);
		s = mks(p, t.kind == PDL_T_DISPLAY ? PDL_S_DISPLAY :
			   t.kind == PDL_T_FLAG ? PDL_S_FLAG : PDL_S_UNLOCK, &t);
		s->e[0] = expr(p);
		break;
	case PDL_T_SEND:
	case PDL_T_REPLY:
		next(p);
		s = stmt_send(p, &t, t.kind == PDL_T_REPLY);
		break;
	case PDL_T_DELIVER:
	case PDL_T_GET:
		next(p);
		s = stmt_copy(p, &t, t.kind == PDL_T_GET);
		break;
	default:
		unexpected(p, "a statement");
	}
	p->depth--;
	return s;
}

/* ---- declarations and the program ---- */

static void decl_var(struct parser *p)
{
	struct pdl_unit *u = p->u;
	do {
		struct pdl_token t = p->tok;
		expect(p, PDL_T_NAME, "a variable name");
		check_new_name(p, &t);
		int64_t len = 1;
		int array = 0;
		if (accept(p, PDL_T_LBRACK)) {
			len = const_expr(p, "an array size");
			array = 1;
			expect(p, PDL_T_RBRACK, "']'");
			if (len < 1 || len > NVM_DATA_MAX_WORDS)
				pdl_error(&p->lx, t.line, t.col, "array size %lld of '%s' not in 1..%d",
					  (long long)len, t.name, NVM_DATA_MAX_WORDS);
		}
		if (u->data_words + len > NVM_DATA_MAX_WORDS)
			pdl_error(&p->lx, t.line, t.col, "variables exceed %d words",
				  NVM_DATA_MAX_WORDS);
		u->vars = grow(p, u->vars, &u->nvars, sizeof(*u->vars), NVM_VARS_MAX, "variables");
		struct pdl_sym_var *v = &u->vars[u->nvars - 1];
		memcpy(v->name, t.name, sizeof(v->name));
		v->off = u->data_words;
		v->len = (uint32_t)len;
		v->array = array;
		u->data_words += (uint32_t)len;
	} while (accept(p, PDL_T_COMMA));
}

static void decl_const(struct parser *p)
{
	struct pdl_unit *u = p->u;
	do {
		struct pdl_token t = p->tok;
		expect(p, PDL_T_NAME, "a constant name");
		check_new_name(p, &t);
		expect(p, PDL_T_ASSIGN, "'='");
		int64_t v = const_expr(p, "a constant's value");
		u->consts = grow(p, u->consts, &u->nconsts, sizeof(*u->consts), 4096, "constants");
		memcpy(u->consts[u->nconsts - 1].name, t.name, sizeof(t.name));
		u->consts[u->nconsts - 1].val = v;
	} while (accept(p, PDL_T_COMMA));
}

static void decl_triggers(struct parser *p)
{
	struct pdl_unit *u = p->u;
	do {
		struct pdl_token t = p->tok;
		int64_t id = const_expr(p, "a trigger number");
		if (id < 0 || id > 0xffff)
			pdl_error(&p->lx, t.line, t.col, "trigger %lld not in 0..65535", (long long)id);
		if (find_trig(u, id) >= 0)
			pdl_error(&p->lx, t.line, t.col, "trigger %lld declared twice", (long long)id);
		u->trigs = grow(p, u->trigs, &u->ntrigs, sizeof(*u->trigs), NVM_TRIG_MAX, "triggers");
		u->trigs[u->ntrigs - 1].id = (uint16_t)id;
		u->trigs[u->ntrigs - 1].line = t.line;
		u->trigs[u->ntrigs - 1].col = t.col;
	} while (accept(p, PDL_T_COMMA));
}

static void trigger_block(struct parser *p)
{
	struct pdl_token t = p->tok;
	int64_t id = const_expr(p, "a trigger number");
	int i = find_trig(p->u, id);
	if (i < 0)
		pdl_error(&p->lx, t.line, t.col, "MESSAGE %lld: trigger not declared in TRIGGERS",
			  (long long)id);
	if (p->u->trigs[i].body)
		pdl_error(&p->lx, t.line, t.col, "MESSAGE %lld: second block for this trigger",
			  (long long)id);
	expect(p, PDL_T_COLON, "':'");
	p->u->trigs[i].body = stmt(p);
	accept(p, PDL_T_SEMI);
}

static void program(struct parser *p)
{
	expect(p, PDL_T_PROGRAM, "PROGRAM");
	struct pdl_token t = p->tok;
	expect(p, PDL_T_NAME, "the program name");
	memcpy(p->u->name, t.name, sizeof(t.name));
	expect(p, PDL_T_COLON, "':' after the program name");
	for (;;) {
		if (accept(p, PDL_T_VAR))
			decl_var(p);
		else if (accept(p, PDL_T_CONST))
			decl_const(p);
		else if (accept(p, PDL_T_TRIGGERS))
			decl_triggers(p);
		else
			break;
		expect(p, PDL_T_SEMI, "';' after the declaration");
	}
	struct pdl_token b = p->tok;
	if (accept(p, PDL_T_BEGIN)) {
		p->u->init = block_body(p, &b);
		accept(p, PDL_T_SEMI);
	}
	while (accept(p, PDL_T_MESSAGE))
		trigger_block(p);
	expect(p, PDL_T_END, "MESSAGE or the program's final END");
	if (!accept(p, PDL_T_SEMI))
		accept(p, PDL_T_DOT);
	if (p->tok.kind != PDL_T_EOF)
		unexpected(p, "end of file after the program's END");
}

int pdl_parse(const char *file, const char *src, size_t len, struct pdl_unit **out,
	      char *err, size_t errlen)
{
	jmp_buf fail;
	struct parser *p = calloc(1, sizeof(*p));
	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->u = calloc(1, sizeof(*p->u));
	if (!p->u) {
		free(p);
		return -ENOMEM;
	}
	pdl_lex_init(&p->lx, file ? file : "<input>", src, len, err, errlen, &fail);
	if (setjmp(fail)) {
		pdl_unit_free(p->u);
		free(p);
		return -EINVAL;
	}
	next(p);
	program(p);
	*out = p->u;
	free(p);
	return 0;
}
