/* nvm_vm.c - the VM: creation, activations and trigger dispatch, the message queue
 * and host inbox, link input, and the locked public API (segments, display, events).
 * The loader is nvm_loader.c; the special instructions are nvm_ops.c. */
#include "nvm_vm_impl.h"
#include "nvm_proto.h"
#include "nvm_verify.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- small helpers ---- */

const char *nvm_fault_str(int fault)
{
	static const char *const s[] = {
		[NVM_F_NONE] = "no fault",
		[NVM_F_BUDGET] = "instruction budget exhausted (handler never returned)",
		[NVM_F_INDEX] = "array index out of range",
		[NVM_F_DIV] = "division by zero",
		[NVM_F_REGION] = "memory access outside its region",
		[NVM_F_RIGHTS] = "memory access without the right",
		[NVM_F_SEG] = "no such segment attached",
		[NVM_F_LEN] = "bad length",
		[NVM_F_MSG] = "bad message operation or operand",
	};
	return (fault >= 0 && fault <= NVM_F_MSG) ? s[fault] : "unknown fault";
}

void nvm_vm_event(struct nvm_vm *vm, int kind, uint32_t prog, int code, uint32_t pc,
		  const char *fmt, ...)
{
	unsigned cap = sizeof(vm->events) / sizeof(vm->events[0]);
	if (vm->ecount == cap) { /* drop the oldest */
		vm->ehead = (vm->ehead + 1) % cap;
		vm->ecount--;
	}
	struct nvm_event *e = &vm->events[(vm->ehead + vm->ecount++) % cap];
	e->kind = kind;
	e->prog = prog;
	e->code = code;
	e->pc = pc;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

struct nvm_prog *nvm_vm_find_prog(struct nvm_vm *vm, uint32_t id)
{
	for (unsigned i = 0; i < vm->nprogs; i++)
		if (vm->progs[i].id == id)
			return &vm->progs[i];
	return NULL;
}

static uint32_t trig_pc(const struct nvm_prog *p, uint16_t trig, int *declared)
{
	const struct nvm_module *m = p->mod;
	for (unsigned i = 0; i < m->ntrig; i++)
		if (m->trigs[i].id == trig) {
			*declared = 1;
			return m->trigs[i].pc;
		}
	*declared = 0;
	return NVM_NO_PC;
}

/* ---- creation ---- */

struct nvm_vm *nvm_vm_new(const struct nvm_vm_config *cfg)
{
	struct nvm_vm *vm = calloc(1, sizeof(*vm));
	if (!vm)
		return NULL;
	if (cfg)
		vm->cfg = *cfg;
	if (!vm->cfg.code_bytes)
		vm->cfg.code_bytes = 1 << 20;
	if (!vm->cfg.data_words)
		vm->cfg.data_words = 1 << 20;
	if (!vm->cfg.budget)
		vm->cfg.budget = 1000000;
	if (!vm->cfg.queue_len)
		vm->cfg.queue_len = 64;
	if (!vm->cfg.display_len)
		vm->cfg.display_len = 4096;
	vm->run = (vm->cfg.dispatch == NVM_DISPATCH_SWITCH || !nvm_have_goto()) ? nvm_run_switch
										 : nvm_run_goto;
	pthread_mutex_init(&vm->lock, NULL);
	pthread_mutex_init(&vm->inbox_lock, NULL);
	atomic_init(&vm->inbox_n, 0);
	vm->inbox = malloc(vm->cfg.queue_len * sizeof(*vm->inbox));
	vm->hostq = malloc(NVM_HOSTQ_LEN * sizeof(*vm->hostq));
	vm->code = malloc(vm->cfg.code_bytes);
	vm->data = calloc(vm->cfg.data_words, sizeof(int64_t));
	vm->queue = malloc(vm->cfg.queue_len * sizeof(*vm->queue));
	vm->disp_val = malloc(vm->cfg.display_len * sizeof(*vm->disp_val));
	vm->disp_prog = malloc(vm->cfg.display_len * sizeof(*vm->disp_prog));
	vm->pkt = malloc(NVM_HDR_LEN + NVM_LINK_MTU);
	if (!vm->inbox || !vm->hostq || !vm->code || !vm->data || !vm->queue || !vm->disp_val || !vm->disp_prog || !vm->pkt) {
		nvm_vm_free(vm);
		return NULL;
	}
	return vm;
}

void nvm_vm_free(struct nvm_vm *vm)
{
	if (!vm)
		return;
	for (unsigned i = 0; i < vm->nprogs; i++)
		nvm_prog_release(&vm->progs[i]);
	for (unsigned i = 0; i < NVM_SEGS_MAX; i++)
		nvm_seg_put(vm->segs[i]);
	pthread_mutex_destroy(&vm->lock);
	pthread_mutex_destroy(&vm->inbox_lock);
	free(vm->inbox);
	free(vm->hostq);
	free(vm->code);
	free(vm->data);
	free(vm->queue);
	free(vm->disp_val);
	free(vm->disp_prog);
	free(vm->pkt);
	free(vm->amap);
	free(vm);
}

/* ---- activations ---- */

static int activate(struct nvm_vm *vm, struct nvm_prog *p, uint32_t pc, const struct nvm_msg *msg)
{
	struct nvm_exec *x = &vm->x;
	x->vm = vm;
	x->prog = p;
	x->msg = msg;
	x->code = vm->code + p->code_off;
	x->code_len = p->code_len;
	x->data = vm->data + p->data_off;
	x->data_words = p->data_words;
	x->slots = p->slots;
	x->cont_pc = &p->cont_pc;
	x->budget = vm->cfg.budget;
	x->fault = 0;
	int r = vm->run(x, pc);
	p->activations++;
	p->instructions += vm->cfg.budget - x->budget;
	switch (r) {
	case NVM_R_IDLE:
		p->state = NVM_ST_WAITING;
		return 0;
	case NVM_R_AWAIT:
		p->cont_pc = x->pc;
		p->state = NVM_ST_WAITING;
		return 0;
	case NVM_R_STOP:
		p->state = NVM_ST_STOPPED;
		nvm_vm_event(vm, NVM_EV_STOP, p->id, 0, 0, "program %u (%s) stopped", p->id,
			     p->mod->name);
		return 0;
	default: {
		uint32_t id = p->id;
		nvm_vm_event(vm, NVM_EV_FAULT, id, x->fault, x->pc,
			     "program %u (%s) unloaded: %s at pc %u", id, p->mod->name,
			     nvm_fault_str(x->fault), x->pc);
		nvm_vm_remove_prog(vm, (unsigned)(p - vm->progs));
		return -EFAULT;
	}
	}
}

int nvm_vm_run_l(struct nvm_vm *vm, uint32_t id)
{
	struct nvm_prog *p = nvm_vm_find_prog(vm, id);
	if (!p)
		return -ENOENT;
	if (p->state != NVM_ST_LOADED)
		return -EALREADY;
	if (p->mod->init_pc == NVM_NO_PC) {
		p->state = NVM_ST_WAITING;
		return 0;
	}
	return activate(vm, p, p->mod->init_pc, NULL);
}

static int dispatch_msg(struct nvm_vm *vm, const struct nvm_msg *msg)
{
	struct nvm_prog *p = nvm_vm_find_prog(vm, msg->dst_prog);
	int declared;
	if (!p || p->state != NVM_ST_WAITING) {
		nvm_vm_event(vm, NVM_EV_DROP, msg->dst_prog, 0, 0,
			     "message for trigger %u dropped: program %u %s", msg->trig,
			     msg->dst_prog, p ? "not running" : "not loaded");
		return p ? -EAGAIN : -ENOENT;
	}
	uint32_t pc = trig_pc(p, msg->trig, &declared);
	if (pc == NVM_NO_PC) {
		nvm_vm_event(vm, NVM_EV_DROP, p->id, 0, 0,
			     "message dropped: program %u has %s trigger %u", p->id,
			     declared ? "no MESSAGE block for" : "no", msg->trig);
		return -ENOENT;
	}
	return activate(vm, p, pc, msg);
}

struct nvm_msg *nvm_vm_enqueue(struct nvm_vm *vm)
{
	if (vm->qcount == vm->cfg.queue_len)
		return NULL;
	return &vm->queue[(vm->qhead + vm->qcount++) % vm->cfg.queue_len];
}

/* A message between the host and a program of this VM. */
static void fill_local_msg(struct nvm_msg *q, uint32_t dst, uint32_t src, uint16_t trig,
			   const void *buf, size_t len)
{
	q->dst_prog = dst;
	q->trig = trig;
	q->src_prog = src;
	q->remote = 0;
	q->len = (uint32_t)len;
	if (len)
		memcpy(q->data, buf, len);
}

/* Move host posts into the run queue, as far as it has room; VM lock held. */
static void drain_inbox(struct nvm_vm *vm)
{
	if (!atomic_load_explicit(&vm->inbox_n, memory_order_acquire))
		return;
	pthread_mutex_lock(&vm->inbox_lock);
	while (vm->icount && vm->qcount < vm->cfg.queue_len) {
		struct nvm_msg *src = &vm->inbox[vm->ihead], *q = nvm_vm_enqueue(vm);
		memcpy(q, src, offsetof(struct nvm_msg, data) + src->len);
		vm->ihead = (vm->ihead + 1) % vm->cfg.queue_len;
		vm->icount--;
	}
	atomic_store_explicit(&vm->inbox_n, vm->icount, memory_order_release);
	pthread_mutex_unlock(&vm->inbox_lock);
}

int nvm_vm_post_l(struct nvm_vm *vm, uint32_t id, uint16_t trig, const void *buf, size_t len)
{
	if (len > NVM_MSG_MAX)
		return -EMSGSIZE;
	struct nvm_msg *q = nvm_vm_enqueue(vm);
	if (!q)
		return -EAGAIN;
	fill_local_msg(q, id, NVM_HOST_PROG, trig, buf, len);
	return 0;
}

void nvm_vm_input(struct nvm_vm *vm, const uint8_t *pkt, size_t len, const struct nvm_link_addr *from)
{
	struct nvm_hdr h;
	if (nvm_hdr_get(pkt, len, &h) != 0)
		return; /* not ours */
	if (h.kind == NVM_K_MGMT_REQ) {
		nvm_mgmt_serve(vm, pkt, len, from);
		return;
	}
	if (h.kind != NVM_K_MSG)
		return;
	if (len - NVM_HDR_LEN > NVM_MSG_MAX) {
		nvm_vm_event(vm, NVM_EV_DROP, h.dst_prog, 0, 0, "oversized message dropped");
		return;
	}
	if (h.dst_prog == NVM_HOST_PROG) { /* a remote program answering our host */
		nvm_vm_host_put(vm, h.src_prog, h.dst_trig, pkt + NVM_HDR_LEN, len - NVM_HDR_LEN);
		return;
	}
	struct nvm_msg *q = nvm_vm_enqueue(vm);
	if (!q) {
		nvm_vm_event(vm, NVM_EV_DROP, h.dst_prog, 0, 0,
			     "queue full: message for trigger %u dropped", h.dst_trig);
		return;
	}
	q->dst_prog = h.dst_prog;
	q->trig = h.dst_trig;
	q->src_prog = h.src_prog;
	q->remote = 1;
	q->from = *from;
	q->len = (uint32_t)(len - NVM_HDR_LEN);
	memcpy(q->data, pkt + NVM_HDR_LEN, q->len);
}

int nvm_vm_input_packet(struct nvm_vm *vm, const void *pkt, size_t len,
			const struct nvm_link_addr *from)
{
	struct nvm_hdr h;
	if (nvm_hdr_get(pkt, len, &h) != 0)
		return -EPROTO;
	pthread_mutex_lock(&vm->lock);
	nvm_vm_input(vm, pkt, len, from);
	pthread_mutex_unlock(&vm->lock);
	return 0;
}

int nvm_vm_progress(struct nvm_vm *vm, unsigned max)
{
	int n = 0;
	pthread_mutex_lock(&vm->lock);
	if (vm->cfg.link) {
		struct nvm_link_addr from;
		for (unsigned i = 0; i < vm->cfg.queue_len && vm->qcount < vm->cfg.queue_len; i++) {
			long r = nvm_link_poll(vm->cfg.link, vm->pkt, NVM_HDR_LEN + NVM_LINK_MTU, &from, 0);
			if (r <= 0)
				break;
			nvm_vm_input(vm, vm->pkt, (size_t)r, &from);
		}
	}
	drain_inbox(vm);
	/* One message at a time: a handler's local SENDs join the back of the queue. */
	while (vm->qcount && (unsigned)n < max) {
		struct nvm_msg *q = &vm->queue[vm->qhead];
		/* Run from the queue slot itself; the slot is released after the handler,
		 * so a full queue makes the handler's SENDs drop rather than overwrite it. */
		dispatch_msg(vm, q);
		vm->qhead = (vm->qhead + 1) % vm->cfg.queue_len;
		vm->qcount--;
		n++;
	}
	pthread_mutex_unlock(&vm->lock);
	return n;
}

/* ---- public, locked wrappers ---- */

#define LOCKED_CALL(vm, expr) ({ pthread_mutex_lock(&(vm)->lock); int rc_ = (expr); \
	pthread_mutex_unlock(&(vm)->lock); rc_; })

