/* test_nvm_run: the interpreter, through compiled PDL, in both dispatch builds:
 * arithmetic, control flow, AWAIT as a saved continuation, the additions
 * (FIELD/MSGLEN/SENDER, REPLY, bit operations and MOD, CONST), runtime faults
 * and the instruction budget. */
#include "nvm_test.h"
#include "nvm/nvm_proto.h"

static unsigned dispatch_mode;

static struct nvm_vm *vm_new(uint64_t budget)
{
	return nvm_vm_new(&(struct nvm_vm_config){ .dispatch = dispatch_mode, .budget = budget });
}

TEST(arithmetic_and_precedence)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 1,
		 "PROGRAM t: VAR r[16]; BEGIN\n"
		 " r[0] = 2 + 3 * 4; r[1] = (2 + 3) * 4; r[2] = 17 / 5; r[3] = -17 / 5;\n"
		 " r[4] = 17 MOD 5; r[5] = -17 % 5; r[6] = 0xf0 & 0x3c | 1; r[7] = 1 << 40;\n"
		 " r[8] = -1 >> 60; r[9] = 5 ^ 3; r[10] = ~0; r[11] = 3 < 4; r[12] = 4 <> 4;\n"
		 " r[13] = 9223372036854775807 + 1 = -9223372036854775807 - 1;\n"
		 " r[14] = NOT 0 AND 2 > 1 OR 0; r[15] = r[0] * r[1] - r[2];\n"
		 "END; END;");
	static const int64_t want[] = { 14, 20, 3, -3, 2, -2, 0x31, 1LL << 40, 15, 6, -1, 1, 0,
					1, 1, 277 };
	for (int i = 0; i < 16; i++)
		CHECK_EQ(peek1(vm, 1, "r", i), want[i]);
	nvm_vm_free(vm);
}

TEST(runtime_arithmetic_matches_constant_folding)
{
	/* Same expressions through variables, so the machine computes them. */
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 1,
		 "PROGRAM t: VAR a, b, c, r[8]; BEGIN a = 17; b = 5; c = -1;\n"
		 " r[0] = a / b; r[1] = -a MOD b; r[2] = a << b; r[3] = c >> 60; r[4] = a & ~b;\n"
		 " r[5] = (a - 18) / c; r[6] = a * c; r[7] = a == 17;\n"
		 "END; END;");
	static const int64_t want[] = { 3, -2, 17 << 5, 15, 16, 1, -17, 1 };
	for (int i = 0; i < 8; i++)
		CHECK_EQ(peek1(vm, 1, "r", i), want[i]);
	nvm_vm_free(vm);
}

TEST(if_else_and_while)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 1,
		 "PROGRAM t: VAR i, s, e, o; BEGIN\n"
		 " i = 0; WHILE i < 10 DO BEGIN\n"
		 "   IF i % 2 == 0 THEN e = e + 1; ELSE o = o + i;\n"
		 "   s = s + i; i = i + 1 END\n"
		 "END; END;");
	CHECK_EQ(peek1(vm, 1, "s", 0), 45);
	CHECK_EQ(peek1(vm, 1, "e", 0), 5);
	CHECK_EQ(peek1(vm, 1, "o", 0), 25);
	nvm_vm_free(vm);
}

TEST(and_or_short_circuit_guards_an_index)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 1,
		 "PROGRAM t: VAR a[4], i, n; BEGIN\n"
		 " i = 4; IF i < 4 AND a[i] == 0 THEN n = 1 ELSE n = 2;\n"
		 " IF i == 4 OR a[i] == 0 THEN n = n + 10;\n"
		 "END; END;");
	CHECK_EQ(peek1(vm, 1, "n", 0), 12);
	CHECK_EQ(count_events(vm, NVM_EV_FAULT, NULL), 0);
	nvm_vm_free(vm);
}

