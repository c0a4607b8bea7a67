/*
 * ch3:sctp -- what the channel adds to CH3's types (included before CH3 defines its own).
 *
 * The channel keeps its state out of these headers (a VC holds the core's peer id and a
 * pointer to the channel's own record), so that changing the channel rebuilds only its
 * own files.
 */
#ifndef MPIDI_CH3_PRE_H_INCLUDED
#define MPIDI_CH3_PRE_H_INCLUDED

#undef MPID_USE_SEQUENCE_NUMBERS
/* Business cards live in the PMI KVS, as with the other channels. */
#define MPIDI_DEV_IMPLEMENTS_KVS

typedef struct {
	int dummy;
} MPIDI_CH3I_CH_comm_t;

/* Channel fields of a VC. */
typedef struct MPIDI_CH3I_VC {
	int peer;                   /* the core's peer id (sctpt_peer_t), -1 while unknown */
	int failed;                 /* the core lost the peer */
	struct MPIDI_CH3I_Sctp_vc *priv;    /* the channel's own (src/ch3_sctp.h) */
} MPIDI_CH3I_VC;

#define MPIDI_CH3_VC_DECL struct MPIDI_CH3I_VC ch;

typedef struct MPIDI_CH3I_Progress_state {
	int completion_count;
} MPIDI_CH3I_Progress_state;

#define MPIDI_CH3_PROGRESS_STATE_DECL MPIDI_CH3I_Progress_state ch;

/* Used by the MPID_Progress_* macros, so visible to all of MPICH. */
extern volatile unsigned int MPIDI_CH3I_progress_completion_count;

#endif /* MPIDI_CH3_PRE_H_INCLUDED */