int nvm_vm_load(struct nvm_vm *vm, uint32_t id, const struct nvm_module *m, char *err, size_t errlen)
{
	return LOCKED_CALL(vm, nvm_vm_load_l(vm, id, m, err, errlen));
}

/* Load or replace (by `install`) the module encoded in img. */
static int install_image(struct nvm_vm *vm, uint32_t id, const void *img, size_t len,
			 int (*install)(struct nvm_vm *, uint32_t, const struct nvm_module *,
					char *, size_t),
			 char *err, size_t errlen)
{
	struct nvm_module *m;
	int rc = nvm_module_decode(img, len, &m, err, errlen);
	if (rc)
		return rc;
	rc = install(vm, id, m, err, errlen);
	nvm_module_free(m);
	return rc;
}

int nvm_vm_load_image(struct nvm_vm *vm, uint32_t id, const void *img, size_t len, char *err,
		      size_t errlen)
{
	return install_image(vm, id, img, len, nvm_vm_load, err, errlen);
}

int nvm_vm_unload(struct nvm_vm *vm, uint32_t id)
{
	return LOCKED_CALL(vm, nvm_vm_unload_l(vm, id));
}

int nvm_vm_replace(struct nvm_vm *vm, uint32_t id, const struct nvm_module *m, char *err,
		   size_t errlen)
{
	return LOCKED_CALL(vm, nvm_vm_replace_l(vm, id, m, err, errlen));
}

