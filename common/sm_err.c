/* sm_err.c - error messages into a caller's or a thread's buffer (see sm_err.h). */
#include "sm_err.h"
#include "sm_lib.h"

#include <stdio.h>
#include <string.h>

/* Formats after the first `at` bytes of err. Through a copy: the arguments may point into
 * err (a message that quotes the previous one). */
static void format_at(char *err, size_t errlen, size_t at, const char *fmt, va_list ap)
{
	char tmp[SM_ERR_MAX];
	if (!err || !errlen)
		return;
	if (at >= errlen)
		at = errlen - 1;
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1;
	if (len > errlen - 1 - at)
		len = errlen - 1 - at;
	memcpy(err + at, tmp, len);
	err[at + len] = '\0';
}

SM_LIBFN int sm_verr(char *err, size_t errlen, int code, const char *fmt, va_list ap)
{
	format_at(err, errlen, 0, fmt, ap);
	return code;
}

SM_LIBFN int sm_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	format_at(err, errlen, 0, fmt, ap);
	va_end(ap);
	return code;
}

SM_LIBFN int sm_verr_append(char *err, size_t errlen, int code, const char *fmt, va_list ap)
{
	format_at(err, errlen, err && errlen ? strnlen(err, errlen) : 0, fmt, ap);
	return code;
}

SM_LIBFN int sm_err_append(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sm_verr_append(err, errlen, code, fmt, ap);
	va_end(ap);
	return code;
}