TEST(await_resumes_after_the_next_handler_returns)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 1,
		 "PROGRAM t: VAR got, after, seen; TRIGGERS 5;\n"
		 "BEGIN after = 0; AWAIT; after = got + 100; END;\n"
		 "MESSAGE 5: BEGIN got = FIELD(0); seen = seen + 1; END;\n"
		 "END;");
	CHECK_EQ(peek1(vm, 1, "after", 0), 0);
	int64_t v = 7;
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 5, &v, 8), 0);
	CHECK_EQ(peek1(vm, 1, "after", 0), 107); /* handler ran, then BEGIN went on */
	v = 9;
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 5, &v, 8), 0);
	CHECK_EQ(peek1(vm, 1, "after", 0), 107); /* no saved point any more */
	CHECK_EQ(peek1(vm, 1, "seen", 0), 2);
	nvm_vm_free(vm);
}

TEST(message_fields_msglen_sender_and_getmsg)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 1,
		 "PROGRAM t: VAR f0, f1, n, who, copy[3], b0, b8, be; TRIGGERS 3;\n"
		 "MESSAGE 3: BEGIN f0 = FIELD(0); f1 = FIELD(1); n = MSGLEN; who = SENDER;\n"
		 "  b0 = BYTE(0); b8 = BYTE(8); be = BYTE(16) << 8 | BYTE(17);\n"
		 "  GET copy[1] OFFSET 8 FROM MESSAGE LEN 16; END;\n"
		 "END;");
	int64_t msg[3] = { 11, -22, 33 };
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 3, msg, sizeof(msg)), 0);
	CHECK_EQ(peek1(vm, 1, "f0", 0), 11);
	CHECK_EQ(peek1(vm, 1, "f1", 0), -22);
	CHECK_EQ(peek1(vm, 1, "n", 0), 24);
	CHECK_EQ(peek1(vm, 1, "who", 0), NVM_HOST_PROG);
	CHECK_EQ(peek1(vm, 1, "copy", 1), -22);
	CHECK_EQ(peek1(vm, 1, "copy", 2), 33);
	CHECK_EQ(peek1(vm, 1, "b0", 0), 11);
	CHECK_EQ(peek1(vm, 1, "b8", 0), (uint8_t)-22);
	CHECK_EQ(peek1(vm, 1, "be", 0), 33 << 8);
	nvm_vm_free(vm);
}

TEST(reply_and_local_send_between_programs)
{
	struct nvm_vm *vm = vm_new(0);
	/* 2 asks 1 (locally, no AT) and 1 answers with REPLY. */
	load_run(vm, 1,
		 "PROGRAM server: CONST ASK = 1, ANSWER = 2; VAR buf[1]; TRIGGERS ASK;\n"
		 "MESSAGE ASK: BEGIN buf[0] = FIELD(0) * 2; REPLY buf LEN 8 AS ANSWER; END;\n"
		 "END;");
	load_run(vm, 2,
		 "PROGRAM client: VAR q[1], answer, who; TRIGGERS 2;\n"
		 "BEGIN q[0] = 21; SEND q LEN 8 AS 1 TO 1; END;\n"
		 "MESSAGE 2: BEGIN answer = FIELD(0); who = SENDER; END;\n"
		 "END;");
	CHECK_EQ(nvm_vm_progress(vm, 10), 2);
	CHECK_EQ(peek1(vm, 2, "answer", 0), 42);
	CHECK_EQ(peek1(vm, 2, "who", 0), 1);
	nvm_vm_free(vm);
}

TEST(send_without_to_goes_to_this_program)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 3,
		 "PROGRAM self: VAR n, b[1]; TRIGGERS 1;\n"
		 "BEGIN SEND b LEN 8 AS 1; END;\n"
		 "MESSAGE 1: BEGIN n = n + 1; IF n < 5 THEN SEND b LEN 8 AS 1; END;\n"
		 "END;");
	CHECK_EQ(nvm_vm_progress(vm, 100), 5);
	CHECK_EQ(peek1(vm, 3, "n", 0), 5);
	nvm_vm_free(vm);
}

static int fault_of(const char *src, int trig)
{
	struct nvm_vm *vm = vm_new(10000);
	load_run(vm, 1, src);
	if (trig >= 0)
		nvm_vm_dispatch(vm, 1, (uint16_t)trig, NULL, 0);
	struct nvm_event ev = { 0 };
	int n = count_events(vm, NVM_EV_FAULT, &ev);
	struct nvm_prog_stats st;
	int gone = nvm_vm_prog_stats(vm, 1, &st) == -ENOENT;
	nvm_vm_free(vm);
	return n == 1 && gone ? ev.code : -1;
}

