/*
 * sm_file.h - a whole file in memory.
 *
 * Both return 0 with *data a malloc'd buffer of *len bytes plus a NUL after them (so text
 * can be parsed as a string; the bytes themselves may hold NULs), or a negative errno with
 * "NAME: reason" in err (if err && errlen) and *data untouched.
 */
#ifndef SM_FILE_H
#define SM_FILE_H

#include <stddef.h>
#include <stdio.h>

/* The file at path. */
int sm_read_file(const char *path, char **data, size_t *len, char *err, size_t errlen);
/* What is left of f; name is only for the message. f stays open. */
int sm_read_stream(FILE *f, const char *name, char **data, size_t *len, char *err,
		   size_t errlen);

#endif
