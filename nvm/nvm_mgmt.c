/* nvm_mgmt.c - management handles (local and remote) and the server side that a
 * VM runs from nvm_vm_progress when a request arrives on its link. */
#include "nvm_mgmt.h"
#include "nvm_proto.h"
#include "nvm_vm_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- local ---- */

struct mgmt_local {
	struct nvm_mgmt h;
	struct nvm_vm *vm;
};

static struct nvm_vm *lvm(struct nvm_mgmt *h)
{
	return ((struct mgmt_local *)h)->vm;
}

static int l_load(struct nvm_mgmt *h, uint32_t prog, const void *img, size_t len)
{
	return nvm_vm_load_image(lvm(h), prog, img, len, h->err, sizeof(h->err));
}

static int l_unload(struct nvm_mgmt *h, uint32_t prog)
{
	return nvm_vm_unload(lvm(h), prog);
}

static int l_replace(struct nvm_mgmt *h, uint32_t prog, const void *img, size_t len)
{
	return nvm_vm_replace_image(lvm(h), prog, img, len, h->err, sizeof(h->err));
}

static int l_run(struct nvm_mgmt *h, uint32_t prog)
{
	return nvm_vm_run(lvm(h), prog);
}

static int l_send(struct nvm_mgmt *h, uint32_t prog, uint16_t trig, const void *buf, size_t len)
{
	return nvm_vm_post(lvm(h), prog, trig, buf, len);
}

static void l_close(struct nvm_mgmt *h)
{
	free(h);
}

static const struct nvm_mgmt_ops local_ops = { l_load, l_unload, l_replace, l_run, l_send, l_close };

struct nvm_mgmt *nvm_mgmt_local(struct nvm_vm *vm)
{
	struct mgmt_local *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->h.ops = &local_ops;
	l->vm = vm;
	return &l->h;
}

/* ---- remote ---- */

