/* nvm_module.c - module file encode/decode and the disassembler. */
#include "nvm_module.h"
#include "nvm_opcodes.h"
#include "common/sm_err.h"
#include "common/sm_file.h"
#include "common/sm_bytes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct rd {
	const uint8_t *p;
	size_t len, pos;
	int bad;
};

static uint64_t rd_n(struct rd *r, unsigned n)
{
	if (r->bad || r->len - r->pos < n) {
		r->bad = 1;
		return 0;
	}
	uint64_t v = sm_get_le(r->p + r->pos, n);
	r->pos += n;
	return v;
}

static void rd_bytes(struct rd *r, void *dst, size_t n)
{
	if (r->bad || r->len - r->pos < n) {
		r->bad = 1;
		return;
	}
	memcpy(dst, r->p + r->pos, n);
	r->pos += n;
}

static void rd_name(struct rd *r, char *dst)
{
	size_t n = rd_n(r, 1);
	if (n > NVM_NAME_MAX) {
		r->bad = 1;
		return;
	}
	rd_bytes(r, dst, n);
	dst[r->bad ? 0 : n] = '\0';
}

void nvm_module_free(struct nvm_module *m)
{
	if (!m)
		return;
	free(m->vars);
	free(m->trigs);
	free(m->addrs);
	free(m->code);
	free(m);
}

