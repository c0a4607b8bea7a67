/*
 * sm_lib.h - for libsmcommon's own .c files only.
 *
 * Each module library that uses libsmcommon carries a copy of it (libsctpt, libfnn, libnvm,
 * libfattree link it in), and a shared object links its libraries whole (mca_btl_sctp.so:
 * libiw, libsctpt and libfnn), so it meets several copies of each function. They are the
 * same code: defined weak, the linker keeps one instead of refusing the duplicates.
 * Only the definitions are weak; the headers declare ordinary functions, so that a
 * program's reference still pulls the function out of an archive.
 */
#ifndef SM_LIB_H
#define SM_LIB_H

#define SM_LIBFN __attribute__((weak))

#endif
