/* test_nvm_verify: hand-made bad modules, one per rejection, and the loader
 * refusing them; plus well-formed edge cases that must pass. */
#include "nvm_test.h"
#include "nvm/nvm_opcodes.h"

static struct nvm_var vars[2] = { { 0, 1, "a" }, { 1, 4, "arr" } };
static struct nvm_trig trigs[2];
static struct nvm_addr addrs[1] = { { 2, { 1, 2 } } };

/* A module around the given code: BEGIN at 0, two variables, one address. */
static struct nvm_module mod(const uint8_t *code, uint32_t len)
{
	struct nvm_module m = { .name = "bad", .data_words = 5, .init_pc = 0, .nvars = 2,
				.ntrig = 0, .naddr = 1, .vars = vars, .trigs = trigs,
				.addrs = addrs, .code_len = len, .code = (uint8_t *)code };
	return m;
}

#define OP(x) NVM_OP_##x
#define REL(v) (uint8_t)((v) & 0xff), (uint8_t)(((v) >> 8) & 0xff), (uint8_t)(((v) >> 16) & 0xff), \
	(uint8_t)(((uint32_t)(v) >> 24) & 0xff)

static char err[256];

/* Expect rejection with a message containing `why`. */
static void rejects(struct nvm_module m, const char *why, int line)
{
	int rc = nvm_verify(&m, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, why), "line %d: wanted rejection '%s', got rc %d '%s'",
	      line, why, rc, rc ? err : "");
	/* And the loader refuses it too. */
	struct nvm_vm *vm = nvm_vm_new(NULL);
	CHECK(nvm_vm_load(vm, 1, &m, err, sizeof(err)) == -EINVAL,
	      "line %d: loader accepted a bad module", line);
	nvm_vm_free(vm);
}
#define REJECTS(m, why) rejects(m, why, __LINE__)

#define CODE(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })

TEST(accepts_a_minimal_module)
{
	struct nvm_module m = mod(CODE(OP(PUSH8), 1, OP(STORE), 0, 0, OP(RET)));
	CHECK_EQ(nvm_verify(&m, err, sizeof(err)), 0);
}

TEST(rejects_unknown_opcode)
{
	REJECTS(mod(CODE(OP(NOP), 0xee, OP(RET))), "unknown opcode 0xee");
	REJECTS(mod(CODE(NVM_OP__COUNT)), "unknown opcode");
}

TEST(rejects_truncated_operand)
{
	REJECTS(mod(CODE(OP(PUSH32), 1, 2)), "operand runs past the end");
}

TEST(rejects_jump_out_of_the_program)
{
	REJECTS(mod(CODE(OP(JMP), REL(100), OP(RET))), "control leaves the code");
	REJECTS(mod(CODE(OP(JMP), REL(-6), OP(RET))), "control leaves the code");
	REJECTS(mod(CODE(OP(JMP), REL(0x7fffffff), OP(RET))), "control leaves the code");
}

TEST(rejects_jump_into_an_operand)
{
	/* 0: PUSH32 k (5 bytes) 5: JMP -> 2 (inside the PUSH32 operand) */
	REJECTS(mod(CODE(OP(PUSH32), OP(RET), OP(RET), OP(RET), OP(RET), OP(JMP), REL(-8))),
		"jump into the middle of an instruction");
}

TEST(rejects_falling_off_the_end)
{
	REJECTS(mod(CODE(OP(NOP))), "control leaves the code");
	REJECTS(mod(CODE(OP(AWAIT))), "control leaves the code");
}

TEST(rejects_stack_underflow_on_some_path)
{
	REJECTS(mod(CODE(OP(ADD), OP(RET))), "stack underflow");
	REJECTS(mod(CODE(OP(POP), OP(RET))), "stack underflow");
	/* Underflow only on the branch-taken path: 0 LOAD a; 3 JZ +1 -> 9; 8 PUSH8.. no:
	 * 0 PUSH8 0; 2 LOAD a; 5 JZ -> 11; 10 POP; 11 POP; 12 RET: depth 1 vs 0 at 11. */
	REJECTS(mod(CODE(OP(PUSH8), 0, OP(LOAD), 0, 0, OP(JZ), REL(1), OP(POP), OP(POP), OP(RET))),
		"stack depth");
	REJECTS(mod(CODE(OP(LOAD), 0, 0, OP(JZ), REL(1), OP(DUP), OP(SEND), 0xff, 0xff, OP(RET))),
		"stack underflow");
}

