/*
 * Force-included into fuzz_ibnd's sources: test/fuzz_driver.c defines MAX_INPUT, which
 * <dirent.h> (via <linux/limits.h>) already defines on glibc, a fatal redefinition under
 * -Werror. Pull the system header in first and drop its macro so the driver's wins.
 */
#include <dirent.h>
#include <limits.h>
#undef MAX_INPUT
