/* fuzz_prelude.h - force-included into the fuzz targets' objects (see Makefile.am).
 * test/fuzz_driver.c defines MAX_INPUT after <dirent.h>, which on glibc already
 * defines it through <linux/limits.h>; -Werror then fails the build.  Including
 * <dirent.h> first and dropping the system macro lets the driver's own definition
 * stand.  Remove once the driver renames its macro. */
#include <dirent.h>
#include <limits.h>
#undef MAX_INPUT
