/*
 * pdl_lex.h - the PDL lexer.  Keywords and names are case-insensitive: names come
 * out lower-cased, keywords as their own token kinds.  '#' starts a comment that
 * runs to the end of the line.  Numbers are decimal or 0x hexadecimal.
 */
#ifndef PDL_LEX_H
#define PDL_LEX_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#define PDL_NAME_MAX 31

/* Reserved words, in one list: X(token suffix, spelling). */
#define PDL_KEYWORDS(X) \
	X(PROGRAM, "program") X(VAR, "var") X(CONST, "const") X(TRIGGERS, "triggers") \
	X(BEGIN, "begin") X(END, "end") X(MESSAGE, "message") X(IF, "if") X(THEN, "then") \
	X(ELSE, "else") X(WHILE, "while") X(DO, "do") X(SEND, "send") X(LEN, "len") \
	X(AS, "as") X(TO, "to") X(AT, "at") X(AWAIT, "await") X(DELIVER, "deliver") \
	X(OFFSET, "offset") X(INTO, "into") X(GET, "get") X(FROM, "from") X(CLOCK, "clock") \
	X(DISPLAY, "display") X(STOP, "stop") X(REPLY, "reply") X(FIELD, "field") X(BYTE, "byte") \
	X(MSGLEN, "msglen") X(SENDER, "sender") X(FLAG, "flag") X(UNLOCK, "unlock") \
	X(LOCKED, "locked") X(AND, "and") X(OR, "or") X(NOT, "not") X(MOD, "mod")

enum pdl_tok {
	PDL_T_EOF, PDL_T_NUM, PDL_T_NAME,
	/* punctuation */
	PDL_T_LPAREN, PDL_T_RPAREN, PDL_T_LBRACK, PDL_T_RBRACK, PDL_T_COMMA, PDL_T_SEMI,
	PDL_T_COLON, PDL_T_DOT, PDL_T_ASSIGN, PDL_T_EQ, PDL_T_NE, PDL_T_LT, PDL_T_LE, PDL_T_GT,
	PDL_T_GE, PDL_T_PLUS, PDL_T_MINUS, PDL_T_STAR, PDL_T_SLASH, PDL_T_PERCENT, PDL_T_AMP,
	PDL_T_BAR, PDL_T_CARET, PDL_T_TILDE, PDL_T_SHL, PDL_T_SHR,
#define PDL_X_TOK(t, s) PDL_T_##t,
	PDL_KEYWORDS(PDL_X_TOK)
#undef PDL_X_TOK
	PDL_T__COUNT
};

struct pdl_token {
	int kind;
	int64_t num;
	char name[PDL_NAME_MAX + 1];
	int line, col;
};

struct pdl_lexer {
	const char *file;
	const char *src;
	size_t len, pos;
	int line, col;
	char *err;
	size_t errlen;
	jmp_buf *fail; /* longjmp target on the first error */
};

void pdl_lex_init(struct pdl_lexer *lx, const char *file, const char *src, size_t len,
		  char *err, size_t errlen, jmp_buf *fail);
/* The next token; on a lexical error, writes "file:line:col: error: ..." and longjmps. */
void pdl_lex_next(struct pdl_lexer *lx, struct pdl_token *t);
/* Report an error at (line, col) and longjmp. */
_Noreturn void pdl_error(struct pdl_lexer *lx, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Printable spelling of a token kind, for messages. */
const char *pdl_tok_str(int kind);

#endif
