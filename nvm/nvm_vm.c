/* nvm_vm.c - the VM: loader and arenas, trigger dispatch, the special
 * instructions' region-checked helpers, segments, display and events. */
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

int64_t nvm_op_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((format(printf, 3, 4)))
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static struct nvm_prog *find_prog(struct nvm_vm *vm, uint32_t id)
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
	vm->code = malloc(vm->cfg.code_bytes);
	vm->data = calloc(vm->cfg.data_words, sizeof(int64_t));
	vm->queue = malloc(vm->cfg.queue_len * sizeof(*vm->queue));
	vm->disp_val = malloc(vm->cfg.display_len * sizeof(*vm->disp_val));
	vm->disp_prog = malloc(vm->cfg.display_len * sizeof(*vm->disp_prog));
	vm->pkt = malloc(NVM_HDR_LEN + NVM_LINK_MTU);
	if (!vm->inbox || !vm->code || !vm->data || !vm->queue || !vm->disp_val || !vm->disp_prog || !vm->pkt) {
		nvm_vm_free(vm);
		return NULL;
	}
	return vm;
}

static void prog_release(struct nvm_prog *p)
{
	nvm_module_free(p->mod);
	free(p->slots);
	memset(p, 0, sizeof(*p));
}

void nvm_vm_free(struct nvm_vm *vm)
{
	if (!vm)
		return;
	for (unsigned i = 0; i < vm->nprogs; i++)
		prog_release(&vm->progs[i]);
	for (unsigned i = 0; i < NVM_SEGS_MAX; i++)
		nvm_seg_put(vm->segs[i]);
	pthread_mutex_destroy(&vm->lock);
	pthread_mutex_destroy(&vm->inbox_lock);
	free(vm->inbox);
	free(vm->code);
	free(vm->data);
	free(vm->queue);
	free(vm->disp_val);
	free(vm->disp_prog);
	free(vm->pkt);
	free(vm->amap);
	free(vm);
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

static void remove_prog(struct nvm_vm *vm, unsigned i)
{
	evict(vm, i);
	prog_release(&vm->progs[i]);
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
	if (id == NVM_HOST_PROG || find_prog(vm, id)) {
		seterr(err, errlen, "program id %u %s", id,
			 id ? "already loaded" : "is reserved for the host");
		return -EEXIST;
	}
	if (vm->nprogs == NVM_PROGS_MAX) {
		seterr(err, errlen, "too many programs");
		return -ENOSPC;
	}
	struct nvm_prog *p = &vm->progs[vm->nprogs];
	rc = place(vm, p, m);
	if (rc) {
		seterr(err, errlen, "program %s does not fit: %s",
			 m->name, strerror(-rc));
		return rc;
	}
	p->id = id;
	p->state = NVM_ST_LOADED;
	p->cont_pc = NVM_NO_PC;
	vm->nprogs++;
	return 0;
}

int nvm_vm_unload_l(struct nvm_vm *vm, uint32_t id)
{
	struct nvm_prog *p = find_prog(vm, id);
	if (!p)
		return -ENOENT;
	remove_prog(vm, (unsigned)(p - vm->progs));
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
	struct nvm_prog *p = find_prog(vm, id);
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
		remove_prog(vm, (unsigned)(p - vm->progs));
		return -EFAULT;
	}
	}
}