int nvm_vm_replace_image(struct nvm_vm *vm, uint32_t id, const void *img, size_t len, char *err,
			 size_t errlen)
{
	return install_image(vm, id, img, len, nvm_vm_replace, err, errlen);
}

int nvm_vm_run(struct nvm_vm *vm, uint32_t id)
{
	return LOCKED_CALL(vm, nvm_vm_run_l(vm, id));
}

int nvm_vm_post(struct nvm_vm *vm, uint32_t id, uint16_t trig, const void *buf, size_t len)
{
	if (len > NVM_MSG_MAX)
		return -EMSGSIZE;
	int rc = -EAGAIN;
	pthread_mutex_lock(&vm->inbox_lock);
	if (vm->icount < vm->cfg.queue_len) {
		struct nvm_msg *q = &vm->inbox[(vm->ihead + vm->icount++) % vm->cfg.queue_len];
		fill_local_msg(q, id, NVM_HOST_PROG, trig, buf, len);
		atomic_store_explicit(&vm->inbox_n, vm->icount, memory_order_release);
		rc = 0;
	}
	pthread_mutex_unlock(&vm->inbox_lock);
	return rc;
}

static int dispatch_now(struct nvm_vm *vm, uint32_t id, uint16_t trig, const void *buf, size_t len)
{
	static _Thread_local struct nvm_msg m; /* 8 KiB: keep it off the stack */
	if (len > NVM_MSG_MAX)
		return -EMSGSIZE;
	m.dst_prog = id;
	m.trig = trig;
	m.src_prog = NVM_HOST_PROG;
	m.remote = 0;
	m.len = (uint32_t)len;
	if (len)
		memcpy(m.data, buf, len);
	return dispatch_msg(vm, &m);
}

