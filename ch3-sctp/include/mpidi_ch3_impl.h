/*
 * ch3:sctp -- declarations shared by CH3 files that include the channel's implementation
 * header (the RMA and port code do), and by the channel's own sources.
 */
#ifndef MPIDI_CH3_IMPL_H_INCLUDED
#define MPIDI_CH3_IMPL_H_INCLUDED

#include "mpidimpl.h"

int MPIDI_CH3I_Progress_init(void);
int MPIDI_CH3I_Progress_finalize(void);

/* Windows are not shared memory here: nothing to lock. */
#define MPIDI_CH3I_SHM_MUTEX_LOCK(win_ptr)
#define MPIDI_CH3I_SHM_MUTEX_UNLOCK(win_ptr)
#define MPIDI_CH3I_SHM_MUTEX_INIT(win_ptr)
#define MPIDI_CH3I_SHM_MUTEX_DESTROY(win_ptr)

#endif /* MPIDI_CH3_IMPL_H_INCLUDED */