TEST(faults_unload_the_program_and_say_why)
{
	CHECK_EQ(fault_of("PROGRAM t: VAR a[3], i; BEGIN i = 3; a[i] = 1; END; END;", -1), NVM_F_INDEX);
	CHECK_EQ(fault_of("PROGRAM t: VAR a[3], i; BEGIN i = -1; i = a[i]; END; END;", -1), NVM_F_INDEX);
	CHECK_EQ(fault_of("PROGRAM t: VAR a, b; BEGIN a = 1 / b; END; END;", -1), NVM_F_DIV);
	CHECK_EQ(fault_of("PROGRAM t: VAR a, b; BEGIN a = 1 MOD b; END; END;", -1), NVM_F_DIV);
	CHECK_EQ(fault_of("PROGRAM t: VAR m[4]; BEGIN SEND m LEN 40 AS 1 TO 1; END; END;", -1),
		 NVM_F_REGION);
	CHECK_EQ(fault_of("PROGRAM t: VAR m[4], n; BEGIN n = -1; SEND m LEN n AS 1 TO 1; END; END;", -1),
		 NVM_F_LEN);
	CHECK_EQ(fault_of("PROGRAM t: VAR m[4]; BEGIN DELIVER m OFFSET 0 INTO 9 LEN 8; END; END;", -1),
		 NVM_F_SEG);
	CHECK_EQ(fault_of("PROGRAM t: VAR a; TRIGGERS 1; MESSAGE 1: a = FIELD(0); END;", 1),
		 NVM_F_REGION);
	CHECK_EQ(fault_of("PROGRAM t: VAR a; BEGIN a = FIELD(0); END; END;", -1), NVM_F_MSG);
	CHECK_EQ(fault_of("PROGRAM t: VAR a; TRIGGERS 1; MESSAGE 1: a = BYTE(0); END;", 1), NVM_F_REGION);
	CHECK_EQ(fault_of("PROGRAM t: VAR m[2]; BEGIN REPLY m LEN 8 AS 1; END; END;", -1), NVM_F_MSG);
	CHECK_EQ(fault_of("PROGRAM t: VAR m[2], t; BEGIN t = 70000; SEND m LEN 8 AS t TO 1; END; END;", -1),
		 NVM_F_MSG);
}

TEST(budget_stops_a_handler_that_never_returns)
{
	CHECK_EQ(fault_of("PROGRAM t: VAR i; TRIGGERS 1; MESSAGE 1: WHILE 1 DO i = i + 1; END;", 1),
		 NVM_F_BUDGET);
	/* A long but finite loop within the budget is fine. */
	struct nvm_vm *vm = vm_new(100000);
	load_run(vm, 1, "PROGRAM t: VAR i; BEGIN WHILE i < 1000 DO i = i + 1; END; END;");
	CHECK_EQ(peek1(vm, 1, "i", 0), 1000);
	CHECK_EQ(count_events(vm, NVM_EV_FAULT, NULL), 0);
	nvm_vm_free(vm);
}

TEST(stop_ends_the_program_and_later_messages_are_dropped)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 1, "PROGRAM t: VAR n; TRIGGERS 1; MESSAGE 1: BEGIN n = n + 1; STOP; END; END;");
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 1, NULL, 0), 0);
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 1, NULL, 0), -EAGAIN);
	CHECK_EQ(peek1(vm, 1, "n", 0), 1);
	CHECK_EQ(count_events(vm, NVM_EV_STOP, NULL), 1);
	nvm_vm_free(vm);
}

TEST(undeclared_trigger_and_blockless_trigger_are_dropped)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 1, "PROGRAM t: TRIGGERS 1, 2; MESSAGE 1: BEGIN END; END;");
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 2, NULL, 0), -ENOENT);
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 3, NULL, 0), -ENOENT);
	CHECK_EQ(nvm_vm_dispatch(vm, 9, 1, NULL, 0), -ENOENT);
	CHECK_EQ(count_events(vm, NVM_EV_DROP, NULL), 3);
	nvm_vm_free(vm);
}

