/* nvm_loader.c - the loader: programs side by side in the code and data arenas;
 * load, unload (with relocation of the programs after it) and replace. */
#include "nvm_vm_impl.h"
#include "nvm_verify.h"
#include "common/sm_err.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void nvm_prog_release(struct nvm_prog *p)
{
	nvm_module_free(p->mod);
	free(p->slots);
	memset(p, 0, sizeof(*p));
}

/* ---- loader: programs sit side by side in the arenas, in progs[] order ---- */

/* Place p's code and data at the end of the arenas. */
static int place(struct nvm_vm *vm, struct nvm_prog *p, const struct nvm_module *m)
{
	if (vm->cfg.code_bytes - vm->code_used < m->code_len ||
	    vm->cfg.data_words - vm->data_used < m->data_words)
		return -ENOSPC;
	p->slots = malloc((m->nvars + 1) * sizeof(*p->slots));
	p->mod = nvm_module_dup(m);
	if (!p->slots || !p->mod) {
		free(p->slots);
		nvm_module_free(p->mod);
		p->slots = NULL;
		p->mod = NULL;
		return -ENOMEM;
	}
	for (unsigned i = 0; i < m->nvars; i++)
		p->slots[i] = (struct nvm_slot){ m->vars[i].off, m->vars[i].len };
	p->code_off = vm->code_used;
	p->code_len = m->code_len;
	p->data_off = vm->data_used;
	p->data_words = m->data_words;
	memcpy(vm->code + p->code_off, m->code, m->code_len);
	memset(vm->data + p->data_off, 0, m->data_words * sizeof(int64_t));
	vm->code_used += m->code_len;
	vm->data_used += m->data_words;
	return 0;
}

/* Remove progs[i]'s code and data from the arenas and relocate the programs
 * after it: code is position-independent and data is addressed from the
 * program's base, so moving them is a memmove and two offsets. */
static void evict(struct nvm_vm *vm, unsigned i)
{
	struct nvm_prog *p = &vm->progs[i];
	uint32_t ce = p->code_off + p->code_len, de = p->data_off + p->data_words;
	memmove(vm->code + p->code_off, vm->code + ce, vm->code_used - ce);
	memmove(vm->data + p->data_off, vm->data + de, (vm->data_used - de) * sizeof(int64_t));
	vm->code_used -= p->code_len;
	vm->data_used -= p->data_words;
	for (unsigned j = i + 1; j < vm->nprogs; j++) {
		vm->progs[j].code_off -= p->code_len;
		vm->progs[j].data_off -= p->data_words;
	}
}

void nvm_vm_remove_prog(struct nvm_vm *vm, unsigned i)
{
	evict(vm, i);
	nvm_prog_release(&vm->progs[i]);
	memmove(&vm->progs[i], &vm->progs[i + 1], (vm->nprogs - i - 1) * sizeof(vm->progs[0]));
	vm->nprogs--;
	memset(&vm->progs[vm->nprogs], 0, sizeof(vm->progs[0]));
}

int nvm_vm_load_l(struct nvm_vm *vm, uint32_t id, const struct nvm_module *m, char *err,
		  size_t errlen)
{
	int rc = nvm_verify(m, err, errlen);
	if (rc)
		return rc;
	if (id == NVM_HOST_PROG || nvm_vm_find_prog(vm, id))
		return sm_err(err, errlen, -EEXIST, "program id %u %s", id,
			      id ? "already loaded" : "is reserved for the host");
	if (vm->nprogs == NVM_PROGS_MAX)
		return sm_err(err, errlen, -ENOSPC, "too many programs");
	struct nvm_prog *p = &vm->progs[vm->nprogs];
	rc = place(vm, p, m);
	if (rc)
		return sm_err(err, errlen, rc, "program %s does not fit: %s", m->name,
			      strerror(-rc));
	p->id = id;
	p->state = NVM_ST_LOADED;
	p->cont_pc = NVM_NO_PC;
	vm->nprogs++;
	return 0;
}

int nvm_vm_unload_l(struct nvm_vm *vm, uint32_t id)
{
	struct nvm_prog *p = nvm_vm_find_prog(vm, id);
	if (!p)
		return -ENOENT;
	nvm_vm_remove_prog(vm, (unsigned)(p - vm->progs));
	return 0;
}

static int same_layout(const struct nvm_module *a, const struct nvm_module *b)
{
	if (a->data_words != b->data_words || a->nvars != b->nvars)
		return 0;
	for (unsigned i = 0; i < a->nvars; i++)
		if (a->vars[i].off != b->vars[i].off || a->vars[i].len != b->vars[i].len ||
		    strcasecmp(a->vars[i].name, b->vars[i].name) != 0)
			return 0;
	return 1;
}

int nvm_vm_replace_l(struct nvm_vm *vm, uint32_t id, const struct nvm_module *m, char *err,
		     size_t errlen)
{
	struct nvm_prog *p = nvm_vm_find_prog(vm, id);
	if (!p)
		return -ENOENT;
	int rc = nvm_verify(m, err, errlen);
	if (rc)
		return rc;
	unsigned i = (unsigned)(p - vm->progs);
	int keep = same_layout(p->mod, m);
	int64_t *saved = NULL;
	if (keep && m->data_words) {
		saved = malloc(m->data_words * sizeof(int64_t));
		if (!saved)
			return -ENOMEM;
		memcpy(saved, vm->data + p->data_off, m->data_words * sizeof(int64_t));
	}
	struct nvm_prog old = *p;
	/* Move the program record to the end, the arenas' order, and place anew. */
	evict(vm, i);
	memmove(&vm->progs[i], &vm->progs[i + 1], (vm->nprogs - i - 1) * sizeof(vm->progs[0]));
	p = &vm->progs[vm->nprogs - 1];
	*p = old;
	p->mod = NULL;
	p->slots = NULL;
	rc = place(vm, p, m);
	if (rc == 0) {
		if (saved)
			memcpy(vm->data + p->data_off, saved, m->data_words * sizeof(int64_t));
		nvm_module_free(old.mod);
		free(old.slots);
		p->cont_pc = NVM_NO_PC;
	} else {
		/* The old program's bytes are gone from the arena; it cannot stay. */
		nvm_module_free(old.mod);
		free(old.slots);
		memset(p, 0, sizeof(*p));
		vm->nprogs--;
		snprintf(err ? err : (char[1]){0}, err ? errlen : 1,
			 "replacement does not fit (%s); program %u unloaded", strerror(-rc), id);
	}
	free(saved);
	return rc;
}
