/*
 * btl sctp RGET over the streams: the wire format. The BTL tags (ob1's active messages) are
 * core contexts 0..MCA_BTL_TAG_MAX; these two contexts follow them, below the iWARP layer's
 * range (IW_CONTEXT_BASE).
 *
 * GET_REQ (receiver -> owner of the data): one request, core tag 0 (the control stream):
 *   u64 address   where the data lies in the owner's memory (from its registration)
 *   u64 length
 *   i32 id        the receiver's operation, > 0
 *   u32 reserved  0
 * in the host's byte order (the ranks of an Open MPI job using this BTL share one).
 * GET_DATA (owner -> receiver): the length bytes from address, core tag = the request's id;
 * the receiver's core places them straight into the destination buffer.
 */
#ifndef MCA_BTL_SCTP_RGET_PROTO_H
#define MCA_BTL_SCTP_RGET_PROTO_H

#include <stdint.h>

#define MCA_BTL_SCTP_CTX_GET_REQ 256u  /* MCA_BTL_TAG_MAX + 1 */
#define MCA_BTL_SCTP_CTX_GET_DATA 257u

struct mca_btl_sctp_get_req {
	uint64_t address;
	uint64_t length;
	int32_t id;
	uint32_t reserved;
};

#define MCA_BTL_SCTP_GET_REQ_LEN 24

#endif /* MCA_BTL_SCTP_RGET_PROTO_H */
