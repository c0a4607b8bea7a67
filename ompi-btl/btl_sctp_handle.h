/*
 * btl sctp registration handle: what register_mem hands out and what travels to peers inside
 * osc rdma's window descriptions and ob1's RGET headers. Three kinds, told apart by flags:
 * an iWARP steering tag (flags 0, btl_sctp_rdma.c), the memory of the process that handed it
 * out, which same-host peers read and write with sctpt_peer_read/write (SCTP_HANDLE_PROCESS),
 * and a buffer that peers over SCTP ask the owner to send them (SCTP_HANDLE_STREAM,
 * btl_sctp_rget.c).
 */
#ifndef MCA_BTL_SCTP_HANDLE_H
#define MCA_BTL_SCTP_HANDLE_H

#include <stdint.h>

struct mca_btl_base_registration_handle_t {
	uint32_t stag;
	uint32_t flags;
};

#define SCTP_HANDLE_PROCESS 1u
#define SCTP_HANDLE_STREAM 2u

#endif /* MCA_BTL_SCTP_HANDLE_H */
