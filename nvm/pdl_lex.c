/* pdl_lex.c - the PDL lexer. */
#include "pdl_lex.h"
#include "common/sm_err.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const kw[] = {
#define PDL_X_KW(t, s) [PDL_T_##t] = s,
	PDL_KEYWORDS(PDL_X_KW)
#undef PDL_X_KW
};

const char *pdl_tok_str(int kind)
{
	static const char *const punct[] = {
		[PDL_T_EOF] = "end of file", [PDL_T_NUM] = "number", [PDL_T_NAME] = "name",
		[PDL_T_LPAREN] = "'('", [PDL_T_RPAREN] = "')'", [PDL_T_LBRACK] = "'['",
		[PDL_T_RBRACK] = "']'", [PDL_T_COMMA] = "','", [PDL_T_SEMI] = "';'",
		[PDL_T_COLON] = "':'", [PDL_T_DOT] = "'.'", [PDL_T_ASSIGN] = "'='",
		[PDL_T_EQ] = "'=='", [PDL_T_NE] = "'<>'", [PDL_T_LT] = "'<'", [PDL_T_LE] = "'<='",
		[PDL_T_GT] = "'>'", [PDL_T_GE] = "'>='", [PDL_T_PLUS] = "'+'", [PDL_T_MINUS] = "'-'",
		[PDL_T_STAR] = "'*'", [PDL_T_SLASH] = "'/'", [PDL_T_PERCENT] = "'%'",
		[PDL_T_AMP] = "'&'", [PDL_T_BAR] = "'|'", [PDL_T_CARET] = "'^'",
		[PDL_T_TILDE] = "'~'", [PDL_T_SHL] = "'<<'", [PDL_T_SHR] = "'>>'",
	};
	if (kind >= 0 && kind < PDL_T_PROGRAM)
		return punct[kind];
	if (kind >= PDL_T_PROGRAM && kind < PDL_T__COUNT)
		return kw[kind];
	return "?";
}

void pdl_lex_init(struct pdl_lexer *lx, const char *file, const char *src, size_t len,
		  char *err, size_t errlen, jmp_buf *fail)
{
	*lx = (struct pdl_lexer){ file, src, len, 0, 1, 1, err, errlen, fail };
}

_Noreturn void pdl_error(struct pdl_lexer *lx, int line, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sm_err(lx->err, lx->errlen, 0, "%s:%d:%d: error: ", lx->file, line, col);
	sm_verr_append(lx->err, lx->errlen, 0, fmt, ap);
	va_end(ap);
	longjmp(*lx->fail, 1);
}

static int peekc(const struct pdl_lexer *lx, size_t ahead)
{
	return lx->pos + ahead < lx->len ? (unsigned char)lx->src[lx->pos + ahead] : -1;
}

static void advance(struct pdl_lexer *lx)
{
	if (lx->src[lx->pos] == '\n') {
		lx->line++;
		lx->col = 1;
	} else {
		lx->col++;
	}
	lx->pos++;
}

static void skip_space(struct pdl_lexer *lx)
{
	for (;;) {
		int c = peekc(lx, 0);
		if (c == '#') {
			while (peekc(lx, 0) != -1 && peekc(lx, 0) != '\n')
				advance(lx);
		} else if (c != -1 && isspace(c)) {
			advance(lx);
		} else {
			return;
		}
	}
}

static void lex_number(struct pdl_lexer *lx, struct pdl_token *t)
{
	uint64_t v = 0;
	int base = 10, digits = 0;
	if (peekc(lx, 0) == '0' && (peekc(lx, 1) == 'x' || peekc(lx, 1) == 'X')) {
		base = 16;
		advance(lx);
		advance(lx);
	}
	for (;;) {
		int c = peekc(lx, 0), dv;
		if (c >= '0' && c <= '9')
			dv = c - '0';
		else if (base == 16 && isxdigit(c))
			dv = tolower(c) - 'a' + 10;
		else
			break;
		if (v > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base)
			pdl_error(lx, t->line, t->col, "number too large");
		v = v * (uint64_t)base + (uint64_t)dv;
		digits++;
		advance(lx);
	}
	if (!digits)
		pdl_error(lx, t->line, t->col, "hexadecimal number without digits");
	if (isalnum(peekc(lx, 0)) || peekc(lx, 0) == '_')
		pdl_error(lx, lx->line, lx->col, "bad character '%c' in number", peekc(lx, 0));
	if (v > INT64_MAX && !(base == 16))
		pdl_error(lx, t->line, t->col, "number too large");
	t->kind = PDL_T_NUM;
	t->num = (int64_t)v;
}

