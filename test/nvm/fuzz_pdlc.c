/* fuzz_pdlc: any bytes through the compiler must give a module that verifies, or
 * a file:line:col error; never a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvm/nvm_verify.h"
#include "nvm/pdl_emit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct nvm_module *m = NULL;
	int rc = pdl_compile("fuzz.pdl", (const char *)data, size, &m, err, sizeof(err));
	if (rc == 0) {
		if (nvm_verify(m, err, sizeof(err)) != 0)
			abort(); /* the compiler produced code the verifier rejects */
	} else if (m != NULL || (strncmp(err, "fuzz.pdl:", 9) != 0)) {
		abort();
	}
	nvm_module_free(m);
	return 0;
}
