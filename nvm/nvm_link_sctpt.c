/*
 * nvm_link_sctpt.c - the SCTP core as a VM link.  Each datagram is one core message on
 * context NVM_LINK_SCTPT_CONTEXT (the link's handler owns it), sent unordered (the VM
 * protocol carries its own sequence where it needs one).  A link address is the peer's
 * first IPv4 address, UDP encapsulation port and SCTP port (8 bytes, network order):
 * enough to rebuild its business card, so a VM can reach another it has never heard from.
 */
#include "nvm_link.h"
#include "sctpt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCTP_ADDR_LEN 8

struct rxd {
	struct rxd *next;
	struct nvm_link_addr from;
	size_t len;
	unsigned char data[];
};

struct sctpt_link {
	struct nvm_link l; /* first: the ops get a struct nvm_link * */
	struct sctpt_ep *ep;
	pthread_mutex_t lock; /* the received queue: filled by the handler, emptied by poll */
	struct rxd *head, **tail;
	size_t queued;
};

/* Received datagrams waiting for poll; beyond this the VM is not keeping up: drop. */
#define RX_QUEUE_MAX 4096

static int card_to_addr(const char *card, struct nvm_link_addr *a)
{
	unsigned udp, sctp;
	char ip[INET_ADDRSTRLEN];
	struct in_addr in;
	if (!card || sscanf(card, "sctpt1 %u %u %15s", &udp, &sctp, ip) != 3 || udp > 65535 ||
	    sctp > 65535 || inet_pton(AF_INET, ip, &in) != 1)
		return -EINVAL;
	uint16_t u = htons((uint16_t)udp), s = htons((uint16_t)sctp);
	a->len = SCTP_ADDR_LEN;
	memcpy(a->b, &in, 4);
	memcpy(a->b + 4, &u, 2);
	memcpy(a->b + 6, &s, 2);
	return 0;
}

/* An address's parts, host order (the address is SCTP_ADDR_LEN bytes). */
static void addr_parts(const struct nvm_link_addr *a, char ip[INET_ADDRSTRLEN], unsigned *udp,
		       unsigned *sctp)
{
	uint16_t u, s;
	memcpy(&u, a->b + 4, 2);
	memcpy(&s, a->b + 6, 2);
	inet_ntop(AF_INET, a->b, ip, INET_ADDRSTRLEN);
	*udp = ntohs(u);
	*sctp = ntohs(s);
}

static void addr_to_card(const struct nvm_link_addr *a, char *card, size_t len)
{
	char ip[INET_ADDRSTRLEN];
	unsigned udp, sctp;
	addr_parts(a, ip, &udp, &sctp);
	snprintf(card, len, "sctpt1 %u %u %s", udp, sctp, ip);
}

/* The link's completions: datagrams in, and the copies of datagrams sent. */
static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	struct sctpt_link *k = arg;
	struct nvm_link_addr from;
	char card[SCTPT_CARD_MAX];
	if (c->kind == SCTPT_CQE_SEND) {
		free(c->cookie); /* a datagram link: a lost peer loses the datagram */
		return;
	}
	if (c->kind != SCTPT_CQE_RECV || c->status < 0 || c->len > NVM_LINK_MTU ||
	    card_to_addr(sctpt_peer_name(k->ep, c->peer, card, sizeof(card)), &from))
		return; /* a peer whose card we cannot name: nothing to answer */
	struct rxd *d = malloc(sizeof(*d) + c->len);
	if (!d)
		return;
	d->next = NULL;
	d->from = from;
	d->len = c->len;
	memcpy(d->data, c->data, c->len);
	pthread_mutex_lock(&k->lock);
	if (k->queued >= RX_QUEUE_MAX) {
		pthread_mutex_unlock(&k->lock);
		free(d);
		return;
	}
	*k->tail = d;
	k->tail = &d->next;
	k->queued++;
	pthread_mutex_unlock(&k->lock);
}

/* Other contexts and the endpoint's events: a datagram link has no use for them (left to a
 * handler without complete(), they would wait for sctpt_cq_read forever). */
static void on_other(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	(void)c;
}

static int sctp_send(struct nvm_link *l, const struct nvm_link_addr *to, const void *buf, size_t len)
{
	struct sctpt_link *k = (struct sctpt_link *)l;
	char card[96];
	if (to->len != SCTP_ADDR_LEN || len > NVM_LINK_MTU)
		return -EINVAL;
	addr_to_card(to, card, sizeof(card));
	sctpt_peer_t p = sctpt_peer_add(k->ep, card);
	if (p < 0)
		return p;
	/* The core may keep the iov until the send's completion: give it a copy it owns. */
	void *copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	struct iovec iov = { copy, len };
	int rc = sctpt_send(k->ep, p, NVM_LINK_SCTPT_CONTEXT, 0, SCTPT_SEND_UNORDERED, &iov, 1,
			    copy);
	if (rc != 0)
		free(copy); /* 1: SCTP has the data; < 0: refused; neither completes */
	return rc < 0 ? rc : 0;
}

