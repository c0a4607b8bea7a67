/* nvm_ops.c - the special instructions: every memory access of SEND, REPLY, DELIVER,
 * GET and the message operations goes through one (base, length, rights) region
 * check here; sends go to the local queue or out over the link. */
#include "nvm_vm_impl.h"
#include "nvm_proto.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int64_t nvm_op_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
	if (!remote && dst == NVM_HOST_PROG) {
		nvm_vm_host_put(vm, x->prog->id, trig, src, n);
		return 0;
	}
	if (!remote) {
		struct nvm_msg *q = nvm_vm_enqueue(vm);
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
	if (x->msg->remote && !x->vm->cfg.link)
		return NVM_F_MSG;
	return transmit(x, x->msg->remote, &x->msg->from, x->msg->src_prog, (uint16_t)trig, src,
			(size_t)n);
}

/* n bytes between data address p and offset off of segment seg, into the segment or out of
 * it; the source is checked first. */
static int seg_copy(struct nvm_exec *x, int64_t p, int64_t off, int64_t seg, int64_t n,
		    int into_seg)
{
	struct region d = data_region(x), s;
	struct region *from = into_seg ? &d : &s, *to = into_seg ? &s : &d;
	int64_t from_at = into_seg ? p : off, to_at = into_seg ? off : p;
	uint8_t *src, *dst;
	int f = seg_region(x, seg, &s, NULL);
	if (!f)
		f = region_at(from, from_at, n, NVM_SEG_R, &src);
	if (!f)
		f = region_at(to, to_at, n, NVM_SEG_W, &dst);
	if (!f)
		memmove(dst, src, (size_t)n);
	return f;
}

int nvm_op_deliver(struct nvm_exec *x, int64_t p, int64_t off, int64_t seg, int64_t n)
{
	return seg_copy(x, p, off, seg, n, 1);
}

int nvm_op_get(struct nvm_exec *x, int64_t p, int64_t off, int64_t seg, int64_t n)
{
	return seg_copy(x, p, off, seg, n, 0);
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

int nvm_op_msgb(struct nvm_exec *x, int64_t i, int64_t *out)
{
	if (!x->msg)
		return NVM_F_MSG;
	if (i < 0 || (uint64_t)i >= x->msg->len)
		return NVM_F_REGION;
	*out = x->msg->data[i];
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
