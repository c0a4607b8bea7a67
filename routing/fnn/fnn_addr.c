/* fnn_addr.c - the host/NIC address map: "pc nic ifname ipv4 mac" per line. */
#include "fnn.h"
#include "fnn_util.h"
#include "common/sm_err.h"
#include "common/sm_file.h"
#include "common/sm_array.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fnn_addrmap_free(struct fnn_addrmap *m)
{
	free(m->nic);
	memset(m, 0, sizeof(*m));
}

static int addrmap_alloc(struct fnn_addrmap *m, int npcs, int maxnics)
{
	memset(m, 0, sizeof(*m));
	m->npcs = npcs;
	m->maxnics = maxnics;
	m->nic = calloc((size_t)(npcs ? npcs : 1) * (maxnics ? maxnics : 1), sizeof(*m->nic));
	if (!m->nic)
		return -ENOMEM;
	for (int i = 0; i < npcs * maxnics; i++)
		m->nic[i].pc = -1;
	return 0;
}

const struct fnn_nic_addr *fnn_addr(const struct fnn_addrmap *m, int pc, int nic)
{
	if (!m || pc < 0 || pc >= m->npcs || nic < 0 || nic >= m->maxnics)
		return NULL;
	const struct fnn_nic_addr *a = &m->nic[pc * m->maxnics + nic];
	return a->pc < 0 ? NULL : a;
}

int fnn_addrmap_default(struct fnn_addrmap *m, const struct fnn_design *d)
{
	/* one 10.(s+1).0.0/16 subnet per switch, hosts 1..65534 */
	if (d->nswitches > 254 || d->npcs > 65534)
		return -E2BIG;
	int rc = addrmap_alloc(m, d->npcs, FNN_MAX_NICS);
	if (rc)
		return rc;
	for (int pc = 0; pc < d->npcs; pc++)
		for (int k = 0; k < FNN_MAX_NICS; k++) {
			int s = fnn_nic_switch(d, pc, k), h = pc + 1;
			if (s < 0)
				break;
			struct fnn_nic_addr *a = &m->nic[pc * m->maxnics + k];
			a->pc = pc;
			a->nic = k;
			snprintf(a->ifname, sizeof(a->ifname), "eth%d", k);
			unsigned char net = (unsigned char)(s + 1), hi = (unsigned char)(h >> 8);
			unsigned char lo = (unsigned char)h, shi = (unsigned char)(s >> 8);
			snprintf(a->ip, sizeof(a->ip), "10.%u.%u.%u", net, hi, lo);
			snprintf(a->mac, sizeof(a->mac), "02:f0:%02x:%02x:%02x:%02x", shi,
				 (unsigned char)s, hi, lo);
		}
	return 0;
}

int fnn_addrmap_print(const struct fnn_addrmap *m, FILE *out)
{
	fprintf(out, "# pc nic ifname ipv4 mac\n");
	for (int i = 0; i < m->npcs * m->maxnics; i++) {
		const struct fnn_nic_addr *a = &m->nic[i];
		if (a->pc >= 0)
			fprintf(out, "%d %d %s %s %s\n", a->pc, a->nic, a->ifname, a->ip, a->mac);
	}
	return ferror(out) ? -EIO : 0;
}

static int valid_mac(const char *s)
{
	if (strlen(s) != 17)
		return 0;
	for (int i = 0; i < 17; i++) {
		char c = s[i];
		int hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
		if (i % 3 == 2 ? c != ':' : !hex)
			return 0;
	}
	return 1;
}

static int parse_entry(struct fnn_cursor *c, int line, struct fnn_nic_addr *a, char *err,
		       size_t errlen)
{
	long pc, nic;
	struct in_addr ia;
	if (fnn_cursor_long(c, &pc) || pc < 0 || pc >= FNN_MAX_PCS)
		return sm_err(err, errlen, -EINVAL, "line %d: PC must be 0..%d", line,
			       FNN_MAX_PCS - 1);
	fnn_cursor_blank(c);
	if (fnn_cursor_long(c, &nic) || nic < 0 || nic >= FNN_MAX_NICS)
		return sm_err(err, errlen, -EINVAL, "line %d: PC %ld: NIC must be 0..%d", line, pc,
			       FNN_MAX_NICS - 1);
	fnn_cursor_blank(c);
	if (fnn_cursor_word(c, a->ifname, sizeof(a->ifname)))
		return sm_err(err, errlen, -EINVAL, "line %d: PC %ld NIC %ld: bad interface name",
			       line, pc, nic);
	fnn_cursor_blank(c);
	if (fnn_cursor_word(c, a->ip, sizeof(a->ip)) || inet_pton(AF_INET, a->ip, &ia) != 1)
		return sm_err(err, errlen, -EINVAL, "line %d: PC %ld NIC %ld: bad IPv4 address",
			       line, pc, nic);
	fnn_cursor_blank(c);
	if (fnn_cursor_word(c, a->mac, sizeof(a->mac)) || !valid_mac(a->mac))
		return sm_err(err, errlen, -EINVAL, "line %d: PC %ld NIC %ld: bad MAC address",
			       line, pc, nic);
	fnn_cursor_blank(c);
	int ch = fnn_cursor_peek(c);
	if (ch != '\n' && ch != '#' && ch != EOF)
		return sm_err(err, errlen, -EINVAL, "line %d: unexpected text after the MAC", line);
	a->pc = (int)pc;
	a->nic = (int)nic;
	return 0;
}

int fnn_addrmap_parse(struct fnn_addrmap *m, const char *text, size_t len, char *err,
		      size_t errlen)
{
	struct fnn_cursor c = { text, len, 0 };
	struct fnn_nic_addr *v = NULL;
	int n = 0, cap = 0, rc = 0, maxpc = -1, maxnic = -1;
	memset(m, 0, sizeof(*m));
	for (int line = 1; fnn_cursor_peek(&c) != EOF && !rc; line++) {
		fnn_cursor_blank(&c);
		int ch = fnn_cursor_peek(&c);
		if (ch != '\n' && ch != '#' && ch != EOF) {
			rc = sm_grow(&v, n, &cap, sizeof(*v));
			if (rc)
				break;
			rc = parse_entry(&c, line, &v[n], err, errlen);
			if (rc)
				break;
			if (v[n].pc > maxpc)
				maxpc = v[n].pc;
			if (v[n].nic > maxnic)
				maxnic = v[n].nic;
			n++;
		}
		fnn_cursor_skip_line(&c);
	}
	if (!rc)
		rc = addrmap_alloc(m, maxpc + 1, maxnic + 1);
	for (int i = 0; i < n && !rc; i++) {
		struct fnn_nic_addr *a = &m->nic[v[i].pc * m->maxnics + v[i].nic];
		if (a->pc >= 0)
			rc = sm_err(err, errlen, -EINVAL, "PC %d NIC %d listed twice", v[i].pc,
				     v[i].nic);
		*a = v[i];
	}
	free(v);
	if (rc)
		fnn_addrmap_free(m);
	return rc;
}

int fnn_addrmap_load(struct fnn_addrmap *m, const char *path, char *err, size_t errlen)
{
	char *text;
	size_t len;
	int rc = sm_read_file(path, &text, &len, err, errlen);
	if (rc)
		return rc;
	rc = fnn_addrmap_parse(m, text, len, err, errlen);
	free(text);
	return rc ? sm_err(err, errlen, rc, "%s: %s", path, err) : 0;
}