static struct rxd *pop(struct sctpt_link *k)
{
	pthread_mutex_lock(&k->lock);
	struct rxd *d = k->head;
	if (d) {
		k->head = d->next;
		if (!k->head)
			k->tail = &k->head;
		k->queued--;
	}
	pthread_mutex_unlock(&k->lock);
	return d;
}

static long sctp_poll(struct nvm_link *l, void *buf, size_t cap, struct nvm_link_addr *from,
		      int timeout_ms)
{
	struct sctpt_link *k = (struct sctpt_link *)l;
	struct rxd *d = pop(k);
	if (!d) {
		if (timeout_ms > 0)
			sctpt_wait(k->ep, timeout_ms);
		else
			sctpt_progress(k->ep);
		d = pop(k);
	}
	if (!d)
		return 0;
	size_t n = d->len < cap ? d->len : cap; /* a datagram longer than buf is truncated */
	memcpy(buf, d->data, n);
	if (from)
		*from = d->from;
	free(d);
	return (long)n;
}

static void sctp_close(struct nvm_link *l)
{
	struct sctpt_link *k = (struct sctpt_link *)l;
	sctpt_close(k->ep);
	for (struct rxd *d; (d = pop(k));)
		free(d);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

static void sctp_wait(struct nvm_link *l, int timeout_ms)
{
	struct sctpt_link *k = (struct sctpt_link *)l;
	pthread_mutex_lock(&k->lock);
	int have = k->head != NULL;
	pthread_mutex_unlock(&k->lock);
	if (!have)
		sctpt_wait(k->ep, timeout_ms);
}

static const struct nvm_link_ops sctp_ops = { sctp_send, sctp_poll, sctp_close, sctp_wait };

int nvm_link_sctpt_open(const char *addrs, uint16_t udp_port, struct nvm_link **out)
{
	struct sctpt_link *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	pthread_mutex_init(&k->lock, NULL);
	k->tail = &k->head;
	k->l.ops = &sctp_ops;
	k->l.fd = -1;
	struct sctpt_config cfg;
	sctpt_config_init(&cfg);
	cfg.addrs = addrs; /* NULL: the core's default (every up IPv4 interface) */
	cfg.udp_port = udp_port;
	cfg.accept_unknown = 1; /* nvmctl and other VMs come and go without a modex */
	cfg.handler.complete = on_other;
	cfg.handler.events = 0;
	char card[SCTPT_CARD_MAX];
	struct sctpt_handler h = { .lo = NVM_LINK_SCTPT_CONTEXT, .hi = NVM_LINK_SCTPT_CONTEXT,
				   .complete = on_complete, .arg = k };
	int rc = sctpt_open(&cfg, &k->ep);
	if (!rc && (rc = sctpt_handler_add(k->ep, &h)) > 0)
		rc = 0;
	if (!rc && sctpt_card(k->ep, card, sizeof(card)) < 0)
		rc = -ENOSPC;
	if (!rc)
		rc = card_to_addr(card, &k->l.self);
	if (rc) {
		if (k->ep)
			sctpt_close(k->ep);
		pthread_mutex_destroy(&k->lock);
		free(k);
		return rc;
	}
	*out = &k->l;
	return 0;
}

int nvm_link_sctpt_addr(const char *s, struct nvm_link_addr *a)
{
	char ip[INET_ADDRSTRLEN + 1], card[96];
	unsigned udp, sctp;
	char tail;
	if (strncmp(s, "sctp:", 5) != 0 ||
	    sscanf(s + 5, "%16[0-9.]:%u:%u%c", ip, &udp, &sctp, &tail) != 3 || udp == 0 ||
	    udp > 65535 || sctp == 0 || sctp > 65535)
		return -EINVAL;
	snprintf(card, sizeof(card), "sctpt1 %u %u %s", udp, sctp, ip);
	return card_to_addr(card, a);
}

int nvm_link_sctpt_format(const struct nvm_link_addr *a, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN];
	unsigned udp, sctp;
	if (a->len != SCTP_ADDR_LEN)
		return -EINVAL;
	addr_parts(a, ip, &udp, &sctp);
	return snprintf(buf, len, "sctp:%s:%u:%u", ip, udp, sctp) < (int)len ? 0 : -ENOSPC;
}