TEST(rejects_stack_overflow)
{
	uint8_t code[2 * (NVM_STACK_MAX + 1) + 1];
	for (int i = 0; i <= NVM_STACK_MAX; i++) {
		code[2 * i] = OP(PUSH8);
		code[2 * i + 1] = 1;
	}
	code[sizeof(code) - 1] = OP(RET);
	REJECTS(mod(code, sizeof(code)), "stack overflow");
	/* A loop that pushes each time round: depths 0 and 1 meet at the loop head. */
	REJECTS(mod(CODE(OP(PUSH8), 1, OP(JMP), REL(-7))), "stack depth");
}

TEST(rejects_out_of_range_variable_address_and_trigger)
{
	REJECTS(mod(CODE(OP(LOAD), 2, 0, OP(POP), OP(RET))), "variable index 2 out of range");
	REJECTS(mod(CODE(OP(PUSH8), 0, OP(STOREX), 0xff, 0xff, OP(RET))), "variable index");
	REJECTS(mod(CODE(OP(PUSH8), 0, OP(PUSH8), 0, OP(PUSH8), 0, OP(PUSH8), 0, OP(SEND), 1, 0,
			 OP(RET))), "address index 1 out of range");
	struct nvm_module m = mod(CODE(OP(PUSH32), 0, 0, 0, 0, OP(RET)));
	m.ntrig = 1;
	trigs[0] = (struct nvm_trig){ 10, 2 }; /* inside the PUSH32 operand */
	REJECTS(m, "trigger 10 entry is not an instruction start");
	trigs[0] = (struct nvm_trig){ 10, 99 };
	REJECTS(m, "trigger 10 entry");
	m.ntrig = 2;
	trigs[0] = (struct nvm_trig){ 10, 0 };
	trigs[1] = (struct nvm_trig){ 10, 5 };
	REJECTS(m, "trigger 10 declared twice");
	m = mod(CODE(OP(RET)));
	m.init_pc = 1;
	REJECTS(m, "BEGIN entry");
}

TEST(rejects_variables_outside_the_data_section)
{
	struct nvm_module m = mod(CODE(OP(RET)));
	m.data_words = 4; /* arr needs words 1..4 */
	REJECTS(m, "outside the data section");
	vars[1].off = 0xffffffffu;
	m.data_words = 5;
	REJECTS(m, "outside the data section");
	vars[1].off = 1;
	vars[0].len = 0;
	REJECTS(m, "outside the data section");
	vars[0].len = 1;
}

TEST(rejects_await_with_a_nonempty_stack)
{
	REJECTS(mod(CODE(OP(PUSH8), 1, OP(AWAIT), OP(POP), OP(RET))), "AWAIT with 1 words");
}

TEST(module_decoder_rejects_malformed_images)
{
	struct nvm_module *m = compile_ok("PROGRAM p: VAR a; TRIGGERS 1; BEGIN a = 1 END; MESSAGE 1: a = 2; END;");
	uint8_t *img;
	size_t len;
	CHECK_EQ(nvm_module_encode(m, &img, &len), 0);
	struct nvm_module *d = NULL;
	CHECK_EQ(nvm_module_decode(img, len, &d, err, sizeof(err)), 0);
	CHECK(d && d->code_len == m->code_len && memcmp(d->code, m->code, m->code_len) == 0);
	nvm_module_free(d);
	for (size_t cut = 0; cut < len; cut++) {
		CHECK_EQ(nvm_module_decode(img, cut, &d, err, sizeof(err)), -EINVAL);
		CHECK(d == NULL);
	}
	uint8_t *longer = malloc(len + 1);
	memcpy(longer, img, len);
	longer[len] = 0;
	CHECK_EQ(nvm_module_decode(longer, len + 1, &d, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "trailing") != NULL);
	img[0] = 'X';
	CHECK_EQ(nvm_module_decode(img, len, &d, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "magic") != NULL);
	free(longer);
	free(img);
	nvm_module_free(m);
}

