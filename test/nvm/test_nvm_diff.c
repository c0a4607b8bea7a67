/* test_nvm_diff: differential tests.  Random expressions are compiled twice, once
 * with literals (so the compiler folds what it can) and once with every literal in
 * a variable (so the machine computes everything); both run under computed-goto and
 * switch dispatch, and all four results must equal a C reference evaluation. */
#include "nvm_test.h"

static uint64_t rng_state = 0x1234567;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define NLIT 64
static int64_t lit[NLIT];
static int nlit;

/* Build a random expression into src (two spellings) and return its value. */
static int64_t gen(char *a, char *b, size_t cap, int depth)
{
	if (depth == 0 || rnd() % 4 == 0 || nlit == NLIT) {
		int64_t v;
		switch (rnd() % 4) {
		case 0: v = (int64_t)(rnd() % 10); break;
		case 1: v = -(int64_t)(rnd() % 1000); break;
		case 2: v = (int64_t)(rnd() >> (rnd() % 64)); break;
		default: v = (int64_t)rnd(); break;
		}
		if (v == INT64_MIN)
			v = 7;
		int k;
		if (nlit == NLIT) { /* table full: reuse an earlier literal */
			k = (int)(rnd() % NLIT);
			v = lit[k];
		} else {
			k = nlit++;
			lit[k] = v;
		}
		if (v < 0)
			snprintf(a, cap, "(0 - %lld)", (long long)-v);
		else
			snprintf(a, cap, "%lld", (long long)v);
		snprintf(b, cap, "l[%d]", k);
		return v;
	}
	static const char *ops[] = { "+", "-", "*", "/", "MOD", "&", "|", "^", "<<", ">>",
				     "==", "<>", "<", "<=", ">", ">=" };
	int op = (int)(rnd() % 16);
	char la[2048], lb[2048], ra[2048], rb[2048];
	int64_t x = gen(la, lb, sizeof(la), depth - 1);
	int64_t y = gen(ra, rb, sizeof(ra), depth - 1);
	uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
	int64_t r;
	if (op == 3 || op == 4) { /* divisor made odd, never zero */
		snprintf(a, cap, "(%s %s (%s | 1))", la, ops[op], ra);
		snprintf(b, cap, "(%s %s (%s | 1))", lb, ops[op], rb);
		int64_t d = y | 1;
		if (d == -1)
			r = op == 3 ? (int64_t)(0 - ux) : 0;
		else
			r = op == 3 ? x / d : x % d;
		return r;
	}
	snprintf(a, cap, "(%s %s %s)", la, ops[op], ra);
	snprintf(b, cap, "(%s %s %s)", lb, ops[op], rb);
	switch (op) {
	case 0: return (int64_t)(ux + uy);
	case 1: return (int64_t)(ux - uy);
	case 2: return (int64_t)(ux * uy);
	case 5: return x & y;
	case 6: return x | y;
	case 7: return x ^ y;
	case 8: return (int64_t)(ux << (uy & 63));
	case 9: return (int64_t)(ux >> (uy & 63));
	case 10: return x == y;
	case 11: return x != y;
	case 12: return x < y;
	case 13: return x <= y;
	case 14: return x > y;
	default: return x >= y;
	}
}

static int64_t run(const char *src, unsigned mode, int literals)
{
	struct nvm_vm *vm = nvm_vm_new(&(struct nvm_vm_config){ .dispatch = mode });
	char err[512];
	struct nvm_module *m = NULL;
	if (pdl_compile("diff.pdl", src, strlen(src), &m, err, sizeof(err)) != 0) {
		FAIL("%s\n%s", err, src);
		nvm_vm_free(vm);
		return 0;
	}
	nvm_vm_load(vm, 1, m, err, sizeof(err));
	nvm_module_free(m);
	if (literals) {
		nvm_vm_run(vm, 1);
	} else {
		nvm_vm_run(vm, 1);
		nvm_vm_dispatch(vm, 1, 1, lit, sizeof(lit)); /* l[] from the message */
	}
	int64_t r = peek1(vm, 1, "r", 0);
	CHECK_EQ(count_events(vm, NVM_EV_FAULT, NULL), 0);
	nvm_vm_free(vm);
	return r;
}

TEST(random_expressions_agree_everywhere)
{
	static char a[1 << 16], b[1 << 16], pa[1 << 17], pb[1 << 17];
	for (int iter = 0; iter < 300; iter++) {
		nlit = 0;
		int64_t want = gen(a, b, sizeof(a), 1 + iter % 6);
		snprintf(pa, sizeof(pa), "PROGRAM d: VAR r; BEGIN r = %s; END; END;", a);
		snprintf(pb, sizeof(pb),
			 "PROGRAM d: VAR r, l[%d]; TRIGGERS 1;\n"
			 "MESSAGE 1: BEGIN GET l OFFSET 0 FROM MESSAGE LEN %d; r = %s; END; END;",
			 NLIT, NLIT * 8, b);
		int64_t got[4] = { run(pa, NVM_DISPATCH_GOTO, 1), run(pa, NVM_DISPATCH_SWITCH, 1),
				   run(pb, NVM_DISPATCH_GOTO, 0), run(pb, NVM_DISPATCH_SWITCH, 0) };
		for (int k = 0; k < 4; k++)
			if (got[k] != want) {
				FAIL("iter %d variant %d: got %lld want %lld\n%s", iter, k,
				     (long long)got[k], (long long)want, k < 2 ? pa : pb);
				return;
			}
	}
}

int main(void)
{
	RUN(random_expressions_agree_everywhere);
	return sm_check_result();
}
