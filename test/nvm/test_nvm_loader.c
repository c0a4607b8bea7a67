/* test_nvm_loader: several programs side by side; unload relocates the others
 * (code and data) without disturbing them; replace swaps code under a running
 * program, keeping data when the layout is the same; ids and space are checked. */
#include <unistd.h>

#include "nvm_test.h"

static const char *counter =
	"PROGRAM counter: VAR n, pad[10]; TRIGGERS 1;\n"
	"MESSAGE 1: n = n + 1; END;";
static const char *counter_by_ten =
	"PROGRAM counter: VAR n, pad[10]; TRIGGERS 1;\n"
	"MESSAGE 1: BEGIN n = n + 10; END; END;";
static const char *other_layout =
	"PROGRAM counter2: VAR a, n; TRIGGERS 1;\n"
	"MESSAGE 1: n = n + 100; END;";

/* Programs 1..n run `counter`; program id has been sent id messages. */
static void load_counters(struct nvm_vm *vm, uint32_t n)
{
	for (uint32_t id = 1; id <= n; id++)
		load_run(vm, id, counter);
	for (uint32_t id = 1; id <= n; id++)
		for (uint32_t k = 0; k < id; k++)
			CHECK_EQ(nvm_vm_dispatch(vm, id, 1, NULL, 0), 0);
}

/* Replaces program id by src, compiled; the replace's return code. */
static int replace_with(struct nvm_vm *vm, uint32_t id, const char *src)
{
	char err[256];
	struct nvm_module *m = compile_ok(src);
	int rc = nvm_vm_replace(vm, id, m, err, sizeof(err));
	nvm_module_free(m);
	return rc;
}

TEST(several_programs_side_by_side)
{
	struct nvm_vm *vm = nvm_vm_new(NULL);
	load_counters(vm, 5);
	for (uint32_t id = 1; id <= 5; id++)
		CHECK_EQ(peek1(vm, id, "n", 0), id);
	struct nvm_prog_stats a, b;
	nvm_vm_prog_stats(vm, 1, &a);
	nvm_vm_prog_stats(vm, 2, &b);
	CHECK_EQ(b.code_off, a.code_off + a.code_len);
	CHECK_EQ(b.data_off, a.data_off + a.data_words);
	nvm_vm_free(vm);
}

TEST(unload_relocates_the_programs_after_it)
{
	struct nvm_vm *vm = nvm_vm_new(NULL);
	load_counters(vm, 3);
	struct nvm_prog_stats before, after;
	nvm_vm_prog_stats(vm, 3, &before);
	CHECK_EQ(nvm_vm_unload(vm, 1), 0);
	CHECK_EQ(nvm_vm_unload(vm, 1), -ENOENT);
	nvm_vm_prog_stats(vm, 3, &after);
	CHECK(after.code_off < before.code_off);
	CHECK(after.data_off < before.data_off);
	CHECK_EQ(peek1(vm, 2, "n", 0), 2); /* data moved with the code */
	CHECK_EQ(peek1(vm, 3, "n", 0), 3);
	CHECK_EQ(nvm_vm_dispatch(vm, 3, 1, NULL, 0), 0);
	CHECK_EQ(peek1(vm, 3, "n", 0), 4);
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 1, NULL, 0), -ENOENT);
	nvm_vm_free(vm);
}

