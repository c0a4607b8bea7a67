/* sm_file.c - a whole file in memory (see sm_file.h). */
#include "sm_file.h"
#include "sm_lib.h"
#include "sm_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

SM_LIBFN int sm_read_stream(FILE *f, const char *name, char **data, size_t *len, char *err,
		   size_t errlen)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	errno = 0;
	while (buf) {
		n += fread(buf + n, 1, cap - 1 - n, f);
		if (n < cap - 1)
			break;
		char *bigger = realloc(buf, cap * 2);
		if (!bigger) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = bigger;
		cap *= 2;
	}
	if (!buf)
		return sm_err(err, errlen, -ENOMEM, "%s: out of memory", name);
	if (ferror(f)) {
		int rc = errno ? -errno : -EIO;
		free(buf);
		return sm_err(err, errlen, rc, "%s: %s", name, strerror(-rc));
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

SM_LIBFN int sm_read_file(const char *path, char **data, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		int rc = -errno;
		return sm_err(err, errlen, rc, "%s: %s", path, strerror(-rc));
	}
	int rc = sm_read_stream(f, path, data, len, err, errlen);
	fclose(f);
	return rc;
}
