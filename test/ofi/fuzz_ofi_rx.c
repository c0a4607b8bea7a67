/*
 * Fuzz target for the provider's receive path: its header parser (sctp_proto.h) and what
 * follows it -- endpoint dispatch, matching against posted receives (tagged with ignore bits,
 * directed, multi-receive, too small), unexpected queues, FI_PEEK/FI_CLAIM/FI_DISCARD,
 * cancel, control messages (acks), CQ entries. A domain is opened on a socketless core
 * endpoint (sctpt_open_nosock); the input is a series of records [op:1][len:2 big-endian]
 * [bytes]:
 *   op % 8 == 0, 1: bytes arrive as one message on the endpoint's context (0) or the
 *                   control context (1), from a peer the AV knows (nonce 0x1111, ep 0)
 *   2: post a tagged receive: buffer of bytes[0] bytes, directed to that peer if bytes[1] is
 *      odd, tag and ignore from bytes 2..9 and 10..17
 *   3: post a multi-receive buffer of 256 bytes
 *   4: FI_PEEK with FI_CLAIM or FI_DISCARD (bytes[0]), tag from the bytes; claimed messages
 *      are then received
 *   5: cancel the oldest posted receive       6, 7: read the CQ
 * Receive buffers sit between guard bytes that must stay untouched; nothing may crash.
 */
#include "sctpt_int.h"
#include "sctp_prov.h"

#include <stdlib.h>
#include <string.h>

#define GUARD 32
#define GUARDB 0xa5
#define NBUF 16

static uint8_t mem[NBUF][GUARD + 256 + GUARD];
static struct fi_context ctxs[NBUF];

static size_t frame(uint8_t *out, uint32_t context, const uint8_t *msg, size_t len)
{
	struct sctpt_hdr h = {.version = SCTPT_PROTO_VERSION, .op = SCTPT_OP_DATA,
			      .flags = SCTPT_F_FIRST | SCTPT_F_LAST | SCTPT_F_UNORDERED,
			      .context = context, .msg_len = len};
	sctpt_hdr_encode(&h, out);
	memcpy(out + SCTPT_HDR_LEN, msg, len);
	return SCTPT_HDR_LEN + len;
}

static uint64_t get64(const uint8_t *p, size_t len)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8 && i < len; i++)
		v = v << 8 | p[i];
	return v;
}

static void drain(struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e[8];
	struct fi_cq_err_entry err;
	ssize_t n;

	for (int i = 0; i < 64; i++) {
		n = fi_cq_read(cq, e, 8);
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(cq, &err, 0) != 1)
				__builtin_trap();
		} else if (n <= 0) {
			return;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pkt[SCTPT_HDR_LEN + 65536];
	struct fi_info *info = NULL;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_TAGGED};
	struct fi_av_attr ava = {.type = FI_AV_MAP};
	struct sctp_addr peer_name = {.naddrs = 1, .ep = 0, .udp_port = 9, .sctp_port = 9,
				      .nonce = 0x1111, .ips = {0x0200007f}};
	uint8_t name[SCTP_ADDR_LEN];
	fi_addr_t peer;
	int nbuf = 0, posted[NBUF] = {0};

	sctp_core_open = sctpt_open_nosock;
	if (!sctp_params.inject_size) {
		sctp_params.streams = 16;
		sctp_params.frag_size = 65536;
		sctp_params.inject_size = SCTP_INJECT_SIZE;
	}
	if (sctp_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, NULL, &info) != 0)
		__builtin_trap();
	info->caps |= FI_DIRECTED_RECV;
	if (sctp_fabric_open(info->fabric_attr, &fab, NULL) || fi_domain(fab, info, &dom, NULL) ||
	    fi_av_open(dom, &ava, &av, NULL) || fi_cq_open(dom, &cqa, &cq, NULL) ||
	    fi_endpoint(dom, info, &ep, NULL) || fi_ep_bind(ep, &av->fid, 0) ||
	    fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV) || fi_enable(ep))
		__builtin_trap();
	sctp_addr_encode(&peer_name, name);
	if (fi_av_insert(av, name, 1, &peer, 0, NULL) != 1)
		__builtin_trap();
	struct sctp_domain *d = container_of(dom, struct sctp_domain, dom);
	sctpt_peer_t core_peer = d->eps[0]->av->e[peer].peer;
	memset(mem, GUARDB, sizeof(mem));

	while (size >= 3) {
		uint8_t op = data[0] % 8;
		size_t len = (size_t)data[1] << 8 | data[2];
		const uint8_t *b = data + 3;
		if (len > size - 3)
			len = size - 3;
		data += 3 + len;
		size -= 3 + len;
		switch (op) {
		case 0:
		case 1:
			sctpt_rx_inject(d->core, core_peer, 1, pkt,
					frame(pkt, op ? SCTP_CTX_CTRL : SCTP_CTX_EP, b, len));
			fi_cq_read(cq, NULL, 0);
			break;
		case 2:
			if (nbuf < NBUF) {
				size_t sz = len ? b[0] : 0;
				int rc = (int)fi_trecv(ep, mem[nbuf] + GUARD, sz, NULL,
						       len > 1 && (b[1] & 1) ? peer : FI_ADDR_UNSPEC,
						       get64(b + 2, len > 2 ? len - 2 : 0),
						       get64(b + 10, len > 10 ? len - 10 : 0), &ctxs[nbuf]);
				posted[nbuf++] = rc == 0;
			}
			break;
		case 3:
			if (nbuf < NBUF) {
				struct iovec iov = {mem[nbuf] + GUARD, 256};
				struct fi_msg m = {.msg_iov = &iov, .iov_count = 1,
						   .addr = FI_ADDR_UNSPEC, .context = &ctxs[nbuf]};
				posted[nbuf++] = fi_recvmsg(ep, &m, FI_MULTI_RECV) == 0;
			}
			break;
		case 4:
			if (nbuf < NBUF) {
				struct iovec iov = {mem[nbuf] + GUARD, 256};
				struct fi_msg_tagged m = {.msg_iov = &iov, .iov_count = 1,
							  .addr = FI_ADDR_UNSPEC,
							  .tag = get64(b + 1, len ? len - 1 : 0),
							  .context = &ctxs[nbuf]};
				struct fi_cq_tagged_entry e;
				int discard = len && (b[0] & 1);
				ctxs[nbuf].internal[0] = NULL;
				fi_trecvmsg(ep, &m, FI_PEEK | (discard ? FI_DISCARD : FI_CLAIM));
				if (fi_cq_read(cq, &e, 1) == 1 && !discard && e.op_context == &ctxs[nbuf])
					fi_trecvmsg(ep, &m, FI_CLAIM);
				nbuf++;
				drain(cq);
			}
			break;
		case 5:
			for (int i = 0; i < nbuf; i++) {
				if (posted[i]) {
					fi_cancel(&ep->fid, &ctxs[i]);
					posted[i] = 0;
					break;
				}
			}
			break;
		default:
			drain(cq);
			break;
		}
	}
	drain(cq);
	for (int i = 0; i < NBUF; i++)
		for (int g = 0; g < GUARD; g++)
			if (mem[i][g] != GUARDB || mem[i][GUARD + 256 + g] != GUARDB)
				__builtin_trap();
	if (fi_close(&ep->fid) || fi_close(&cq->fid) || fi_close(&av->fid) ||
	    fi_close(&dom->fid) || fi_close(&fab->fid))
		__builtin_trap();
	fi_freeinfo(info);
	return 0;
}