/* Code the verifier accepts but that points anywhere: the run-time region checks
 * catch it, the program is unloaded, the host process is untouched. */
static int run_fault(const uint8_t *code, uint32_t len)
{
	struct nvm_module m = mod(code, len);
	CHECK_EQ(nvm_verify(&m, err, sizeof(err)), 0);
	struct nvm_vm *vm = nvm_vm_new(NULL);
	struct nvm_seg *s = nvm_seg_new(7, 16, NVM_SEG_R | NVM_SEG_W);
	nvm_vm_seg_attach(vm, s);
	CHECK_EQ(nvm_vm_load(vm, 1, &m, err, sizeof(err)), 0);
	CHECK_EQ(nvm_vm_run(vm, 1), -EFAULT);
	struct nvm_event ev = { 0 };
	CHECK_EQ(count_events(vm, NVM_EV_FAULT, &ev), 1);
	nvm_vm_free(vm);
	nvm_seg_put(s);
	return ev.code;
}

#define I64(v) (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((v) >> 24), \
	(uint8_t)((v) >> 32), (uint8_t)((v) >> 40), (uint8_t)((v) >> 48), (uint8_t)((v) >> 56)

TEST(verified_code_with_wild_addresses_faults_safely)
{
	/* SEND from byte 2^62 of the data section */
	CHECK_EQ(run_fault(CODE(OP(PUSH64), I64(1ull << 62), OP(PUSH8), 8, OP(PUSH8), 1, OP(PUSH8), 1,
				OP(SEND), 0xff, 0xff, OP(RET))), NVM_F_REGION);
	/* SEND from a negative address */
	CHECK_EQ(run_fault(CODE(OP(PUSH8), 0xf8, OP(PUSH8), 8, OP(PUSH8), 1, OP(PUSH8), 1,
				OP(SEND), 0xff, 0xff, OP(RET))), NVM_F_REGION);
	/* DELIVER 8 bytes at segment offset 12 of a 16-byte segment */
	CHECK_EQ(run_fault(CODE(OP(PUSH8), 0, OP(PUSH8), 12, OP(PUSH8), 7, OP(PUSH8), 8,
				OP(DELIVER), OP(RET))), NVM_F_REGION);
	/* GET with a length that overflows offset + length */
	CHECK_EQ(run_fault(CODE(OP(PUSH8), 0, OP(PUSH8), 8, OP(PUSH8), 7,
				OP(PUSH64), I64(0x7ffffffffffffffcull), OP(GET), OP(RET))), NVM_F_REGION);
	/* DELIVER with a negative length */
	CHECK_EQ(run_fault(CODE(OP(PUSH8), 0, OP(PUSH8), 0, OP(PUSH8), 7, OP(PUSH8), 0xff,
				OP(DELIVER), OP(RET))), NVM_F_LEN);
	/* ADDR past the array, GETMSG outside a message */
	CHECK_EQ(run_fault(CODE(OP(PUSH8), 4, OP(ADDR), 1, 0, OP(POP), OP(RET))), NVM_F_INDEX);
	CHECK_EQ(run_fault(CODE(OP(PUSH8), 0, OP(PUSH8), 0, OP(PUSH8), 8, OP(GETMSG), OP(RET))),
		 NVM_F_MSG);
	/* An empty loop: the budget */
	CHECK_EQ(run_fault(CODE(OP(JMP), REL(-5))), NVM_F_BUDGET);
}

int main(void)
{
	RUN(accepts_a_minimal_module);
	RUN(rejects_unknown_opcode);
	RUN(rejects_truncated_operand);
	RUN(rejects_jump_out_of_the_program);
	RUN(rejects_jump_into_an_operand);
	RUN(rejects_falling_off_the_end);
	RUN(rejects_stack_underflow_on_some_path);
	RUN(rejects_stack_overflow);
	RUN(rejects_out_of_range_variable_address_and_trigger);
	RUN(rejects_variables_outside_the_data_section);
	RUN(rejects_await_with_a_nonempty_stack);
	RUN(module_decoder_rejects_malformed_images);
	RUN(verified_code_with_wild_addresses_faults_safely);
	return sm_check_result();
}