TEST(flag_lock_and_get_with_host_segment)
{
	struct nvm_vm *vm = vm_new(0);
	struct nvm_seg *s = nvm_seg_new(4, 32, NVM_SEG_R | NVM_SEG_W);
	nvm_vm_seg_attach(vm, s);
	int64_t in[2] = { 5, 6 };
	memcpy(s->base, in, 16);
	nvm_seg_lock(s);
	load_run(vm, 1,
		 "PROGRAM t: VAR b[2], was; TRIGGERS 1;\n"
		 "MESSAGE 1: BEGIN was = LOCKED(4); GET b OFFSET 0 FROM 4 LEN 16;\n"
		 "  b[0] = b[0] + b[1]; DELIVER b OFFSET 16 INTO 4 LEN 8; UNLOCK 4; FLAG 4; END;\n"
		 "END;");
	CHECK(!nvm_seg_flagged(s));
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 1, NULL, 0), 0);
	CHECK(nvm_seg_flagged(s));
	CHECK(!nvm_seg_locked(s));
	CHECK_EQ(peek1(vm, 1, "was", 0), 1);
	int64_t out;
	memcpy(&out, s->base + 16, 8);
	CHECK_EQ(out, 11);
	nvm_seg_clear_flag(s);
	CHECK(!nvm_seg_flagged(s));
	nvm_vm_free(vm);
	nvm_seg_put(s);
}

TEST(display_buffer_keeps_order_and_program)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 3, "PROGRAM t: VAR i; BEGIN WHILE i < 5 DO BEGIN DISPLAY i * i; i = i + 1; END; END; END;");
	int64_t v[8];
	uint32_t p[8];
	CHECK_EQ(nvm_vm_display_read(vm, v, p, 8), 5);
	CHECK_EQ(v[4], 16);
	CHECK_EQ(p[0], 3);
	nvm_vm_free(vm);
}

TEST(features_pdl_in_order_receiver)
{
	struct nvm_vm *vm = vm_new(0);
	struct nvm_seg *s = nvm_seg_new(3, 64, NVM_SEG_W);
	nvm_vm_seg_attach(vm, s);
	char err[256];
	struct nvm_module *m = compile_file("features.pdl");
	CHECK_EQ(nvm_vm_load(vm, 50, m, err, sizeof(err)), 0);
	nvm_module_free(m);
	nvm_vm_run(vm, 50);
	load_run(vm, 51,
		 "PROGRAM driver: VAR pkt[2], acks, last, lastdups; TRIGGERS 2, 9;\n"
		 "MESSAGE 9: BEGIN pkt[0] = FIELD(0); pkt[1] = FIELD(1); SEND pkt LEN 16 AS 1 TO 50; END;\n"
		 "MESSAGE 2: BEGIN acks = acks + 1; last = FIELD(0); lastdups = FIELD(1); END;\n"
		 "END;");
	int64_t pk[4][2] = { { 0, 100 }, { 1, 101 }, { 1, 101 }, { 2, 102 } };
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(nvm_vm_post(vm, 51, 9, pk[i], 16), 0);
		nvm_vm_progress(vm, 10);
	}
	CHECK_EQ(peek1(vm, 51, "acks", 0), 4);
	CHECK_EQ(peek1(vm, 51, "last", 0), 3);
	CHECK_EQ(peek1(vm, 51, "lastdups", 0), 1);
	int64_t w[3];
	memcpy(w, s->base, sizeof(w));
	CHECK_EQ(w[0], 100);
	CHECK_EQ(w[1], 101);
	CHECK_EQ(w[2], 102);
	CHECK(nvm_seg_flagged(s));
	CHECK_EQ(count_events(vm, NVM_EV_FAULT, NULL), 0);
	nvm_vm_free(vm);
	nvm_seg_put(s);
}

