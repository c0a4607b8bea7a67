/*
 * sm_check.h - assertions for the test programs, one behaviour for all of them.
 *
 *   CHECK(cond[, fmt, ...])           a failed check is reported (file:line, the condition,
 *                                     the message), counted, and the test goes on
 *   CHECK_EQ(a, b[, fmt, ...])        integers; both values are reported
 *   CHECK_NEAR(a, b, eps[, fmt, ...]) doubles within eps of each other
 *   FAIL(fmt, ...)                    a failure found by the test's own logic, counted
 *   REQUIRE(cond[, fmt, ...])         reported, then exit(1) at once: for what the rest of
 *                                     the test depends on (a set-up, a pointer)
 *   TEST(name) { ... }  RUN(name);    a test function; RUN calls it and prints "ok   name"
 *                                     or "FAIL name"
 *   return sm_check_result();         main's end: 0, or 1 after saying how many failed
 *
 * A program that counted a failure exits 1 even if main returns 0 without calling
 * sm_check_result(): a failed check always fails the test.
 *
 * Before including, a test may define SM_CHECK_NOTE() as a string expression printed in
 * brackets after each failure (e.g. sctpt_last_error()).
 */
#ifndef SM_CHECK_H
#define SM_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int sm_check_failures;
static int sm_check_reported;

#ifdef SM_CHECK_NOTE
#define SM_CHECK_NOTE_PRINT() fprintf(stderr, " [%s]", SM_CHECK_NOTE())
#else
#define SM_CHECK_NOTE_PRINT() ((void)0)
#endif

/* Ends the report begun by "file:line: ...": ": message" if there is one, the note, the
 * newline; counts the failure. */
#define SM_CHECK_FAILED(...)                                                               \
	(__VA_OPT__(fputs(": ", stderr), fprintf(stderr, __VA_ARGS__), )                   \
	 SM_CHECK_NOTE_PRINT(), fputc('\n', stderr), sm_check_failures++)

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: check failed: %s", __FILE__, __LINE__, #cond); \
			SM_CHECK_FAILED(__VA_ARGS__);                                      \
		}                                                                          \
	} while (0)

#define CHECK_EQ(a, b, ...)                                                                \
	do {                                                                               \
		long long sm_a_ = (long long)(a), sm_b_ = (long long)(b);                  \
		if (sm_a_ != sm_b_) {                                                      \
			fprintf(stderr, "%s:%d: check failed: %s == %s (%lld, %lld)", __FILE__, \
				__LINE__, #a, #b, sm_a_, sm_b_);                           \
			SM_CHECK_FAILED(__VA_ARGS__);                                      \
		}                                                                          \
	} while (0)

#define CHECK_NEAR(a, b, eps, ...)                                                         \
	do {                                                                               \
		double sm_a_ = (a), sm_b_ = (b);                                           \
		if (!(sm_a_ - sm_b_ <= (eps) && sm_b_ - sm_a_ <= (eps))) {                 \
			fprintf(stderr, "%s:%d: check failed: %s = %g, expected %g within %g", \
				__FILE__, __LINE__, #a, sm_a_, sm_b_, (double)(eps));      \
			SM_CHECK_FAILED(__VA_ARGS__);                                      \
		}                                                                          \
	} while (0)

#define FAIL(...)                                                                          \
	do {                                                                               \
		fprintf(stderr, "%s:%d: failed", __FILE__, __LINE__);                      \
		SM_CHECK_FAILED(__VA_ARGS__);                                              \
	} while (0)

#define REQUIRE(cond, ...)                                                                 \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: required: %s", __FILE__, __LINE__, #cond);  \
			SM_CHECK_FAILED(__VA_ARGS__);                                      \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

#define TEST(name) static void name(void)
#define RUN(name)                                                                          \
	do {                                                                               \
		int sm_before_ = sm_check_failures;                                        \
		name();                                                                    \
		printf("%s %s\n", sm_check_failures == sm_before_ ? "ok  " : "FAIL", #name); \
	} while (0)

static inline int sm_check_result(void)
{
	sm_check_reported = 1;
	if (sm_check_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", program_invocation_short_name,
			sm_check_failures);
		return 1;
	}
	printf("%s: ok\n", program_invocation_short_name);
	return 0;
}

/* The safety net: failures that no sm_check_result() reported still fail the program. */
__attribute__((destructor)) static void sm_check_at_exit(void)
{
	if (sm_check_failures && !sm_check_reported) {
		fprintf(stderr, "%s: %d check(s) failed\n", program_invocation_short_name,
			sm_check_failures);
		fflush(NULL);
		_exit(1);
	}
}

#endif
