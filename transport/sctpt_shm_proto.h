/*
 * Layout of the shared-memory path to same-host peers: what two processes of one host put in
 * the memory they share and in the few messages they exchange to set it up. Host byte order
 * (both ends run on the same machine); versioned.
 *
 * Per ordered pair (sender S, receiver R) one ring, in a segment R owns (an anonymous memfd:
 * it has no name, so nothing is left behind whatever happens to either process). S connects
 * to R's abstract unix socket (its name is in R's card) and sends a HELLO with its eventfd;
 * R answers with a WELCOME carrying the ring's memfd, R's control page and R's eventfd. The
 * connection then only tells each end when the other one goes away.
 *
 * Ring segment: a 4 KiB header, then `size` bytes of records (size a power of two). Records
 * start on 64-byte lines, never wrap (a PAD record fills the end of the ring), and are valid
 * once their seq, stored last with release, is SCTPT_SHM_SEQ(their position). Before it makes
 * a record valid the sender zeroes the seq where the next one will start (it always keeps
 * that line free), so where the receiver looks next there is 0 (nothing yet) or the valid
 * seq, never an old record's bytes: any other value is a corrupted ring. Positions count
 * bytes from the start and only grow.
 *
 *   DATA  stream, len = 32 + payload: the core's envelope (sctpt_proto.h) and its payload,
 *         one whole message or one fragment of it (as on an SCTP stream)
 *   PULL  stream, len = 32 + 8 + 16 * niov: the envelope of a whole message (FIRST|LAST) and
 *         where it lies in S's memory; R reads it from there (process_vm_readv), then counts
 *         it in pulls_done
 *   PAD   len: skip to the start of the ring
 */
#ifndef SCTPT_SHM_PROTO_H
#define SCTPT_SHM_PROTO_H

#include <stdatomic.h>
#include <stdint.h>

#define SCTPT_SHM_MAGIC 0x53485231u   /* "SHR1" */
#define SCTPT_SHM_VERSION 1
#define SCTPT_SHM_LINE 64
#define SCTPT_SHM_HDR_SIZE 4096       /* the ring's header page */
#define SCTPT_SHM_MIN_RING 4096
#define SCTPT_SHM_MAX_RING (64u << 20)
#define SCTPT_SHM_MAX_IOV 16          /* iovecs a PULL can name */

/* A record at position pos is valid when its seq is this (never 0). */
#define SCTPT_SHM_SEQ(pos) (0x80000000u | (uint32_t)((pos) / SCTPT_SHM_LINE))

enum sctpt_shm_kind {
	SCTPT_SHM_DATA = 1,
	SCTPT_SHM_PULL = 2,
	SCTPT_SHM_PAD = 3,
};

struct sctpt_shm_rec {
	_Atomic uint32_t seq;
	uint16_t kind;
	uint16_t stream;
	uint32_t len;                 /* bytes after this header */
	uint32_t reserved;
};
#define SCTPT_SHM_REC_LEN 16

struct sctpt_shm_iov {
	uint64_t addr, len;
};

/* After a PULL record's envelope. */
struct sctpt_shm_pull {
	uint32_t niov, reserved;
	struct sctpt_shm_iov iov[];
};

struct sctpt_shm_ring_hdr {
	/* written by R before S maps the ring, constant afterwards */
	uint32_t magic, version;
	uint32_t size;                /* bytes of records */
	uint32_t owner_pid;
	uint32_t sender_pid;          /* as R sees it */
	uint32_t pull;                /* 1: R can read S's memory: large messages may be PULLs */
	_Atomic uint32_t owner_closed; /* R closed its endpoint in order (written once) */
	uint8_t pad0[SCTPT_SHM_LINE - 28];
	/* written by R */
	_Atomic uint64_t read_pos;    /* consumed up to here; published in batches */
	_Atomic uint64_t pulls_done;  /* PULL records whose data R has (or failed to) read */
	uint8_t pad1[SCTPT_SHM_LINE - 16];
	/* written by S for every record, read by R only before it sleeps */
	_Atomic uint64_t write_pos;   /* written up to here (the records before are valid) */
	uint8_t pad2[SCTPT_SHM_LINE - 8];
	/* written by S before it sleeps, read by R when it publishes */
	_Atomic uint32_t sender_waiting; /* S sleeps until read_pos or pulls_done move */
	uint8_t pad3[SCTPT_SHM_LINE - 4];
};

/* R's control page, mapped read-only by every sender: its tripwire. */
struct sctpt_shm_ctl {
	uint32_t magic, version;
	uint32_t pid;
	uint8_t pad0[SCTPT_SHM_LINE - 12];
	_Atomic uint32_t armed;       /* R sleeps: a writer wakes it through its eventfd */
	uint8_t pad1[SCTPT_SHM_LINE - 4];
};

/* S -> R on the unix socket, with S's eventfd. */
struct sctpt_shm_hello {
	uint32_t magic, version;
	uint32_t ring_size;           /* what S asks for (R may choose less) */
	uint32_t reserved;
	uint64_t probe_addr;          /* 8 bytes of S's memory holding probe_value: R tries to
				       * read them to learn whether it may read S's memory */
	uint64_t probe_value;
	char card[512];               /* S's business card (SCTPT_CARD_MAX) */
};

/* R -> S, with the ring's memfd, R's control page and R's eventfd when status is 0. */
struct sctpt_shm_welcome {
	uint32_t magic, version;
	int32_t status;               /* 0, or a negative errno: use SCTP */
	uint32_t ring_size;
};

#endif
