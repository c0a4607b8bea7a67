/* nvm_test.h - what the NVM tests share beyond common/sm_check.h. */
#ifndef NVM_TEST_H
#define NVM_TEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sm_check.h"
#include "common/sm_file.h"
#include "nvm/nvm_module.h"
#include "nvm/nvm_verify.h"
#include "nvm/nvm_vm.h"
#include "nvm/pdl_emit.h"

/* Compile src or die (tests expecting errors use pdl_compile directly). */
static inline struct nvm_module *compile_ok(const char *src)
{
	char err[512];
	struct nvm_module *m = NULL;
	REQUIRE(pdl_compile("test.pdl", src, strlen(src), &m, err, sizeof(err)) == 0,
		"%s\nin:\n%s", err, src);
	return m;
}

static inline struct nvm_module *compile_file(const char *name)
{
	char path[1024], err[512];
	snprintf(path, sizeof(path), "%s/%s", NVM_PDL_DIR, name);
	size_t len;
	char *src;
	REQUIRE(sm_read_file(path, &src, &len, err, sizeof(err)) == 0, "%s", err);
	struct nvm_module *m = NULL;
	REQUIRE(pdl_compile(path, src, len, &m, err, sizeof(err)) == 0, "%s", err);
	free(src);
	return m;
}

/* Compile src, load it as prog id into vm, run BEGIN. */
static inline void load_run(struct nvm_vm *vm, uint32_t id, const char *src)
{
	char err[256];
	struct nvm_module *m = compile_ok(src);
	REQUIRE(nvm_vm_load(vm, id, m, err, sizeof(err)) == 0, "%s", err);
	nvm_module_free(m);
	nvm_vm_run(vm, id);
}

static inline int64_t peek1(struct nvm_vm *vm, uint32_t id, const char *var, uint32_t idx)
{
	int64_t v = -12345;
	CHECK(nvm_vm_peek(vm, id, var, idx, &v, 1) == 0, "peek %s[%u] of %u", var, idx, id);
	return v;
}

/* What the fuzz targets do between inputs: a program's queued work run out, its display
 * values and the VM's events read, so that the next input starts clean. */
static inline void drain_vm(struct nvm_vm *vm)
{
	nvm_vm_progress(vm, 1000);
	int64_t v[64];
	while (nvm_vm_display_read(vm, v, NULL, 64))
		;
	struct nvm_event ev;
	while (nvm_vm_event_next(vm, &ev))
		;
}

/* Events of one kind, drained; returns how many, last one in *ev if given. */
static inline int count_events(struct nvm_vm *vm, int kind, struct nvm_event *last)
{
	struct nvm_event ev;
	int n = 0;
	while (nvm_vm_event_next(vm, &ev))
		if (ev.kind == kind) {
			n++;
			if (last)
				*last = ev;
		}
	return n;
}

#endif
