/*
 * SCTP's wire format (RFC 9260, with I-DATA from RFC 8260), as the native engine speaks it
 * inside UDP (RFC 6951): the common header, the chunk header, every chunk's fixed fields and
 * the parameters and error causes the engine reads or writes. Offsets are in bytes from the
 * start of the chunk (or parameter) header; every field is big-endian except the checksum,
 * which is the CRC32c's value stored least significant byte first (RFC 9260 Appendix A).
 * Nothing but the format lives here.
 */
#ifndef SCTPE_PROTO_H
#define SCTPE_PROTO_H

/* ---- common header (RFC 9260 3.1) ---- */
#define SCTPE_COMMON_LEN 12
#define SCTPE_OFF_SPORT 0
#define SCTPE_OFF_DPORT 2
#define SCTPE_OFF_VTAG 4
#define SCTPE_OFF_CSUM 8

/* ---- chunk header (3.2): type, flags, length (header included, padding not) ---- */
#define SCTPE_CHUNK_HDR_LEN 4
#define SCTPE_PAD4(n) (((n) + 3u) & ~(size_t)3u)

enum sctpe_chunk_type {
	SCTPE_DATA = 0,
	SCTPE_INIT = 1,
	SCTPE_INIT_ACK = 2,
	SCTPE_SACK = 3,
	SCTPE_HEARTBEAT = 4,
	SCTPE_HEARTBEAT_ACK = 5,
	SCTPE_ABORT = 6,
	SCTPE_SHUTDOWN = 7,
	SCTPE_SHUTDOWN_ACK = 8,
	SCTPE_ERROR = 9,
	SCTPE_COOKIE_ECHO = 10,
	SCTPE_COOKIE_ACK = 11,
	SCTPE_ECNE = 12,
	SCTPE_CWR = 13,
	SCTPE_SHUTDOWN_COMPLETE = 14,
	SCTPE_AUTH = 15,         /* RFC 4895 */
	SCTPE_NR_SACK = 16,
	SCTPE_I_DATA = 64,       /* RFC 8260 */
	SCTPE_ASCONF_ACK = 128,  /* RFC 5061 */
	SCTPE_RE_CONFIG = 130,   /* RFC 6525 */
	SCTPE_PAD = 132,         /* RFC 4820 */
	SCTPE_FORWARD_TSN = 192, /* RFC 3758 */
	SCTPE_ASCONF = 193,
	SCTPE_I_FORWARD_TSN = 194,
};

/* An unknown chunk type's two high bits (3.2): skip it, and report it in an ERROR. */
#define SCTPE_CHUNK_SKIP 0x80
#define SCTPE_CHUNK_REPORT 0x40

/* ---- DATA (3.3.1): flags I U B E, then TSN, stream, SSN, PPID ---- */
#define SCTPE_DATA_E 0x01
#define SCTPE_DATA_B 0x02
#define SCTPE_DATA_U 0x04
#define SCTPE_DATA_I 0x08        /* RFC 7053: SACK this one at once */
#define SCTPE_DATA_OFF_TSN 4
#define SCTPE_DATA_OFF_SID 8
#define SCTPE_DATA_OFF_SSN 10
#define SCTPE_DATA_OFF_PPID 12
#define SCTPE_DATA_HDR_LEN 16

/* ---- I-DATA (RFC 8260 2.1): TSN, stream, reserved, MID, then PPID (B set) or FSN ---- */
#define SCTPE_IDATA_OFF_TSN 4
#define SCTPE_IDATA_OFF_SID 8
#define SCTPE_IDATA_OFF_RSVD 10
#define SCTPE_IDATA_OFF_MID 12
#define SCTPE_IDATA_OFF_PPID_FSN 16
#define SCTPE_IDATA_HDR_LEN 20

/* ---- INIT and INIT ACK (3.3.2, 3.3.3): fixed part, then parameters ---- */
#define SCTPE_INIT_OFF_ITAG 4
#define SCTPE_INIT_OFF_ARWND 8
#define SCTPE_INIT_OFF_OS 12
#define SCTPE_INIT_OFF_MIS 14
#define SCTPE_INIT_OFF_ITSN 16
#define SCTPE_INIT_FIXED_LEN 20

/* ---- SACK (3.3.4): cumulative TSN, a_rwnd, gap blocks (start, end offsets from the
 * cumulative TSN), then duplicate TSNs ---- */
