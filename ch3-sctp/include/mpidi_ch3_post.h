/*
 * ch3:sctp -- the channel's progress entry points (included after CH3's own types).
 */
#ifndef MPIDI_CH3_POST_H_INCLUDED
#define MPIDI_CH3_POST_H_INCLUDED

/* Eager/rendezvous switch: CH3's default (MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE) applies. */
#if !defined(MPIDI_CH3_EAGER_MAX_MSG_SIZE)
#define MPIDI_CH3_EAGER_MAX_MSG_SIZE (256 * 1024)
#endif

#define MPIDI_CH3_Progress_start(progress_state_)                                    \
	do {                                                                              \
		(progress_state_)->ch.completion_count = MPIDI_CH3I_progress_completion_count; \
	} while (0)
#define MPIDI_CH3_Progress_end(progress_state_) do { } while (0)
#define MPIDI_CH3_Progress_poke() (MPIDI_CH3_Progress_test())

int MPIDI_CH3I_Progress(int blocking, MPID_Progress_state * state);
#define MPIDI_CH3_Progress_test() MPIDI_CH3I_Progress(FALSE, NULL)
#define MPIDI_CH3_Progress_wait(state) MPIDI_CH3I_Progress(TRUE, state)

#endif /* MPIDI_CH3_POST_H_INCLUDED */
