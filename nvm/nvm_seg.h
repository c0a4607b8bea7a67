/*
 * nvm_seg.h - shared memory segments between the host and the VM, and the
 * paper's lock/flag synchronisation.
 *
 * The host creates a segment under a numeric id and attaches it to a VM with
 * rights; PDL names it by that id (DELIVER .. INTO id, GET .. FROM id).  Host
 * and VM see the same bytes.  Each segment carries one lock and one flag:
 * the host sets locks and clears flags, the VM (PDL: UNLOCK, FLAG) clears
 * locks and sets flags.  Both are atomics: the host may spin on a flag from
 * another thread while the VM runs, with no interrupt and no mutex.  A flag
 * set by the VM is a release: bytes DELIVERed before it are visible to a host
 * that saw the flag (acquire).
 */
#ifndef NVM_SEG_H
#define NVM_SEG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum { NVM_SEG_R = 1, NVM_SEG_W = 2 }; /* VM may GET from / DELIVER into */

struct nvm_seg {
	uint32_t id;
	uint32_t rights;
	size_t len;
	uint8_t *base;
	atomic_uint lock, flag;
	atomic_int refs;
};

/* Allocate a zeroed segment of len bytes (len > 0). NULL on failure. */
struct nvm_seg *nvm_seg_new(uint32_t id, size_t len, uint32_t rights);
/* Drop the host's reference; memory is freed when no VM holds it either. */
void nvm_seg_put(struct nvm_seg *s);
void nvm_seg_get(struct nvm_seg *s);

/* Host side. */
static inline void nvm_seg_lock(struct nvm_seg *s) { atomic_store_explicit(&s->lock, 1, memory_order_release); }
static inline int nvm_seg_locked(struct nvm_seg *s) { return atomic_load_explicit(&s->lock, memory_order_acquire) != 0; }
static inline int nvm_seg_flagged(struct nvm_seg *s) { return atomic_load_explicit(&s->flag, memory_order_acquire) != 0; }
static inline void nvm_seg_clear_flag(struct nvm_seg *s) { atomic_store_explicit(&s->flag, 0, memory_order_release); }

/* VM side (used by the interpreter). */
static inline void nvm_seg_set_flag(struct nvm_seg *s) { atomic_store_explicit(&s->flag, 1, memory_order_release); }
static inline void nvm_seg_unlock(struct nvm_seg *s) { atomic_store_explicit(&s->lock, 0, memory_order_release); }

#endif
