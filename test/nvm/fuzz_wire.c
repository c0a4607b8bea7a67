/* fuzz_wire: random datagrams arriving on a VM's link: messages for programs and
 * management requests (load, replace, run, send, unload) must be handled or
 * dropped, never crash.  The link is a fake that hands over the input once and
 * swallows what the VM sends back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nvm/nvm_link.h"
#include "nvm/nvm_vm.h"
#include "nvm/pdl_emit.h"

static const uint8_t *pending;
static size_t pending_len;

static int fake_send(struct nvm_link *l, const struct nvm_link_addr *to, const void *buf, size_t len)
{
	(void)l; (void)to; (void)buf; (void)len;
	return 0;
}

static long fake_poll(struct nvm_link *l, void *buf, size_t cap, struct nvm_link_addr *from,
		      int timeout_ms)
{
	(void)l; (void)timeout_ms;
	if (!pending)
		return 0;
	size_t n = pending_len < cap ? pending_len : cap;
	memcpy(buf, pending, n);
	pending = NULL;
	*from = (struct nvm_link_addr){ 6, { 127, 0, 0, 1, 0x12, 0x34 } };
	return (long)n;
}

static void fake_close(struct nvm_link *l)
{
	(void)l;
}

static const struct nvm_link_ops fake_ops = { fake_send, fake_poll, fake_close, NULL };
static struct nvm_link fake = { &fake_ops, { 6, { 127, 0, 0, 1, 0x43, 0x21 } }, -1 };
static struct nvm_vm *vm;

static const char *pong =
	"PROGRAM pong: VAR m[8]; TRIGGERS 12;\n"
	"MESSAGE 12: BEGIN GET m OFFSET 0 FROM MESSAGE LEN MSGLEN; REPLY m LEN MSGLEN AS 10; END; END;";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!vm) {
		char err[256];
		struct nvm_module *m;
		vm = nvm_vm_new(&(struct nvm_vm_config){ .link = &fake, .budget = 10000 });
		if (pdl_compile("pong", pong, strlen(pong), &m, err, sizeof(err)) != 0)
			abort();
		nvm_vm_load(vm, 415, m, err, sizeof(err));
		nvm_vm_run(vm, 415);
		nvm_module_free(m);
	}
	pending = data;
	pending_len = size;
	nvm_vm_progress(vm, 64);
	pending = NULL;
	/* Keep state bounded: anything the input loaded besides pong goes away. */
	uint32_t ids[NVM_PROGS_MAX];
	size_t n = nvm_vm_programs(vm, ids, NVM_PROGS_MAX);
	for (size_t i = 0; i < n && i < NVM_PROGS_MAX; i++)
		if (ids[i] != 415)
			nvm_vm_unload(vm, ids[i]);
	if (nvm_vm_programs(vm, ids, 1) == 0) { /* the input unloaded or broke pong */
		char err[256];
		struct nvm_module *m;
		if (pdl_compile("pong", pong, strlen(pong), &m, err, sizeof(err)) == 0) {
			nvm_vm_load(vm, 415, m, err, sizeof(err));
			nvm_vm_run(vm, 415);
			nvm_module_free(m);
		}
	}
	struct nvm_event ev;
	while (nvm_vm_event_next(vm, &ev))
		;
	int64_t v[64];
	while (nvm_vm_display_read(vm, v, NULL, 64))
		;
	return 0;
}
