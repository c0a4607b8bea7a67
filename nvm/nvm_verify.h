/*
 * nvm_verify.h - load-time checks of a module.  A module that passes can be run by
 * nvm_run without any further check of opcodes, jump targets, stack depth or the
 * variable/address/trigger indexes in its code; what remains dynamic (array
 * indexes, memory regions of SEND/DELIVER/GET, division by zero, the instruction
 * budget) is checked by the interpreter and faults the program.
 *
 * Rejected: unknown opcodes, truncated operands, jumps outside the code or into
 * an operand, falling off the end of the code, stack underflow or overflow on any
 * path, inconsistent stack depth where paths join, AWAIT with a non-empty stack,
 * out-of-range variable, address and trigger-table entries, variables outside the
 * data section, duplicate trigger ids, entry points (BEGIN, MESSAGE) that are not
 * instruction starts.
 */
#ifndef NVM_VERIFY_H
#define NVM_VERIFY_H

#include <stddef.h>

#include "nvm_module.h"

/* 0 if the module is safe to load, else -EINVAL with "pc N: reason" in err. */
int nvm_verify(const struct nvm_module *m, char *err, size_t errlen);

#endif