int nvm_vm_run_l(struct nvm_vm *vm, uint32_t id)
{
	struct nvm_prog *p = find_prog(vm, id);
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
	struct nvm_prog *p = find_prog(vm, msg->dst_prog);
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

static struct nvm_msg *enqueue(struct nvm_vm *vm)
{
	if (vm->qcount == vm->cfg.queue_len)
		return NULL;
	return &vm->queue[(vm->qhead + vm->qcount++) % vm->cfg.queue_len];
}

static void fill_host_msg(struct nvm_msg *q, uint32_t id, uint16_t trig, const void *buf, size_t len)
{
	q->dst_prog = id;
	q->trig = trig;
	q->src_prog = NVM_HOST_PROG;
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
		struct nvm_msg *src = &vm->inbox[vm->ihead], *q = enqueue(vm);
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
	struct nvm_msg *q = enqueue(vm);
	if (!q)
		return -EAGAIN;
	fill_host_msg(q, id, trig, buf, len);
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
	struct nvm_msg *q = enqueue(vm);
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

/* ---- special instructions ---- */

struct region {
	uint8_t *base;
	uint64_t len;
	unsigned rights;
};

static int region_at(const struct region *r, int64_t off, int64_t n, unsigned right, uint8_t **out)
{
	if (!(r->rights & right))
		return NVM_F_RIGHTS;
	if (n < 0)
		return NVM_F_LEN;
	if (off < 0 || (uint64_t)off > r->len || (uint64_t)n > r->len - (uint64_t)off)
		return NVM_F_REGION;
	*out = r->base + off;
	return 0;
}

static struct region data_region(const struct nvm_exec *x)
{
	return (struct region){ (uint8_t *)x->data, (uint64_t)x->data_words * 8,
				NVM_SEG_R | NVM_SEG_W };
}

static int seg_region(struct nvm_exec *x, int64_t seg, struct region *r, struct nvm_seg **out)
{
	struct nvm_seg *s = NULL;
	for (unsigned i = 0; i < NVM_SEGS_MAX && !s; i++)
		if (x->vm->segs[i] && (int64_t)x->vm->segs[i]->id == seg)
			s = x->vm->segs[i];
	if (!s)
		return NVM_F_SEG;
	*r = (struct region){ s->base, s->len, s->rights };
	if (out)
		*out = s;
	return 0;
}

static int transmit(struct nvm_exec *x, int remote, const struct nvm_link_addr *to,
		    uint32_t dst, uint16_t trig, const uint8_t *src, size_t n)
{
	struct nvm_vm *vm = x->vm;
	if (!remote) {
		struct nvm_msg *q = enqueue(vm);
		if (!q) {
			nvm_vm_event(vm, NVM_EV_DROP, x->prog->id, 0, x->pc,
				     "queue full: local send to %u/%u dropped", dst, trig);
			return 0;
		}
		*q = (struct nvm_msg){ .dst_prog = dst, .trig = trig, .src_prog = x->prog->id,
				       .len = (uint32_t)n };
		memcpy(q->data, src, n);
		return 0;
	}
	struct nvm_hdr h = { NVM_K_MSG, dst, trig, x->prog->id };
	nvm_hdr_put(vm->pkt, &h);
	memcpy(vm->pkt + NVM_HDR_LEN, src, n);
	int rc = nvm_link_send(vm->cfg.link, to, vm->pkt, NVM_HDR_LEN + n);
	if (rc)
		nvm_vm_event(vm, NVM_EV_SENDERR, x->prog->id, rc, x->pc,
			     "send to %u/%u failed: %s", dst, trig, strerror(-rc));
	return 0;
}

/* Where does AT address adr of this program go?  0 = local, 1 = link (*to), -1 = nowhere. */
static int route(struct nvm_exec *x, unsigned adr, struct nvm_link_addr *to)
{
	struct nvm_vm *vm = x->vm;
	if (adr == NVM_ADDR_LOCAL)
		return 0;
	const struct nvm_addr *a = &x->prog->mod->addrs[adr];
	for (unsigned i = 0; i < vm->namap; i++)
		if (vm->amap[i].pdl.len == a->len && memcmp(vm->amap[i].pdl.b, a->b, a->len) == 0) {
			*to = vm->amap[i].to;
			if (vm->cfg.link && nvm_link_addr_eq(to, &vm->cfg.link->self))
				return 0;
			return vm->cfg.link ? 1 : -1;
		}
	if (vm->cfg.link && a->len == vm->cfg.link->self.len &&
	    memcmp(a->b, vm->cfg.link->self.b, a->len) == 0)
		return 0;
	return -1;
}

int nvm_op_send(struct nvm_exec *x, int64_t p, int64_t n, int64_t trig, int64_t prog, unsigned adr)
{
	struct region r = data_region(x);
	uint8_t *src;
	if (n > NVM_MSG_MAX)
		return NVM_F_LEN;
	int f = region_at(&r, p, n, NVM_SEG_R, &src);
	if (f)
		return f;
	if (trig < 0 || trig > 0xffff || prog < 0 || prog > 0xffffffffLL)
		return NVM_F_MSG;
	struct nvm_link_addr to;
	int where = route(x, adr, &to);
	if (where < 0) {
		nvm_vm_event(x->vm, NVM_EV_SENDERR, x->prog->id, -EHOSTUNREACH, x->pc,
			     "SEND to %lld/%lld: AT address %u not mapped", (long long)prog,
			     (long long)trig, adr);
		return 0;
	}
	return transmit(x, where, &to, (uint32_t)prog, (uint16_t)trig, src, (size_t)n);
}

int nvm_op_reply(struct nvm_exec *x, int64_t p, int64_t n, int64_t trig)
{
	struct region r = data_region(x);
	uint8_t *src;
	if (!x->msg || trig < 0 || trig > 0xffff)
		return NVM_F_MSG;
	if (n > NVM_MSG_MAX)
		return NVM_F_LEN;
	int f = region_at(&r, p, n, NVM_SEG_R, &src);
	if (f)
		return f;
	if (!x->msg->remote && x->msg->src_prog == NVM_HOST_PROG) {
		nvm_vm_event(x->vm, NVM_EV_SENDERR, x->prog->id, -ENOTSUP, x->pc,
			     "REPLY to the host: the host has no inbox, use DELIVER and FLAG");
		return 0;
	}
	if (x->msg->remote && !x->vm->cfg.link)
		return NVM_F_MSG;
	return transmit(x, x->msg->remote, &x->msg->from, x->msg->src_prog, (uint16_t)trig, src,
			(size_t)n);
}

int nvm_op_deliver(struct nvm_exec *x, int64_t p, int64_t off, int64_t seg, int64_t n)
{
	struct region d = data_region(x), s;
	uint8_t *src, *dst;
	int f = seg_region(x, seg, &s, NULL);
	if (!f)
		f = region_at(&d, p, n, NVM_SEG_R, &src);
	if (!f)
		f = region_at(&s, off, n, NVM_SEG_W, &dst);
	if (!f)
		memmove(dst, src, (size_t)n);
	return f;
}

int nvm_op_get(struct nvm_exec *x, int64_t p, int64_t off, int64_t seg, int64_t n)
{
	struct region d = data_region(x), s;
	uint8_t *src, *dst;
	int f = seg_region(x, seg, &s, NULL);
	if (!f)
		f = region_at(&s, off, n, NVM_SEG_R, &src);
	if (!f)
		f = region_at(&d, p, n, NVM_SEG_W, &dst);
	if (!f)
		memmove(dst, src, (size_t)n);
	return f;
}

int nvm_op_getmsg(struct nvm_exec *x, int64_t p, int64_t off, int64_t n)
{
	if (!x->msg)
		return NVM_F_MSG;
	struct region d = data_region(x);
	struct region m = { (uint8_t *)x->msg->data, x->msg->len, NVM_SEG_R };
	uint8_t *src, *dst;
	int f = region_at(&m, off, n, NVM_SEG_R, &src);
	if (!f)
		f = region_at(&d, p, n, NVM_SEG_W, &dst);
	if (!f)
		memmove(dst, src, (size_t)n);
	return f;
}

int nvm_op_msgw(struct nvm_exec *x, int64_t i, int64_t *out)
{
	if (!x->msg)
		return NVM_F_MSG;
	if (i < 0 || (uint64_t)i >= x->msg->len / 8)
		return NVM_F_REGION;
	memcpy(out, x->msg->data + i * 8, 8);
	return 0;
}

int64_t nvm_op_msglen(struct nvm_exec *x)
{
	return x->msg ? x->msg->len : 0;
}

int64_t nvm_op_sender(struct nvm_exec *x)
{
	return x->msg ? x->msg->src_prog : NVM_HOST_PROG;
}

int64_t nvm_op_self(struct nvm_exec *x)
{
	return x->prog->id;
}

void nvm_op_display(struct nvm_exec *x, int64_t v)
{
	struct nvm_vm *vm = x->vm;
	if (vm->dcount == vm->cfg.display_len)
		return; /* full: the host reads too slowly; newest values are lost */
	unsigned i = (vm->dhead + vm->dcount++) % vm->cfg.display_len;
	vm->disp_val[i] = v;
	vm->disp_prog[i] = x->prog->id;
}

int nvm_op_flag(struct nvm_exec *x, int64_t seg)
{
	struct region r;
	struct nvm_seg *s;
	int f = seg_region(x, seg, &r, &s);
	if (!f)
		nvm_seg_set_flag(s);
	return f;
}

int nvm_op_unlock(struct nvm_exec *x, int64_t seg)
{
	struct region r;
	struct nvm_seg *s;
	int f = seg_region(x, seg, &r, &s);
	if (!f)
		nvm_seg_unlock(s);
	return f;
}

int nvm_op_locked(struct nvm_exec *x, int64_t seg, int64_t *out)
{
	struct region r;
	struct nvm_seg *s;
	int f = seg_region(x, seg, &r, &s);
	if (!f)
		*out = nvm_seg_locked(s);
	return f;
}

/* ---- public, locked wrappers ---- */

#define LOCKED_CALL(vm, expr) ({ pthread_mutex_lock(&(vm)->lock); int rc_ = (expr); \
	pthread_mutex_unlock(&(vm)->lock); rc_; })

int nvm_vm_load(struct nvm_vm *vm, uint32_t id, const struct nvm_module *m, char *err, size_t errlen)
{
	return LOCKED_CALL(vm, nvm_vm_load_l(vm, id, m, err, errlen));
}

int nvm_vm_load_image(struct nvm_vm *vm, uint32_t id, const void *img, size_t len, char *err,
		      size_t errlen)
{
	struct nvm_module *m;
	int rc = nvm_module_decode(img, len, &m, err, errlen);
	if (rc)
		return rc;
	rc = nvm_vm_load(vm, id, m, err, errlen);
	nvm_module_free(m);
	return rc;
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
	struct nvm_module *m;
	int rc = nvm_module_decode(img, len, &m, err, errlen);
	if (rc)
		return rc;
	rc = nvm_vm_replace(vm, id, m, err, errlen);
	nvm_module_free(m);
	return rc;
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
		fill_host_msg(q, id, trig, buf, len);
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
	struct nvm_prog *p = find_prog(vm, id);
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
	struct nvm_prog *p = find_prog(vm, id);
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
