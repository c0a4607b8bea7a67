/* fnn_problem.c - the design problem: NICs per PC, ports per switch. */
#include "fnn.h"
#include "fnn_util.h"
#include "common/sm_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fnn_problem_free(struct fnn_problem *p)
{
	free(p->nics);
	free(p->ports);
	memset(p, 0, sizeof(*p));
}

/* "4" or "4,4,3,...": one count for all PCs or one per PC. */
static int parse_nics(struct fnn_problem *p, const char *s, char *err, size_t errlen)
{
	struct fnn_cursor c = { s, strlen(s), 0 };
	int n = 0;
	long v;
	while (fnn_cursor_peek(&c) != EOF) {
		if (fnn_cursor_long(&c, &v) || v < 1 || v > FNN_MAX_NICS)
			return sm_err(err, errlen, -EINVAL,
				       "nics \"%s\": entry %d must be 1..%d", s, n + 1, FNN_MAX_NICS);
		if (n >= p->npcs)
			return sm_err(err, errlen, -EINVAL, "nics \"%s\": more entries than %d PCs",
				       s, p->npcs);
		p->nics[n++] = (int)v;
		if (fnn_cursor_peek(&c) == ',')
			c.pos++;
		else if (fnn_cursor_peek(&c) != EOF)
			return sm_err(err, errlen, -EINVAL, "nics \"%s\": expected ',' after entry %d",
				       s, n);
	}
	if (n == 1)
		for (int i = 1; i < p->npcs; i++)
			p->nics[i] = p->nics[0];
	else if (n != p->npcs)
		return sm_err(err, errlen, -EINVAL, "nics \"%s\": %d entries for %d PCs", s, n,
			       p->npcs);
	return 0;
}

/* "31x8,8": groups of count x ports, or ports alone. */
static int parse_switches(struct fnn_problem *p, const char *s, char *err, size_t errlen)
{
	struct fnn_cursor c = { s, strlen(s), 0 };
	long a, b;
	int n = 0;
	while (fnn_cursor_peek(&c) != EOF) {
		long count = 1, ports;
		if (fnn_cursor_long(&c, &a) || a < 1)
			return sm_err(err, errlen, -EINVAL, "switches \"%s\": expected a number", s);
		ports = a;
		if (fnn_cursor_peek(&c) == 'x') {
			c.pos++;
			if (fnn_cursor_long(&c, &b) || b < 1)
				return sm_err(err, errlen, -EINVAL,
					       "switches \"%s\": expected a port count after 'x'", s);
			count = a;
			ports = b;
		}
		if (n + count > FNN_MAX_SWITCHES)
			return sm_err(err, errlen, -EINVAL, "switches \"%s\": more than %d switches",
				       s, FNN_MAX_SWITCHES);
		int *np = realloc(p->ports, (size_t)(n + count) * sizeof(int));
		if (!np)
			return -ENOMEM;
		p->ports = np;
		for (long i = 0; i < count; i++)
			p->ports[n++] = (int)(ports > FNN_MAX_PCS ? FNN_MAX_PCS : ports);
		if (fnn_cursor_peek(&c) == ',')
			c.pos++;
		else if (fnn_cursor_peek(&c) != EOF)
			return sm_err(err, errlen, -EINVAL, "switches \"%s\": expected ',' or 'x'", s);
	}
	if (n == 0)
		return sm_err(err, errlen, -EINVAL, "switches: none given");
	p->nswitches = n;
	return 0;
}

int fnn_problem_init(struct fnn_problem *p, int npcs, const char *nics, const char *switches,
		     char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (npcs < 2 || npcs > FNN_MAX_PCS)
		return sm_err(err, errlen, -EINVAL, "pcs %d: must be 2..%d", npcs, FNN_MAX_PCS);
	p->npcs = npcs;
	p->nics = calloc(npcs, sizeof(int));
	if (!p->nics)
		return -ENOMEM;
	int rc = parse_nics(p, nics, err, errlen);
	if (!rc)
		rc = parse_switches(p, switches, err, errlen);
	if (rc)
		fnn_problem_free(p);
	return rc;
}

int fnn_problem_from_design(struct fnn_problem *p, const struct fnn_design *d)
{
	memset(p, 0, sizeof(*p));
	p->npcs = d->npcs;
	p->nswitches = d->nswitches;
	p->nics = calloc(d->npcs ? d->npcs : 1, sizeof(int));
	p->ports = calloc(d->nswitches ? d->nswitches : 1, sizeof(int));
	if (!p->nics || !p->ports) {
		fnn_problem_free(p);
		return -ENOMEM;
	}
	for (int pc = 0; pc < d->npcs; pc++)
		p->nics[pc] = fnn_design_nics(d, pc);
	for (int s = 0; s < d->nswitches; s++)
		p->ports[s] = d->ports[s];
	return 0;
}
