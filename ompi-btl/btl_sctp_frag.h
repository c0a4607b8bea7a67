/*
 * btl sctp frag: a message being sent, or the buffer a large message is reassembled into
 * (the core's recv_buf hook). Frags come from three free lists (as tcp's): eager and max frags
 * carry their buffer right after the struct, user frags carry none (send in place from the
 * user's memory, or a receive buffer malloc'ed for its size).
 */
#ifndef MCA_BTL_SCTP_FRAG_H
#define MCA_BTL_SCTP_FRAG_H

#include "btl_sctp.h"

#include <sys/uio.h>

BEGIN_C_DECLS

struct mca_btl_sctp_frag_t {
	mca_btl_base_descriptor_t base;
	mca_btl_base_segment_t segments[2];
	struct mca_btl_base_endpoint_t *endpoint;
	struct iovec iov[2];
	size_t size;               /* bytes of buffer at buf */
	unsigned char *buf;        /* (frag + 1) for eager/max frags, malloc'ed or NULL for user */
	bool buf_malloced;         /* user frag whose buf we must free */
	opal_free_list_t *my_list;
};
typedef struct mca_btl_sctp_frag_t mca_btl_sctp_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_frag_t);

typedef struct mca_btl_sctp_frag_t mca_btl_sctp_frag_eager_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_frag_eager_t);
typedef struct mca_btl_sctp_frag_t mca_btl_sctp_frag_max_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_frag_max_t);
typedef struct mca_btl_sctp_frag_t mca_btl_sctp_frag_user_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_frag_user_t);

/* A frag able to hold size bytes: eager, max, or a user frag with a malloc'ed buffer. */
mca_btl_sctp_frag_t *mca_btl_sctp_frag_alloc(size_t size);
/* A user frag with no buffer (for sends in place). */
mca_btl_sctp_frag_t *mca_btl_sctp_frag_alloc_user(void);
void mca_btl_sctp_frag_return(mca_btl_sctp_frag_t *frag);

/*
 * Stream choice. The core maps a message's (context, tag) envelope to a stream; we put the BTL
 * tag in context and a key in tag: 0 for short control messages, else a hash of what the
 * message belongs to, so unrelated traffic never waits behind a large message. For ob1's
 * matching headers the key is the communicator and MPI tag; for its pipelined data frags,
 * the receive request. Only the stream depends on this peek: a wrong guess costs head-of-line
 * blocking, never correctness (everything is sent unordered and ob1 reorders). Without the
 * peek (another ob1) the key is the BTL tag: ob1's message types still travel apart.
 */
int32_t mca_btl_sctp_frag_stream_key(mca_btl_base_tag_t tag, const void *hdr, size_t len);
/* The peek knows ob1's header layout of the Open MPI release we are built against: with
 * another ob1 (or none registered) streams are chosen by BTL tag only, and it says why. Until
 * it runs (the first add_procs, once the PML framework is open) there is no peek. */
void mca_btl_sctp_frag_check_ob1(void);
uint16_t mca_btl_sctp_stream_map(void *arg, uint32_t context, int32_t key, uint16_t nstreams);

END_C_DECLS
#endif /* MCA_BTL_SCTP_FRAG_H */
