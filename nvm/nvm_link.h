/*
 * nvm_link.h - the small transport interface the VM and the remote management API
 * use: send bytes to an address, poll for received bytes: a UDP loopback link
 * (nvm_link_udp.c) and the SCTP core (nvm_link_sctpt.c).
 *
 * An address is an opaque byte string of at most NVM_LINK_ADDR_MAX bytes
 * (for the UDP link: 4 bytes IPv4 + 2 bytes port, network order).
 */
#ifndef NVM_LINK_H
#define NVM_LINK_H

#include <stddef.h>
#include <stdint.h>

#define NVM_LINK_ADDR_MAX 32
#define NVM_LINK_MTU 65000

struct nvm_link_addr {
	uint8_t len;
	uint8_t b[NVM_LINK_ADDR_MAX];
};

struct nvm_link;

struct nvm_link_ops {
	/* Send one datagram; 0 or negative errno. Never blocks for long. */
	int (*send)(struct nvm_link *l, const struct nvm_link_addr *to, const void *buf, size_t len);
	/* Receive one datagram if one is waiting: its length, 0 if none, negative errno.
	 * timeout_ms 0 = do not wait. */
	long (*poll)(struct nvm_link *l, void *buf, size_t cap, struct nvm_link_addr *from,
		     int timeout_ms);
	void (*close)(struct nvm_link *l);
	/* Optional, for links without a descriptor to poll(2): block until something may
	 * have arrived or timeout_ms passed, receiving nothing. */
	void (*wait)(struct nvm_link *l, int timeout_ms);
};

struct nvm_link {
	const struct nvm_link_ops *ops;
	struct nvm_link_addr self; /* the address peers use to reach this link */
	int fd;                    /* for links that have one, else -1 */
};

static inline int nvm_link_send(struct nvm_link *l, const struct nvm_link_addr *to,
				const void *buf, size_t len)
{
	return l->ops->send(l, to, buf, len);
}

static inline long nvm_link_poll(struct nvm_link *l, void *buf, size_t cap,
				 struct nvm_link_addr *from, int timeout_ms)
{
	return l->ops->poll(l, buf, cap, from, timeout_ms);
}

/* Sleep until the link may have a datagram, at most timeout_ms. */
void nvm_link_wait(struct nvm_link *l, int timeout_ms);

static inline void nvm_link_close(struct nvm_link *l)
{
	if (l)
		l->ops->close(l);
}

static inline int nvm_link_addr_eq(const struct nvm_link_addr *a, const struct nvm_link_addr *b)
{
	if (a->len != b->len)
		return 0;
	for (unsigned i = 0; i < a->len; i++)
		if (a->b[i] != b->b[i])
			return 0;
	return 1;
}

/* UDP on 127.0.0.1, port 0 = any free port.  Binds to loopback only. */
int nvm_link_udp_open(uint16_t port, struct nvm_link **out);
/* "127.0.0.1:port" (or "port") to a UDP link address; 0 or -EINVAL. */
int nvm_link_udp_addr(const char *s, struct nvm_link_addr *a);
/* The port of a UDP link address. */
uint16_t nvm_link_udp_port(const struct nvm_link_addr *a);

/* The SCTP core (transport/sctpt.h) as a link: addrs = local IPv4 addresses to bind
 * (comma-separated; NULL: the core's default), udp_port 0 = any free one.  It accepts peers it was never told
 * about, as a UDP socket would.  Addresses are 8 bytes (IPv4, UDP port, SCTP port),
 * written "sctp:IP:UDPPORT:SCTPPORT".  Every datagram is one core message on the context
 * NVM_LINK_SCTPT_CONTEXT. */
#define NVM_LINK_SCTPT_CONTEXT 0xffff0000u
int nvm_link_sctpt_open(const char *addrs, uint16_t udp_port, struct nvm_link **out);
int nvm_link_sctpt_addr(const char *s, struct nvm_link_addr *a);
int nvm_link_sctpt_format(const struct nvm_link_addr *a, char *buf, size_t len);

#endif