TEST(programs_reach_the_host_by_send_to_0_and_reply)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 4,
		 "PROGRAM h: VAR b[2]; TRIGGERS 1;\n"
		 "BEGIN b[0] = 77; SEND b LEN 8 AS 5 TO 0; END;\n"
		 "MESSAGE 1: BEGIN b[0] = FIELD(0) + 1; b[1] = SENDER; REPLY b LEN 16 AS 6; END;\n"
		 "END;");
	struct nvm_host_msg hm;
	int64_t w[4] = { 0 };
	CHECK_EQ(nvm_vm_host_recv(vm, &hm, w, sizeof(w)), 1);
	CHECK_EQ(hm.src_prog, 4);
	CHECK_EQ(hm.trig, 5);
	CHECK_EQ(hm.len, 8);
	CHECK_EQ(w[0], 77);
	int64_t q = 41;
	CHECK_EQ(nvm_vm_dispatch(vm, 4, 1, &q, 8), 0);
	CHECK_EQ(nvm_vm_host_recv(vm, &hm, w, sizeof(w)), 1);
	CHECK_EQ(hm.trig, 6);
	CHECK_EQ(w[0], 42);
	CHECK_EQ(w[1], NVM_HOST_PROG);
	CHECK_EQ(nvm_vm_host_recv(vm, &hm, w, sizeof(w)), 0);
	/* A full host queue drops with an event, never blocks or overwrites. */
	for (int i = 0; i < NVM_HOSTQ_LEN + 3; i++)
		nvm_vm_dispatch(vm, 4, 1, &q, 8);
	CHECK_EQ(count_events(vm, NVM_EV_DROP, NULL), 3);
	int n = 0;
	while (nvm_vm_host_recv(vm, &hm, NULL, 0))
		n++;
	CHECK_EQ(n, NVM_HOSTQ_LEN);
	nvm_vm_free(vm);
}

TEST(transport_hands_packets_to_the_vm)
{
	struct nvm_vm *vm = vm_new(0);
	load_run(vm, 3, "PROGRAM t: VAR got; TRIGGERS 4; MESSAGE 4: got = FIELD(0); END;");
	uint8_t pkt[NVM_HDR_LEN + 8];
	struct nvm_hdr h = { NVM_K_MSG, 3, 4, 99 };
	nvm_hdr_put(pkt, &h);
	int64_t v = 1234;
	memcpy(pkt + NVM_HDR_LEN, &v, 8);
	struct nvm_link_addr from = { 6, { 127, 0, 0, 1, 0, 1 } };
	CHECK_EQ(nvm_vm_input_packet(vm, pkt, sizeof(pkt), &from), 0);
	CHECK_EQ(nvm_vm_progress(vm, 4), 1);
	CHECK_EQ(peek1(vm, 3, "got", 0), 1234);
	pkt[0] ^= 1; /* not ours */
	CHECK_EQ(nvm_vm_input_packet(vm, pkt, sizeof(pkt), &from), -EPROTO);
	CHECK_EQ(nvm_vm_input_packet(vm, pkt, 3, &from), -EPROTO);
	nvm_vm_free(vm);
}

static void all(void)
{
	RUN(arithmetic_and_precedence);
	RUN(runtime_arithmetic_matches_constant_folding);
	RUN(if_else_and_while);
	RUN(and_or_short_circuit_guards_an_index);
	RUN(await_resumes_after_the_next_handler_returns);
	RUN(message_fields_msglen_sender_and_getmsg);
	RUN(reply_and_local_send_between_programs);
	RUN(send_without_to_goes_to_this_program);
	RUN(faults_unload_the_program_and_say_why);
	RUN(budget_stops_a_handler_that_never_returns);
	RUN(stop_ends_the_program_and_later_messages_are_dropped);
	RUN(undeclared_trigger_and_blockless_trigger_are_dropped);
	RUN(flag_lock_and_get_with_host_segment);
	RUN(display_buffer_keeps_order_and_program);
	RUN(features_pdl_in_order_receiver);
	RUN(programs_reach_the_host_by_send_to_0_and_reply);
	RUN(transport_hands_packets_to_the_vm);
}

int main(void)
{
	printf("# computed-goto dispatch (%s)\n", nvm_have_goto() ? "available" : "falls back to switch");
	dispatch_mode = NVM_DISPATCH_GOTO;
	all();
	printf("# switch dispatch\n");
	dispatch_mode = NVM_DISPATCH_SWITCH;
	all();
	return sm_check_result();
}
