/* test_pdl_compile: the compiler, construct by construct: what compiles, to what
 * instructions, and the file:line:col errors for what does not. */
#include "nvm_test.h"
#include "nvm/nvm_opcodes.h"

/* Does m's code contain the opcode sequence ops[0..n)? (decoded, not byte search) */
static int has_ops(const struct nvm_module *m, const int *ops, int n)
{
	int seq[4096], k = 0;
	for (uint32_t pc = 0; pc < m->code_len && k < 4096; pc += 1 + nvm_opinfo[m->code[pc]].size)
		seq[k++] = m->code[pc];
	for (int i = 0; i + n <= k; i++) {
		int j = 0;
		while (j < n && seq[i + j] == ops[j])
			j++;
		if (j == n)
			return 1;
	}
	return 0;
}
#define HAS(m, ...) has_ops(m, (const int[]){ __VA_ARGS__ }, \
	sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int))
#define O(x) NVM_OP_##x

static void compiles_to(const char *src, const int *ops, int n, int line)
{
	struct nvm_module *m = compile_ok(src);
	if (!has_ops(m, ops, n)) {
		FAIL("line %d: expected opcode sequence not found in:", line);
		nvm_disasm(m, stderr);
	}
	nvm_module_free(m);
}
#define COMPILES_TO(src, ...) compiles_to(src, (const int[]){ __VA_ARGS__ }, \
	sizeof((const int[]){ __VA_ARGS__ }) / sizeof(int), __LINE__)

static void fails_with(const char *src, const char *where_what, int line)
{
	char err[512] = "";
	struct nvm_module *m = NULL;
	int rc = pdl_compile("t.pdl", src, strlen(src), &m, err, sizeof(err));
	CHECK(rc == -EINVAL && !m && strstr(err, where_what),
	      "line %d: wanted error containing '%s', got rc %d: %s", line, where_what, rc, err);
	nvm_module_free(m);
}
#define FAILS(src, what) fails_with(src, what, __LINE__)

TEST(paper_programs_compile_as_printed)
{
	struct nvm_module *ping = compile_file("ping.pdl");
	CHECK_EQ(ping->nvars, 4);
	CHECK_EQ(ping->data_words, 100 + 100 + 1 + 1024);
	CHECK_EQ(ping->ntrig, 1);
	CHECK_EQ(ping->trigs[0].id, 10);
	CHECK_EQ(ping->naddr, 1); /* the same AT address twice, stored once */
	CHECK_EQ(ping->addrs[0].len, 8);
	CHECK_EQ(ping->addrs[0].b[4], 221);
	CHECK(strcmp(ping->name, "ping") == 0);
	nvm_module_free(ping);
	struct nvm_module *d = compile_file("delivertest.pdl");
	CHECK_EQ(d->data_words, 51);
	CHECK(HAS(d, O(PUSH8), O(PUSH8), O(PUSH8), O(PUSH8), O(DELIVER), O(AWAIT), O(RET)));
	nvm_module_free(d);
}

TEST(keywords_and_names_are_case_insensitive)
{
	COMPILES_TO("program P: var Timesent[2]; triggers 1; Begin TIMESENT[1] = 3; timesent[0] = 1 end;"
		    " message 1: begin IF timesent[0] < 2 then TimeSent[1] = 0; END; end;",
		    O(PUSH8), O(PUSH8), O(STOREX));
}

TEST(declarations_constants_and_arrays)
{
	struct nvm_module *m = compile_ok("PROGRAM c: CONST N = 4, M = N * 2 + 1; VAR a[M], b, c[N];"
					  " TRIGGERS N, M; END;");
	CHECK_EQ(m->data_words, 9 + 1 + 4);
	CHECK_EQ(m->vars[2].off, 10);
	CHECK_EQ(m->trigs[1].id, 9);
	CHECK_EQ(m->init_pc, NVM_NO_PC);
	nvm_module_free(m);
}

TEST(assignment_scalar_and_indexed)
{
	COMPILES_TO("PROGRAM a: VAR x, y[3]; BEGIN x = y[x]; END; END;", O(LOAD), O(LOADX), O(STORE));
	COMPILES_TO("PROGRAM a: VAR x, y[3]; BEGIN y[x + 1] = 5; END; END;",
		    O(LOAD), O(PUSH8), O(ADD), O(PUSH8), O(STOREX));
}

