/*
 * pdlc - the PDL compiler.
 *
 *   pdlc [-o out.nvm] file.pdl      compile to a relocatable module (default: file.nvm)
 *   pdlc --disasm file.pdl|file.nvm print the bytecode (compiling first if given PDL)
 *   pdlc --check file.pdl           compile and verify only
 *   pdlc --opcodes                  print the instruction set table
 *
 * Errors are printed as file:line:col: error: message; exit status 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvm_module.h"
#include "nvm_opcodes.h"
#include "nvm_verify.h"
#include "pdl_emit.h"
#include "common/sm_file.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: pdlc [-o out.nvm] file.pdl\n"
		   "       pdlc --disasm file.pdl|file.nvm\n"
		   "       pdlc --check file.pdl\n"
		   "       pdlc --opcodes\n");
}

/* After "file:LINE:COL: error: ...", show the source line and a caret. */
static void show_context(const char *err, const char *src, size_t len)
{
	const char *p = strstr(err, ": error: ");
	if (!p)
		return;
	const char *q = p;
	while (q > err && q[-1] != ':')
		q--; /* start of COL */
	const char *r = q - 1;
	while (r > err && r[-1] != ':')
		r--; /* start of LINE */
	long line = strtol(r, NULL, 10), col = strtol(q, NULL, 10);
	if (line < 1 || col < 1)
		return;
	size_t i = 0;
	for (long l = 1; l < line && i < len; i++)
		if (src[i] == '\n')
			l++;
	size_t e = i;
	while (e < len && src[e] != '\n')
		e++;
	fprintf(stderr, "  %.*s\n  ", (int)(e - i), src + i);
	for (long c = 1; c < col && i + (size_t)c - 1 < e; c++)
		fputc(src[i + c - 1] == '\t' ? '\t' : ' ', stderr);
	fputs("^\n", stderr);
}

static int is_module(const char *buf, size_t len)
{
	return len >= 4 && memcmp(buf, "NVMM", 4) == 0;
}

static void print_opcodes(void)
{
	static const char *const kinds[] = { "-", "i8", "i32", "i64", "var", "addr", "rel" };
	printf("%-4s %-8s %-5s %-4s %-5s %s\n", "op", "name", "opnd", "pops", "push", "effect");
	for (int i = 0; i < NVM_OP__COUNT; i++)
		printf("%-4d %-8s %-5s %-4u %-5u %s\n", i, nvm_opinfo[i].name,
		       kinds[nvm_opinfo[i].kind], nvm_opinfo[i].pops, nvm_opinfo[i].pushes,
		       nvm_opinfo[i].doc);
}

static char *default_out(const char *in)
{
	size_t n = strlen(in);
	char *out = malloc(n + 5);
	if (!out)
		return NULL;
	memcpy(out, in, n + 1);
	char *dot = strrchr(out, '.');
	char *slash = strrchr(out, '/');
	if (dot && (!slash || dot > slash) && strcmp(dot, ".pdl") == 0)
		*dot = '\0';
	strcat(out, ".nvm");
	return out;
}

int main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	int disasm = 0, check = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--disasm") == 0 || strcmp(argv[i], "-d") == 0) {
			disasm = 1;
		} else if (strcmp(argv[i], "--check") == 0) {
			check = 1;
		} else if (strcmp(argv[i], "--opcodes") == 0) {
			print_opcodes();
			return 0;
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' || in) {
			usage(stderr);
			return 2;
		} else {
			in = argv[i];
		}
	}
	if (!in) {
		usage(stderr);
		return 2;
	}
	char err[512] = "", *src;
	size_t len;
	if (sm_read_file(in, &src, &len, err, sizeof(err))) {
		fprintf(stderr, "pdlc: %s\n", err);
		return 1;
	}
	struct nvm_module *m = NULL;
	int rc;
	if (is_module(src, len)) {
		rc = nvm_module_decode(src, len, &m, err, sizeof(err));
		if (!rc)
			rc = nvm_verify(m, err, sizeof(err));
		if (rc)
			fprintf(stderr, "pdlc: %s: invalid module: %s\n", in, err);
		if (rc && m && disasm) /* still show it: that is how one finds out why */
			nvm_disasm(m, stdout);
		if (rc)
			nvm_module_free(m);
	} else {
		rc = pdl_compile(in, src, len, &m, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "%s\n", err);
			show_context(err, src, len);
		}
	}
	free(src);
	if (rc)
		return 1;
	int status = 0;
	if (disasm) {
		nvm_disasm(m, stdout);
	} else if (!check) {
		char *o = out ? NULL : default_out(in);
		const char *path = out ? out : o;
		if (!path || nvm_module_write_file(path, m) != 0) {
			fprintf(stderr, "pdlc: cannot write %s\n", path ? path : "output");
			status = 1;
		}
		free(o);
	}
	nvm_module_free(m);
	return status;
}
