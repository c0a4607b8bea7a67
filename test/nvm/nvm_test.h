/* nvm_test.h - tiny helpers shared by the NVM tests. */
#ifndef NVM_TEST_H
#define NVM_TEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvm/nvm_module.h"
#include "nvm/nvm_verify.h"
#include "nvm/nvm_vm.h"
#include "nvm/pdl_emit.h"

static int nvm_test_failures;

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", \
	__FILE__, __LINE__, #cond); nvm_test_failures++; } } while (0)
#define CHECK_EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); if (a_ != b_) { \
	fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld\n", __FILE__, __LINE__, \
		#a, a_, #b, b_); nvm_test_failures++; } } while (0)
#define TEST(name) static void name(void)
#define RUN(name) do { int f_ = nvm_test_failures; name(); \
	printf("%s %s\n", f_ == nvm_test_failures ? "ok  " : "FAIL", #name); } while (0)
#define DONE() return nvm_test_failures ? 1 : 0

/* Compile src or die (tests expecting errors use pdl_compile directly). */
static inline struct nvm_module *compile_ok(const char *src)
{
	char err[512];
	struct nvm_module *m = NULL;
	if (pdl_compile("test.pdl", src, strlen(src), &m, err, sizeof(err)) != 0) {
		fprintf(stderr, "unexpected compile error: %s\nin:\n%s\n", err, src);
		exit(1);
	}
	return m;
}

static inline char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(1);
	}
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	char *r = malloc(n + 1);
	memcpy(r, buf, n + 1);
	return r;
}

static inline struct nvm_module *compile_file(const char *name)
{
	char path[1024], err[512];
	snprintf(path, sizeof(path), "%s/%s", NVM_PDL_DIR, name);
	size_t len;
	char *src = read_text(path, &len);
	struct nvm_module *m = NULL;
	if (pdl_compile(path, src, len, &m, err, sizeof(err)) != 0) {
		fprintf(stderr, "compile error: %s\n", err);
		exit(1);
	}
	free(src);
	return m;
}

/* Compile src, load it as prog id into vm, run BEGIN. */
static inline void load_run(struct nvm_vm *vm, uint32_t id, const char *src)
{
	char err[256];
	struct nvm_module *m = compile_ok(src);
	int rc = nvm_vm_load(vm, id, m, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "load failed: %s\n", err);
		exit(1);
	}
	nvm_module_free(m);
	nvm_vm_run(vm, id);
}

static inline int64_t peek1(struct nvm_vm *vm, uint32_t id, const char *var, uint32_t idx)
{
	int64_t v = -12345;
	if (nvm_vm_peek(vm, id, var, idx, &v, 1) != 0)
		fprintf(stderr, "peek %s[%u] of %u failed\n", var, idx, id);
	return v;
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