TEST(arithmetic_comparison_and_bit_operators)
{
	COMPILES_TO("PROGRAM a: VAR x; BEGIN x = x * x + x / x - x MOD x; END; END;",
		    O(LOAD), O(LOAD), O(MUL), O(LOAD), O(LOAD), O(DIV), O(ADD), O(LOAD), O(LOAD),
		    O(MOD), O(SUB));
	COMPILES_TO("PROGRAM a: VAR x; BEGIN x = x & 3 | x ^ x << 2 >> 1; END; END;",
		    O(LOAD), O(PUSH8), O(BAND));
	COMPILES_TO("PROGRAM a: VAR x; BEGIN x = x <> 1; x = x != 1; x = x >= 2; END; END;",
		    O(LOAD), O(PUSH8), O(NE), O(STORE), O(LOAD), O(PUSH8), O(NE));
	COMPILES_TO("PROGRAM a: VAR x; BEGIN x = -x; x = ~x; x = NOT x; END; END;",
		    O(LOAD), O(NEG), O(STORE), O(LOAD), O(BNOT), O(STORE), O(LOAD), O(LNOT));
	/* Constants fold, including the 64-bit range. */
	COMPILES_TO("PROGRAM a: VAR x; BEGIN x = 1 << 40; x = 2 * 3 + 1; END; END;",
		    O(PUSH64), O(STORE), O(PUSH8), O(STORE));
}

TEST(if_then_else_and_while)
{
	COMPILES_TO("PROGRAM a: VAR x; BEGIN IF x THEN x = 1 ELSE x = 2; END; END;",
		    O(LOAD), O(JZ), O(PUSH8), O(STORE), O(JMP), O(PUSH8), O(STORE));
	COMPILES_TO("PROGRAM a: VAR x; BEGIN WHILE x < 3 DO x = x + 1; END; END;",
		    O(JMP), O(LOAD), O(PUSH8), O(ADD), O(STORE), O(LOAD), O(PUSH8), O(LT), O(JNZ));
}

TEST(special_statements)
{
	COMPILES_TO("PROGRAM a: VAR m[4]; BEGIN SEND m[1] LEN 16 AS 2 TO 3 AT 1:2:3; END; END;",
		    O(PUSH8), O(PUSH8), O(PUSH8), O(PUSH8), O(SEND), O(RET));
	COMPILES_TO("PROGRAM a: VAR m[4]; BEGIN SEND m LEN 8 AS 2; END; END;", O(SELF), O(SEND));
	COMPILES_TO("PROGRAM a: VAR m[4], i; BEGIN DELIVER m[i] OFFSET 8 INTO 2 LEN 8; END; END;",
		    O(LOAD), O(ADDR), O(PUSH8), O(PUSH8), O(PUSH8), O(DELIVER));
	COMPILES_TO("PROGRAM a: VAR m[4]; BEGIN GET m OFFSET 0 FROM 2 LEN 32; END; END;", O(GET));
	COMPILES_TO("PROGRAM a: VAR m[4]; TRIGGERS 1; MESSAGE 1: GET m OFFSET 0 FROM MESSAGE LEN MSGLEN; END;",
		    O(MSGLEN), O(GETMSG));
	COMPILES_TO("PROGRAM a: VAR t; BEGIN t = CLOCK; DISPLAY t; AWAIT; STOP; END; END;",
		    O(CLOCK), O(STORE), O(LOAD), O(DISPLAY), O(AWAIT), O(STOP), O(RET));
	COMPILES_TO("PROGRAM a: VAR m[1]; TRIGGERS 1; MESSAGE 1: REPLY m LEN 8 AS SENDER; END;",
		    O(SENDER), O(REPLY));
	COMPILES_TO("PROGRAM a: VAR x; BEGIN x = BYTE(3); END; END;", O(PUSH8), O(MSGB), O(STORE));
	COMPILES_TO("PROGRAM a: VAR x; BEGIN x = FIELD(2) + LOCKED(1); FLAG 1; UNLOCK 1; END; END;",
		    O(PUSH8), O(MSGW), O(PUSH8), O(LOCKED), O(ADD), O(STORE), O(PUSH8), O(FLAG),
		    O(PUSH8), O(UNLOCK));
}

TEST(semicolons_are_separators_and_optional)
{
	nvm_module_free(compile_ok("PROGRAM a: VAR x; BEGIN x = 1 x = 2;; AWAIT END END"));
}