int nvm_vm_dispatch(struct nvm_vm *vm, uint32_t id, uint16_t trig, const void *buf, size_t len)
{
	return LOCKED_CALL(vm, dispatch_now(vm, id, trig, buf, len));
}

static int map_addr_l(struct nvm_vm *vm, const uint8_t *pdl, size_t n, const struct nvm_link_addr *to)
{
	if (n == 0 || n > NVM_ADDR_MAX || to->len > NVM_LINK_ADDR_MAX)
		return -EINVAL;
	for (unsigned i = 0; i < vm->namap; i++)
		if (vm->amap[i].pdl.len == n && memcmp(vm->amap[i].pdl.b, pdl, n) == 0) {
			vm->amap[i].to = *to;
			return 0;
		}
	struct nvm_addrmap *a = realloc(vm->amap, (vm->namap + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	vm->amap = a;
	a[vm->namap].pdl.len = (uint8_t)n;
	memcpy(a[vm->namap].pdl.b, pdl, n);
	a[vm->namap].to = *to;
	vm->namap++;
	return 0;
}

int nvm_vm_map_addr(struct nvm_vm *vm, const uint8_t *pdl, size_t n, const struct nvm_link_addr *to)
{
	return LOCKED_CALL(vm, map_addr_l(vm, pdl, n, to));
}

static int seg_attach_l(struct nvm_vm *vm, struct nvm_seg *s)
{
	int slot = -1;
	for (int i = 0; i < NVM_SEGS_MAX; i++) {
		if (vm->segs[i] && vm->segs[i]->id == s->id)
			return -EEXIST;
		if (!vm->segs[i] && slot < 0)
			slot = i;
	}
	if (slot < 0)
		return -ENOSPC;
	nvm_seg_get(s);
	vm->segs[slot] = s;
	return 0;
}

static int seg_detach_l(struct nvm_vm *vm, uint32_t id)
{
	for (int i = 0; i < NVM_SEGS_MAX; i++)
		if (vm->segs[i] && vm->segs[i]->id == id) {
			nvm_seg_put(vm->segs[i]);
			vm->segs[i] = NULL;
			return 0;
		}
	return -ENOENT;
}

int nvm_vm_seg_attach(struct nvm_vm *vm, struct nvm_seg *s)
{
	return LOCKED_CALL(vm, seg_attach_l(vm, s));
}

int nvm_vm_seg_detach(struct nvm_vm *vm, uint32_t id)
{
	return LOCKED_CALL(vm, seg_detach_l(vm, id));
}

size_t nvm_vm_display_read(struct nvm_vm *vm, int64_t *vals, uint32_t *progs, size_t max)
{
	size_t n = 0;
	pthread_mutex_lock(&vm->lock);
	while (n < max && vm->dcount) {
		vals[n] = vm->disp_val[vm->dhead];
		if (progs)
			progs[n] = vm->disp_prog[vm->dhead];
		vm->dhead = (vm->dhead + 1) % vm->cfg.display_len;
		vm->dcount--;
		n++;
	}
	pthread_mutex_unlock(&vm->lock);
	return n;
}

void nvm_vm_host_put(struct nvm_vm *vm, uint32_t src, uint16_t trig, const void *buf, size_t n)
{
	if (vm->hcount == NVM_HOSTQ_LEN) {
		nvm_vm_event(vm, NVM_EV_DROP, src, 0, 0,
			     "host queue full: message from %u for host trigger %u dropped", src, trig);
		return;
	}
	struct nvm_msg *q = &vm->hostq[(vm->hhead + vm->hcount++) % NVM_HOSTQ_LEN];
	fill_local_msg(q, NVM_HOST_PROG, src, trig, buf, n);
}

int nvm_vm_host_recv(struct nvm_vm *vm, struct nvm_host_msg *info, void *buf, size_t cap)
{
	int got = 0;
	pthread_mutex_lock(&vm->lock);
	if (vm->hcount) {
		const struct nvm_msg *q = &vm->hostq[vm->hhead];
		*info = (struct nvm_host_msg){ q->src_prog, q->trig, q->len };
		if (cap && buf)
			memcpy(buf, q->data, q->len < cap ? q->len : cap);
		vm->hhead = (vm->hhead + 1) % NVM_HOSTQ_LEN;
		vm->hcount--;
		got = 1;
	}
	pthread_mutex_unlock(&vm->lock);
	return got;
}

int nvm_vm_event_next(struct nvm_vm *vm, struct nvm_event *ev)
{
	int got = 0;
	pthread_mutex_lock(&vm->lock);
	if (vm->ecount) {
		unsigned cap = sizeof(vm->events) / sizeof(vm->events[0]);
		*ev = vm->events[vm->ehead];
		vm->ehead = (vm->ehead + 1) % cap;
		vm->ecount--;
		got = 1;
	}
	pthread_mutex_unlock(&vm->lock);
	return got;
}

size_t nvm_vm_programs(struct nvm_vm *vm, uint32_t *ids, size_t max)
{
	pthread_mutex_lock(&vm->lock);
	size_t n = vm->nprogs;
	for (size_t i = 0; i < n && i < max; i++)
		ids[i] = vm->progs[i].id;
	pthread_mutex_unlock(&vm->lock);
	return n;
}

int nvm_vm_prog_stats(struct nvm_vm *vm, uint32_t id, struct nvm_prog_stats *st)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&vm->lock);
	struct nvm_prog *p = nvm_vm_find_prog(vm, id);
	if (p) {
		*st = (struct nvm_prog_stats){ p->state, p->activations, p->instructions,
					       p->code_off, p->code_len, p->data_off, p->data_words };
		rc = 0;
	} else {
		memset(st, 0, sizeof(*st));
	}
	pthread_mutex_unlock(&vm->lock);
	return rc;
}

int nvm_vm_peek(struct nvm_vm *vm, uint32_t id, const char *var, uint32_t idx, int64_t *out, size_t n)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&vm->lock);
	struct nvm_prog *p = nvm_vm_find_prog(vm, id);
	for (unsigned i = 0; p && i < p->mod->nvars; i++) {
		const struct nvm_var *v = &p->mod->vars[i];
		if (strcasecmp(v->name, var) != 0)
			continue;
		if (idx > v->len || n > v->len - idx) {
			rc = -ERANGE;
			break;
		}
		memcpy(out, vm->data + p->data_off + v->off + idx, n * sizeof(int64_t));
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&vm->lock);
	return rc;
}