#define SCTPE_SACK_OFF_CUM 4
#define SCTPE_SACK_OFF_ARWND 8
#define SCTPE_SACK_OFF_NGAPS 12
#define SCTPE_SACK_OFF_NDUPS 14
#define SCTPE_SACK_FIXED_LEN 16
#define SCTPE_GAP_LEN 4
#define SCTPE_DUP_LEN 4

/* ---- HEARTBEAT / HEARTBEAT ACK (3.3.5, 3.3.6): one Heartbeat Info parameter ---- */
#define SCTPE_HB_FIXED_LEN 4

/* ---- ABORT (3.3.7), SHUTDOWN COMPLETE (3.3.13): T bit, the tag is the peer's own ---- */
#define SCTPE_FLAG_T 0x01

/* ---- SHUTDOWN (3.3.8): cumulative TSN ack ---- */
#define SCTPE_SHUTDOWN_OFF_CUM 4
#define SCTPE_SHUTDOWN_LEN 8

/* ---- ECNE, CWR (3.3.11, 3.3.12): lowest TSN ---- */
#define SCTPE_ECNE_LEN 8

/* ---- FORWARD TSN (RFC 3758 3.2): new cumulative TSN, then (stream, SSN) pairs ---- */
#define SCTPE_FWDTSN_OFF_CUM 4
#define SCTPE_FWDTSN_FIXED_LEN 8

/* ---- parameters (3.2.1): type, length (header included, padding not), value ---- */
#define SCTPE_PARAM_HDR_LEN 4

enum sctpe_param_type {
	SCTPE_P_HEARTBEAT_INFO = 1,
	SCTPE_P_IPV4 = 5,
	SCTPE_P_IPV6 = 6,
	SCTPE_P_STATE_COOKIE = 7,
	SCTPE_P_UNRECOGNIZED = 8,
	SCTPE_P_COOKIE_PRESERVATIVE = 9,
	SCTPE_P_HOST_NAME = 11,
	SCTPE_P_SUPPORTED_ADDR_TYPES = 12,
	SCTPE_P_ECN = 0x8000,
	SCTPE_P_ZERO_CHECKSUM = 0x8001, /* RFC 9653 */
	SCTPE_P_RANDOM = 0x8002,        /* RFC 4895 */
	SCTPE_P_CHUNKS = 0x8003,
	SCTPE_P_HMAC_ALGO = 0x8004,
	SCTPE_P_PADDING = 0x8005,
	SCTPE_P_SUPPORTED_EXT = 0x8008, /* RFC 5061: chunk types, one byte each */
	SCTPE_P_FORWARD_TSN = 0xC000,   /* RFC 3758 */
	SCTPE_P_ADAPTATION = 0xC006,
};

/* An unknown parameter's two high bits (3.2.1): skip it (else stop processing the chunk),
 * and report it (in INIT ACK's Unrecognized Parameter, or an ERROR). */
#define SCTPE_PARAM_SKIP 0x8000
#define SCTPE_PARAM_REPORT 0x4000

/* ---- error causes (3.3.10): code, length (header included), value ---- */
#define SCTPE_CAUSE_HDR_LEN 4

enum sctpe_cause {
	SCTPE_E_INVALID_STREAM = 1,
	SCTPE_E_MISSING_PARAM = 2,
	SCTPE_E_STALE_COOKIE = 3,        /* value: measure of staleness, microseconds */
	SCTPE_E_OUT_OF_RESOURCE = 4,
	SCTPE_E_UNRESOLVABLE_ADDR = 5,
	SCTPE_E_UNRECOGNIZED_CHUNK = 6,  /* value: the chunk (its header at least) */
	SCTPE_E_INVALID_PARAM = 7,
	SCTPE_E_UNRECOGNIZED_PARAMS = 8,
	SCTPE_E_NO_USER_DATA = 9,        /* value: the TSN */
	SCTPE_E_COOKIE_IN_SHUTDOWN = 10,
	SCTPE_E_RESTART_NEW_ADDRS = 11,
	SCTPE_E_USER_ABORT = 12,
	SCTPE_E_PROTOCOL_VIOLATION = 13,
};

/* The largest packet the engine sends or takes: a UDP payload over IPv4. */
#define SCTPE_MAX_PACKET 65507

#endif