TEST(replace_keeps_data_with_same_layout)
{
	struct nvm_vm *vm = nvm_vm_new(NULL);
	load_run(vm, 1, counter);
	load_run(vm, 2, counter);
	nvm_vm_dispatch(vm, 1, 1, NULL, 0);
	nvm_vm_dispatch(vm, 1, 1, NULL, 0);
	CHECK_EQ(replace_with(vm, 1, counter_by_ten), 0);
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 1, NULL, 0), 0);
	CHECK_EQ(peek1(vm, 1, "n", 0), 12);
	CHECK_EQ(nvm_vm_dispatch(vm, 2, 1, NULL, 0), 0);
	CHECK_EQ(peek1(vm, 2, "n", 0), 1);
	struct nvm_prog_stats st;
	nvm_vm_prog_stats(vm, 1, &st);
	CHECK_EQ(st.state, NVM_ST_WAITING); /* still running */
	/* A different layout starts from zeroed data. */
	CHECK_EQ(replace_with(vm, 1, other_layout), 0);
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 1, NULL, 0), 0);
	CHECK_EQ(peek1(vm, 1, "n", 0), 100);
	/* A bad replacement is refused and the old program stays. */
	char err[256];
	struct nvm_module *m = compile_ok(counter);
	m->code[0] = 0xee;
	CHECK_EQ(nvm_vm_replace(vm, 1, m, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "unknown opcode") != NULL);
	nvm_module_free(m);
	CHECK_EQ(nvm_vm_dispatch(vm, 1, 1, NULL, 0), 0);
	CHECK_EQ(peek1(vm, 1, "n", 0), 200);
	nvm_vm_free(vm);
}

TEST(replace_while_queued_messages_wait_runs_new_code)
{
	struct nvm_vm *vm = nvm_vm_new(NULL);
	load_run(vm, 1, counter);
	nvm_vm_post(vm, 1, 1, NULL, 0);
	nvm_vm_post(vm, 1, 1, NULL, 0);
	CHECK_EQ(replace_with(vm, 1, counter_by_ten), 0);
	CHECK_EQ(nvm_vm_progress(vm, 10), 2);
	CHECK_EQ(peek1(vm, 1, "n", 0), 20);
	nvm_vm_free(vm);
}

TEST(ids_and_space_are_checked)
{
	struct nvm_vm *vm = nvm_vm_new(&(struct nvm_vm_config){ .code_bytes = 64, .data_words = 30 });
	char err[256];
	struct nvm_module *m = compile_ok(counter);
	CHECK_EQ(nvm_vm_load(vm, 0, m, err, sizeof(err)), -EEXIST);
	CHECK_EQ(nvm_vm_load(vm, 1, m, err, sizeof(err)), 0);
	CHECK_EQ(nvm_vm_load(vm, 1, m, err, sizeof(err)), -EEXIST);
	CHECK_EQ(nvm_vm_load(vm, 2, m, err, sizeof(err)), 0);
	CHECK_EQ(nvm_vm_load(vm, 3, m, err, sizeof(err)), -ENOSPC); /* 3 x 11 words > 30 */
	CHECK(strstr(err, "does not fit") != NULL);
	CHECK_EQ(nvm_vm_unload(vm, 1), 0);
	CHECK_EQ(nvm_vm_load(vm, 3, m, err, sizeof(err)), 0); /* compaction made room */
	CHECK_EQ(nvm_vm_run(vm, 3), 0);
	CHECK_EQ(nvm_vm_run(vm, 3), -EALREADY);
	CHECK_EQ(nvm_vm_run(vm, 9), -ENOENT);
	nvm_module_free(m);
	nvm_vm_free(vm);
}

TEST(module_file_round_trip)
{
	struct nvm_module *m = compile_file("ping.pdl"), *r = NULL;
	char path[] = "/tmp/nvm_loader_XXXXXX", err[256];
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(nvm_module_write_file(path, m), 0);
	CHECK_EQ(nvm_module_read_file(path, &r, err, sizeof(err)), 0);
	CHECK(r && r->code_len == m->code_len && memcmp(r->code, m->code, m->code_len) == 0);
	CHECK(r && r->naddr == 1 && memcmp(r->addrs[0].b, m->addrs[0].b, 8) == 0);
	unlink(path);
	nvm_module_free(m);
	nvm_module_free(r);
}

int main(void)
{
	RUN(several_programs_side_by_side);
	RUN(unload_relocates_the_programs_after_it);
	RUN(replace_keeps_data_with_same_layout);
	RUN(replace_while_queued_messages_wait_runs_new_code);
	RUN(ids_and_space_are_checked);
	RUN(module_file_round_trip);
	return sm_check_result();
}
