/*
 * ch3:hybrid -- ch3:sctp's progress entry points: the progress engine is its, with the iWARP
 * layer's completions read in the same poll (src/ch3_hybrid_progress.c).
 */
#ifndef MPIDI_CH3_HYBRID_POST_H_INCLUDED
#define MPIDI_CH3_HYBRID_POST_H_INCLUDED

#include "sctp/mpidi_ch3_post.h"

#endif /* MPIDI_CH3_HYBRID_POST_H_INCLUDED */
