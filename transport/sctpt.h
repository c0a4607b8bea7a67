/* SCTP transport core: see issue 2. */
#ifndef SCTPT_H
#define SCTPT_H
#endif
