/* Fuzz target: the table parser, and print-then-parse of whatever it accepts. */
#include "routing/fnn/fnn.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fnn_design d, e;
	char err[256];
	if (fnn_table_parse(&d, (const char *)data, size, 0, err, sizeof(err)))
		return 0;
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	fnn_table_print(&d, f);
	fclose(f);
	if (fnn_table_parse(&e, buf, len, d.npcs, err, sizeof(err)))
		abort(); /* what we print we must read */
	if (e.npcs != d.npcs || memcmp(e.mask, d.mask, sizeof(uint64_t) * d.npcs * d.words))
		abort();
	fnn_design_free(&e);
	free(buf);
	fnn_design_free(&d);
	return 0;
}