struct mgmt_remote {
	struct nvm_mgmt h;
	struct nvm_link *link;
	struct nvm_link_addr to;
	uint32_t next_id;
	uint8_t *buf;
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int call(struct nvm_mgmt *h, int op, uint32_t prog, uint16_t trig, const void *data, size_t len)
{
	struct mgmt_remote *r = (struct mgmt_remote *)h;
	if (len > NVM_LINK_MTU - NVM_MGMT_REQ_LEN) {
		snprintf(h->err, sizeof(h->err), "request of %zu bytes too large for the link", len);
		return -EMSGSIZE;
	}
	uint32_t id = ++r->next_id;
	struct nvm_hdr hd = { NVM_K_MGMT_REQ, prog, trig, 0 };
	size_t n = NVM_HDR_LEN + NVM_MGMT_REQ_LEN + len;
	uint8_t *req = malloc(n);
	if (!req)
		return -ENOMEM;
	nvm_hdr_put(req, &hd);
	memset(req + NVM_HDR_LEN, 0, NVM_MGMT_REQ_LEN);
	req[NVM_HDR_LEN] = (uint8_t)op;
	sm_put_le32(req + NVM_HDR_LEN + 4, id);
	if (len)
		memcpy(req + NVM_HDR_LEN + NVM_MGMT_REQ_LEN, data, len);
	int rc = nvm_link_send(r->link, &r->to, req, n);
	int64_t start = now_ms(), deadline = start + h->timeout_ms;
	int resent = 0;
	while (rc == 0) {
		int64_t t = now_ms();
		if (t >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		if (!resent && t - start > h->timeout_ms / 2) { /* requests are idempotent enough */
			resent = 1;
			if (op != NVM_MOP_SEND)
				nvm_link_send(r->link, &r->to, req, n);
		}
		struct nvm_link_addr from;
		long got = nvm_link_poll(r->link, r->buf, NVM_HDR_LEN + NVM_LINK_MTU, &from,
					 (int)(deadline - t < 10 ? deadline - t : 10));
		if (got < 0) {
			rc = (int)got;
			break;
		}
		struct nvm_hdr rh;
		if (got == 0 || nvm_hdr_get(r->buf, (size_t)got, &rh) != 0 ||
		    rh.kind != NVM_K_MGMT_RESP || got < NVM_HDR_LEN + NVM_MGMT_RESP_LEN ||
		    sm_get_le32(r->buf + NVM_HDR_LEN) != id)
			continue; /* not our answer */
		int status = (int32_t)sm_get_le32(r->buf + NVM_HDR_LEN + 4);
		size_t tl = (size_t)got - NVM_HDR_LEN - NVM_MGMT_RESP_LEN;
		if (tl >= sizeof(h->err))
			tl = sizeof(h->err) - 1;
		memcpy(h->err, r->buf + NVM_HDR_LEN + NVM_MGMT_RESP_LEN, tl);
		h->err[tl] = '\0';
		free(req);
		return status;
	}
	snprintf(h->err, sizeof(h->err), "remote VM did not answer: %s", strerror(-rc));
	free(req);
	return rc;
}

static int r_load(struct nvm_mgmt *h, uint32_t prog, const void *img, size_t len)
{
	return call(h, NVM_MOP_LOAD, prog, 0, img, len);
}

static int r_unload(struct nvm_mgmt *h, uint32_t prog)
{
	return call(h, NVM_MOP_UNLOAD, prog, 0, NULL, 0);
}

static int r_replace(struct nvm_mgmt *h, uint32_t prog, const void *img, size_t len)
{
	return call(h, NVM_MOP_REPLACE, prog, 0, img, len);
}

static int r_run(struct nvm_mgmt *h, uint32_t prog)
{
	return call(h, NVM_MOP_RUN, prog, 0, NULL, 0);
}

static int r_send(struct nvm_mgmt *h, uint32_t prog, uint16_t trig, const void *buf, size_t len)
{
	return call(h, NVM_MOP_SEND, prog, trig, buf, len);
}

static void r_close(struct nvm_mgmt *h)
{
	free(((struct mgmt_remote *)h)->buf);
	free(h);
}

static const struct nvm_mgmt_ops remote_ops = { r_load, r_unload, r_replace, r_run, r_send, r_close };

struct nvm_mgmt *nvm_mgmt_remote(struct nvm_link *link, const struct nvm_link_addr *to)
{
	struct mgmt_remote *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->buf = malloc(NVM_HDR_LEN + NVM_LINK_MTU);
	if (!r->buf) {
		free(r);
		return NULL;
	}
	r->h.ops = &remote_ops;
	r->h.timeout_ms = 2000;
	r->link = link;
	r->to = *to;
	return &r->h;
}

/* ---- server side, VM lock held ---- */

void nvm_mgmt_serve(struct nvm_vm *vm, const uint8_t *pkt, size_t len, const struct nvm_link_addr *from)
{
	struct nvm_hdr h;
	if (nvm_hdr_get(pkt, len, &h) != 0 || len < NVM_HDR_LEN + NVM_MGMT_REQ_LEN)
		return;
	const uint8_t *req = pkt + NVM_HDR_LEN;
	const uint8_t *data = req + NVM_MGMT_REQ_LEN;
	size_t dlen = len - NVM_HDR_LEN - NVM_MGMT_REQ_LEN;
	uint32_t id = sm_get_le32(req + 4);
	char err[120] = "";
	int rc;
	struct nvm_module *m = NULL;
	switch (req[0]) {
	case NVM_MOP_LOAD:
	case NVM_MOP_REPLACE:
		rc = nvm_module_decode(data, dlen, &m, err, sizeof(err));
		if (rc == 0)
			rc = req[0] == NVM_MOP_LOAD ? nvm_vm_load_l(vm, h.dst_prog, m, err, sizeof(err))
						    : nvm_vm_replace_l(vm, h.dst_prog, m, err, sizeof(err));
		nvm_module_free(m);
		break;
	case NVM_MOP_UNLOAD:
		rc = nvm_vm_unload_l(vm, h.dst_prog);
		break;
	case NVM_MOP_RUN:
		rc = nvm_vm_run_l(vm, h.dst_prog);
		break;
	case NVM_MOP_SEND:
		rc = nvm_vm_post_l(vm, h.dst_prog, h.dst_trig, data, dlen);
		break;
	default:
		rc = -EOPNOTSUPP;
		snprintf(err, sizeof(err), "unknown management operation %u", req[0]);
	}
	if (rc && !err[0])
		snprintf(err, sizeof(err), "%s", strerror(-rc));
	uint8_t resp[NVM_HDR_LEN + NVM_MGMT_RESP_LEN + sizeof(err)];
	struct nvm_hdr rh = { NVM_K_MGMT_RESP, 0, 0, h.dst_prog };
	nvm_hdr_put(resp, &rh);
	sm_put_le32(resp + NVM_HDR_LEN, id);
	sm_put_le32(resp + NVM_HDR_LEN + 4, (uint32_t)rc);
	size_t tl = strlen(err);
	memcpy(resp + NVM_HDR_LEN + NVM_MGMT_RESP_LEN, err, tl);
	if (vm->cfg.link)
		nvm_link_send(vm->cfg.link, from, resp, NVM_HDR_LEN + NVM_MGMT_RESP_LEN + tl);
}