int nvm_module_decode(const void *buf, size_t len, struct nvm_module **out,
		      char *err, size_t errlen)
{
	struct rd r = { buf, len, 0, 0 };
	char magic[4];
	*out = NULL;
	rd_bytes(&r, magic, 4);
	if (r.bad || memcmp(magic, "NVMM", 4) != 0)
		return sm_err(err, errlen, -EINVAL, "not a module: bad magic");
	unsigned ver = rd_n(&r, 2), flags = rd_n(&r, 2);
	if (ver != NVM_MODULE_VERSION || flags != 0)
		return sm_err(err, errlen, -EINVAL, "unsupported module version %u flags %u", ver,
			      flags);
	struct nvm_module *m = calloc(1, sizeof(*m));
	if (!m)
		return sm_err(err, errlen, -ENOMEM, "out of memory");
	rd_name(&r, m->name);
	m->data_words = rd_n(&r, 4);
	m->init_pc = rd_n(&r, 4);
	m->nvars = rd_n(&r, 2);
	m->ntrig = rd_n(&r, 2);
	m->naddr = rd_n(&r, 2);
	unsigned pad = rd_n(&r, 2);
	m->code_len = rd_n(&r, 4);
	const char *what = NULL;
	if (r.bad)
		what = "truncated header";
	else if (pad)
		what = "reserved header field not zero";
	else if (m->data_words > NVM_DATA_MAX_WORDS)
		what = "data section too large";
	else if (m->code_len == 0 || m->code_len > NVM_CODE_MAX)
		what = "code size out of range";
	else if (m->nvars > NVM_VARS_MAX || m->ntrig > NVM_TRIG_MAX || m->naddr > NVM_ADDRS_MAX)
		what = "too many table entries";
	if (what) {
		nvm_module_free(m);
		return sm_err(err, errlen, -EINVAL, "%s", what);
	}
	m->vars = calloc(m->nvars + 1, sizeof(*m->vars));
	m->trigs = calloc(m->ntrig + 1, sizeof(*m->trigs));
	m->addrs = calloc(m->naddr + 1, sizeof(*m->addrs));
	m->code = malloc(m->code_len);
	if (!m->vars || !m->trigs || !m->addrs || !m->code) {
		nvm_module_free(m);
		return sm_err(err, errlen, -ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < m->nvars; i++) {
		m->vars[i].off = rd_n(&r, 4);
		m->vars[i].len = rd_n(&r, 4);
		rd_name(&r, m->vars[i].name);
	}
	for (unsigned i = 0; i < m->ntrig; i++) {
		m->trigs[i].id = rd_n(&r, 2);
		m->trigs[i].pc = rd_n(&r, 4);
	}
	for (unsigned i = 0; i < m->naddr; i++) {
		m->addrs[i].len = rd_n(&r, 1);
		if (m->addrs[i].len > NVM_ADDR_MAX) {
			r.bad = 1;
			break;
		}
		rd_bytes(&r, m->addrs[i].b, m->addrs[i].len);
	}
	rd_bytes(&r, m->code, m->code_len);
	if (r.bad || r.pos != len) {
		nvm_module_free(m);
		return sm_err(err, errlen, -EINVAL, r.bad ? "truncated or malformed tables"
							: "trailing bytes after code");
	}
	*out = m;
	return 0;
}

struct wr {
	uint8_t *p;
	size_t len, cap;
	int bad;
};

static void wr_bytes(struct wr *w, const void *src, size_t n)
{
	if (w->bad)
		return;
	if (w->cap - w->len < n) {
		size_t cap = (w->cap + n) * 2;
		uint8_t *p = realloc(w->p, cap);
		if (!p) {
			w->bad = 1;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

static void wr_n(struct wr *w, uint64_t v, unsigned n)
{
	uint8_t b[8];
	sm_put_le(b, v, n);
	wr_bytes(w, b, n);
}

static void wr_name(struct wr *w, const char *s)
{
	size_t n = strnlen(s, NVM_NAME_MAX);
	wr_n(w, n, 1);
	wr_bytes(w, s, n);
}

int nvm_module_encode(const struct nvm_module *m, uint8_t **buf, size_t *len)
{
	struct wr w = { 0 };
	wr_bytes(&w, "NVMM", 4);
	wr_n(&w, NVM_MODULE_VERSION, 2);
	wr_n(&w, 0, 2);
	wr_name(&w, m->name);
	wr_n(&w, m->data_words, 4);
	wr_n(&w, m->init_pc, 4);
	wr_n(&w, m->nvars, 2);
	wr_n(&w, m->ntrig, 2);
	wr_n(&w, m->naddr, 2);
	wr_n(&w, 0, 2);
	wr_n(&w, m->code_len, 4);
	for (unsigned i = 0; i < m->nvars; i++) {
		wr_n(&w, m->vars[i].off, 4);
		wr_n(&w, m->vars[i].len, 4);
		wr_name(&w, m->vars[i].name);
	}
	for (unsigned i = 0; i < m->ntrig; i++) {
		wr_n(&w, m->trigs[i].id, 2);
		wr_n(&w, m->trigs[i].pc, 4);
	}
	for (unsigned i = 0; i < m->naddr; i++) {
		wr_n(&w, m->addrs[i].len, 1);
		wr_bytes(&w, m->addrs[i].b, m->addrs[i].len);
	}
	wr_bytes(&w, m->code, m->code_len);
	if (w.bad) {
		free(w.p);
		return -ENOMEM;
	}
	*buf = w.p;
	*len = w.len;
	return 0;
}

struct nvm_module *nvm_module_dup(const struct nvm_module *m)
{
	uint8_t *buf;
	size_t len;
	struct nvm_module *c = NULL;
	if (nvm_module_encode(m, &buf, &len) != 0)
		return NULL;
	nvm_module_decode(buf, len, &c, NULL, 0);
	free(buf);
	return c;
}

int nvm_module_read_file(const char *path, struct nvm_module **out, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int rc = sm_read_file(path, &buf, &len, err, errlen);
	if (rc)
		return rc;
	rc = nvm_module_decode(buf, len, out, err, errlen);
	free(buf);
	return rc;
}

int nvm_module_write_file(const char *path, const struct nvm_module *m)
{
	uint8_t *buf;
	size_t len;
	int rc = nvm_module_encode(m, &buf, &len);
	if (rc)
		return rc;
	FILE *f = fopen(path, "wb");
	if (!f) {
		rc = -errno;
		free(buf);
		return rc;
	}
	if (fwrite(buf, 1, len, f) != len)
		rc = -EIO;
	if (fclose(f) != 0 && !rc)
		rc = -EIO;
	free(buf);
	return rc;
}

static int64_t operand(const uint8_t *p, unsigned size)
{
	uint64_t v = sm_get_le(p, size);
	if (size == 1)
		return (int8_t)v;
	if (size == 4)
		return (int32_t)v;
	return (int64_t)v;
}

void nvm_disasm(const struct nvm_module *m, FILE *f)
{
	fprintf(f, "; program %s: %u data words, %u bytes of code\n", m->name,
		m->data_words, m->code_len);
	for (unsigned i = 0; i < m->nvars; i++)
		fprintf(f, "; var %u %s [%u] at word %u\n", i, m->vars[i].name,
			m->vars[i].len, m->vars[i].off);
	for (unsigned i = 0; i < m->naddr; i++) {
		fprintf(f, "; addr %u ", i);
		for (unsigned j = 0; j < m->addrs[i].len; j++)
			fprintf(f, "%s%u", j ? ":" : "", m->addrs[i].b[j]);
		fputc('\n', f);
	}
	for (uint32_t pc = 0; pc < m->code_len;) {
		if (pc == m->init_pc)
			fprintf(f, "BEGIN:\n");
		for (unsigned i = 0; i < m->ntrig; i++)
			if (m->trigs[i].pc == pc)
				fprintf(f, "MESSAGE %u:\n", m->trigs[i].id);
		uint8_t op = m->code[pc];
		if (op >= NVM_OP__COUNT) {
			fprintf(f, "%6u  .byte 0x%02x\n", pc, op);
			pc++;
			continue;
		}
		const struct nvm_opinfo *oi = &nvm_opinfo[op];
		if (m->code_len - pc - 1 < oi->size) {
			fprintf(f, "%6u  %s <truncated>\n", pc, oi->name);
			break;
		}
		int64_t a = operand(m->code + pc + 1, oi->size);
		uint32_t next = pc + 1 + oi->size;
		fprintf(f, "%6u  %-8s", pc, oi->name);
		switch (oi->kind) {
		case NVM_OPND_I8: case NVM_OPND_I32: case NVM_OPND_I64:
			fprintf(f, "%" PRId64, a);
			break;
		case NVM_OPND_VAR:
			fprintf(f, "%" PRId64 " (%s)", a,
				a < m->nvars ? m->vars[a].name : "?");
			break;
		case NVM_OPND_ADR:
			if (a == NVM_ADDR_LOCAL)
				fprintf(f, "local");
			else
				fprintf(f, "addr %" PRId64, a);
			break;
		case NVM_OPND_REL:
			fprintf(f, "%" PRId64 " (-> %" PRId64 ")", a, (int64_t)next + a);
			break;
		}
		fputc('\n', f);
		pc = next;
	}
}
