/*
 * sm_err.h - error messages beside error codes.
 *
 * Functions return 0 or a negative errno and leave a message. Two ways to leave it:
 *
 * 1. In the caller's buffer, for functions that take (char *err, size_t errlen):
 *
 *	if (n > max)
 *		return sm_err(err, errlen, -EINVAL, "line %d: %d entries, at most %d", l, n, max);
 *
 *    err may be NULL or errlen 0 (no message wanted). sm_err_append() adds to the message
 *    already there ("pc 12: " then the reason). The arguments may point into err itself.
 *
 * 2. In a per-thread buffer behind a module's pair, for libraries whose API has no err
 *    argument (the SCTP core, the iWARP RNIC). In one .c file of module "mod":
 *
 *	SM_LAST_ERROR_DEFINE(mod)
 *
 *    defines, for every thread its own message:
 *
 *	int mod_err(int code, const char *fmt, ...);  records the message, returns code
 *	const char *mod_last_error(void);             the calling thread's last one ("" if none)
 *
 *    Declare them with SM_LAST_ERROR_DECLARE(mod) in the module's headers (or write the two
 *    prototypes out in its public header); the module's code then says
 *    `return mod_err(-ENOMEM, "peer %s: out of memory", name);`.
 *
 * Messages longer than SM_ERR_MAX - 1 bytes are cut there.
 */
#ifndef SM_ERR_H
#define SM_ERR_H

#include <stdarg.h>
#include <stddef.h>

#define SM_ERR_MAX 1024

/* Formats the message into err (if err && errlen) and returns code. */
int sm_err(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int sm_verr(char *err, size_t errlen, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
/* The same, appended to the message already in err. */
int sm_err_append(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int sm_verr_append(char *err, size_t errlen, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

#define SM_LAST_ERROR_DECLARE(mod)                                                          \
	int mod##_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3))); \
	const char *mod##_last_error(void)

#define SM_LAST_ERROR_DEFINE(mod)                                                           \
	static __thread char mod##_last_error_text[256];                                    \
	int mod##_err(int code, const char *fmt, ...)                                       \
	{                                                                                   \
		va_list ap;                                                                 \
		va_start(ap, fmt);                                                          \
		sm_verr(mod##_last_error_text, sizeof(mod##_last_error_text), code, fmt, ap); \
		va_end(ap);                                                                 \
		return code;                                                                \
	}                                                                                   \
	const char *mod##_last_error(void)                                                  \
	{                                                                                   \
		return mod##_last_error_text;                                               \
	}

#endif
