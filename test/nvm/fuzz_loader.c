/* fuzz_loader: random bytes as a module image: decode + verify + load must reject
 * them or, if accepted, run every entry point safely under a small budget. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nvm_test.h"

static struct nvm_vm *vm;
static struct nvm_seg *seg;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!vm) {
		vm = nvm_vm_new(&(struct nvm_vm_config){ .budget = 20000, .code_bytes = 1 << 17,
							 .data_words = 1 << 17 });
		seg = nvm_seg_new(2, 256, NVM_SEG_R | NVM_SEG_W);
		nvm_vm_seg_attach(vm, seg);
	}
	char err[256];
	struct nvm_module *m = NULL;
	if (nvm_module_decode(data, size, &m, err, sizeof(err)) != 0)
		return 0;
	if (nvm_vm_load(vm, 1, m, err, sizeof(err)) == 0) {
		nvm_vm_run(vm, 1);
		uint8_t payload[64];
		memset(payload, 0x5a, sizeof(payload));
		for (unsigned i = 0; i < m->ntrig; i++) {
			nvm_vm_dispatch(vm, 1, m->trigs[i].id, payload, i % 2 ? sizeof(payload) : 0);
			nvm_vm_progress(vm, 8);
		}
		nvm_vm_unload(vm, 1);
		drain_vm(vm);
	}
	nvm_module_free(m);
	return 0;
}
