/*
 * pdl_emit.h - code generation: a checked PDL tree to a module.  Constant
 * subexpressions are folded; everything else maps one-to-one onto the
 * instructions of nvm_opcodes.h.  Each BEGIN and MESSAGE block ends in RET.
 */
#ifndef PDL_EMIT_H
#define PDL_EMIT_H

#include <stddef.h>

#include "nvm_module.h"
#include "pdl_parse.h"

/* 0 and *out, or -EINVAL (code too large) / -ENOMEM with a message in err. */
int pdl_emit(const struct pdl_unit *u, const char *file, struct nvm_module **out,
	     char *err, size_t errlen);

/* The whole pipeline: pdl_parse, then pdl_emit, then nvm_verify as a self-check. */
int pdl_compile(const char *file, const char *src, size_t len, struct nvm_module **out,
		char *err, size_t errlen);

#endif