TEST(errors_name_file_line_and_column)
{
	FAILS("PROGRAM a: VAR x;\nBEGIN\n  y = 1;\nEND; END;", "t.pdl:3:3: error: 'y' is not declared");
	FAILS("PROGRAM a: VAR x;\nBEGIN x = ; END; END;", "t.pdl:2:11: error: expected an expression");
	FAILS("PROGRAM a: VAR x[2];\nBEGIN x = 1; END; END;", "t.pdl:2:7: error: array 'x' needs an index");
	FAILS("PROGRAM a: VAR x;\nBEGIN x[0] = 1; END; END;", "2:7: error: 'x' is not an array");
	FAILS("PROGRAM a: VAR x, x; END;", "1:19: error: 'x' is already declared");
	FAILS("PROGRAM a: TRIGGERS 1;\nMESSAGE 2: BEGIN END; END;", "2:9: error: MESSAGE 2: trigger not declared");
	FAILS("PROGRAM a: TRIGGERS 1; MESSAGE 1: BEGIN END; MESSAGE 1: BEGIN END; END;", "second block");
	FAILS("PROGRAM a: TRIGGERS 70000; END;", "not in 0..65535");
	FAILS("PROGRAM a: VAR m[2]; BEGIN SEND m LEN 8 AS 1 TO 1 AT 1:256; END; END;", "address byte 256");
	FAILS("PROGRAM a: VAR m[2]; BEGIN SEND m[2] LEN 8 AS 1; END; END;", "index 2 outside 'm'");
	FAILS("PROGRAM a: CONST K = 1; BEGIN K = 2; END; END;", "cannot assign to constant 'k'");
	FAILS("PROGRAM a: VAR n; VAR m[n]; END;", "array size must be a constant");
	FAILS("PROGRAM a: CONST Z = 0; VAR m[4 / Z]; END;", "division by zero");
	FAILS("PROGRAM a: VAR m[0]; END;", "array size 0");
	FAILS("PROGRAM a: VAR x; BEGIN x = 1 < 2 < 3; END; END;", "comparisons do not chain");
	FAILS("PROGRAM a: BEGIN", "BEGIN without END");
	FAILS("PROGRAM a: END; junk", "end of file after the program's END");
	FAILS("PROGRAM a: VAR x; BEGIN x = 99999999999999999999; END; END;", "number too large");
	FAILS("PROGRAM a: VAR x; BEGIN x = 1 @ 2; END; END;", "unexpected character '@'");
	FAILS("PROGRAM a: VAR x; BEGIN x = 0x; END; END;", "without digits");
	FAILS("PROGRAM a: VAR abcdefghijabcdefghijabcdefghijabc; END;", "longer than 31");
	FAILS("", "1:1: error: expected PROGRAM");
	FAILS("PROGRAM var: END;", "expected the program name");
	FAILS("PROGRAM a: VAR x; BEGIN IF x THEN END; END;", "expected a statement");
}

TEST(deep_nesting_is_an_error_not_a_crash)
{
	char src[4096];
	int n = snprintf(src, sizeof(src), "PROGRAM a: VAR x; BEGIN x = ");
	for (int i = 0; i < 300; i++)
		src[n++] = '(';
	src[n] = 0;
	FAILS(src, "nesting deeper than");
	/* Right-nested sums need a deep operand stack: a clean error too. */
	n = snprintf(src, sizeof(src), "PROGRAM a: VAR x; BEGIN x = ");
	for (int i = 0; i < 70; i++)
		n += snprintf(src + n, sizeof(src) - n, "x + (");
	n += snprintf(src + n, sizeof(src) - n, "x");
	for (int i = 0; i < 70; i++)
		src[n++] = ')';
	snprintf(src + n, sizeof(src) - n, "; END; END;");
	FAILS(src, "expression too deeply nested");
}

int main(void)
{
	RUN(paper_programs_compile_as_printed);
	RUN(keywords_and_names_are_case_insensitive);
	RUN(declarations_constants_and_arrays);
	RUN(assignment_scalar_and_indexed);
	RUN(arithmetic_comparison_and_bit_operators);
	RUN(if_then_else_and_while);
	RUN(special_statements);
	RUN(semicolons_are_separators_and_optional);
	RUN(errors_name_file_line_and_column);
	RUN(deep_nesting_is_an_error_not_a_crash);
	return sm_check_result();
}
