/* fuzz_pdlc: any bytes through the compiler must give a module that verifies, or
 * a file:line:col error; never a crash.  Modules that compile are then loaded and
 * run (BEGIN and every trigger, small budget), so the interpreter meets realistic
 * programs too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvm_test.h"

static struct nvm_vm *vm;

static void run(const struct nvm_module *m)
{
	if (!vm) {
		vm = nvm_vm_new(&(struct nvm_vm_config){ .budget = 5000 });
		struct nvm_seg *s = nvm_seg_new(2, 128, NVM_SEG_R | NVM_SEG_W);
		nvm_vm_seg_attach(vm, s);
		nvm_seg_put(s);
	}
	char err[256];
	if (nvm_vm_load(vm, 1, m, err, sizeof(err)) != 0)
		return; /* e.g. too big for the arenas */
	nvm_vm_run(vm, 1);
	int64_t payload[4] = { 1, -1, 1 << 20, 0 };
	for (unsigned i = 0; i < m->ntrig; i++)
		nvm_vm_dispatch(vm, 1, m->trigs[i].id, payload, sizeof(payload));
	nvm_vm_progress(vm, 16);
	nvm_vm_unload(vm, 1);
	drain_vm(vm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct nvm_module *m = NULL;
	int rc = pdl_compile("fuzz.pdl", (const char *)data, size, &m, err, sizeof(err));
	if (rc == 0) {
		if (nvm_verify(m, err, sizeof(err)) != 0)
			abort(); /* the compiler produced code the verifier rejects */
		run(m);
	} else if (m != NULL || (strncmp(err, "fuzz.pdl:", 9) != 0)) {
		abort();
	}
	nvm_module_free(m);
	return 0;
}