static void lex_word(struct pdl_lexer *lx, struct pdl_token *t)
{
	size_t n = 0;
	while (isalnum(peekc(lx, 0)) || peekc(lx, 0) == '_') {
		if (n == PDL_NAME_MAX)
			pdl_error(lx, t->line, t->col, "name longer than %d characters", PDL_NAME_MAX);
		t->name[n++] = (char)tolower(peekc(lx, 0));
		advance(lx);
	}
	t->name[n] = '\0';
	t->kind = PDL_T_NAME;
	for (int k = PDL_T_PROGRAM; k < PDL_T__COUNT; k++)
		if (strcmp(kw[k], t->name) == 0) {
			t->kind = k;
			break;
		}
}

void pdl_lex_next(struct pdl_lexer *lx, struct pdl_token *t)
{
	skip_space(lx);
	memset(t, 0, sizeof(*t));
	t->line = lx->line;
	t->col = lx->col;
	int c = peekc(lx, 0);
	if (c == -1) {
		t->kind = PDL_T_EOF;
		return;
	}
	if (isdigit(c)) {
		lex_number(lx, t);
		return;
	}
	if (isalpha(c) || c == '_') {
		lex_word(lx, t);
		return;
	}
	int c1 = peekc(lx, 1), two = 0;
	switch (c) {
	case '(': t->kind = PDL_T_LPAREN; break;
	case ')': t->kind = PDL_T_RPAREN; break;
	case '[': t->kind = PDL_T_LBRACK; break;
	case ']': t->kind = PDL_T_RBRACK; break;
	case ',': t->kind = PDL_T_COMMA; break;
	case ';': t->kind = PDL_T_SEMI; break;
	case ':': t->kind = PDL_T_COLON; break;
	case '.': t->kind = PDL_T_DOT; break;
	case '+': t->kind = PDL_T_PLUS; break;
	case '-': t->kind = PDL_T_MINUS; break;
	case '*': t->kind = PDL_T_STAR; break;
	case '/': t->kind = PDL_T_SLASH; break;
	case '%': t->kind = PDL_T_PERCENT; break;
	case '&': t->kind = PDL_T_AMP; break;
	case '|': t->kind = PDL_T_BAR; break;
	case '^': t->kind = PDL_T_CARET; break;
	case '~': t->kind = PDL_T_TILDE; break;
	case '=': t->kind = c1 == '=' ? (two = 1, PDL_T_EQ) : PDL_T_ASSIGN; break;
	case '!':
		if (c1 != '=')
			pdl_error(lx, t->line, t->col, "unexpected '!' (did you mean '!=' or NOT?)");
		t->kind = PDL_T_NE;
		two = 1;
		break;
	case '<':
		if (c1 == '=' || c1 == '>' || c1 == '<')
			two = 1;
		t->kind = c1 == '=' ? PDL_T_LE : c1 == '>' ? PDL_T_NE : c1 == '<' ? PDL_T_SHL : PDL_T_LT;
		break;
	case '>':
		if (c1 == '=' || c1 == '>')
			two = 1;
		t->kind = c1 == '=' ? PDL_T_GE : c1 == '>' ? PDL_T_SHR : PDL_T_GT;
		break;
	default:
		if (isprint(c))
			pdl_error(lx, t->line, t->col, "unexpected character '%c'", c);
		pdl_error(lx, t->line, t->col, "unexpected byte 0x%02x", c);
	}
	advance(lx);
	if (two)
		advance(lx);
}
