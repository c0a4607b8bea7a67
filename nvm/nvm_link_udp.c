/* nvm_link_udp.c - the loopback UDP link (stand-in for the SCTP core). */
#include "nvm_link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void to_sin(const struct nvm_link_addr *a, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	memcpy(&sin->sin_addr, a->b, 4);
	memcpy(&sin->sin_port, a->b + 4, 2);
}

static void from_sin(const struct sockaddr_in *sin, struct nvm_link_addr *a)
{
	a->len = 6;
	memcpy(a->b, &sin->sin_addr, 4);
	memcpy(a->b + 4, &sin->sin_port, 2);
}

static int udp_send(struct nvm_link *l, const struct nvm_link_addr *to, const void *buf, size_t len)
{
	struct sockaddr_in sin;
	if (to->len != 6)
		return -EINVAL;
	to_sin(to, &sin);
	if (sin.sin_addr.s_addr != htonl(INADDR_LOOPBACK))
		return -EHOSTUNREACH; /* nothing goes beyond loopback */
	ssize_t n = sendto(l->fd, buf, len, 0, (struct sockaddr *)&sin, sizeof(sin));
	if (n < 0)
		return -errno;
	return 0;
}

static long udp_poll(struct nvm_link *l, void *buf, size_t cap, struct nvm_link_addr *from,
		     int timeout_ms)
{
	if (timeout_ms > 0) {
		struct pollfd p = { .fd = l->fd, .events = POLLIN };
		int r = poll(&p, 1, timeout_ms);
		if (r <= 0)
			return r < 0 && errno != EINTR ? -errno : 0;
	}
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	ssize_t n = recvfrom(l->fd, buf, cap, MSG_DONTWAIT, (struct sockaddr *)&sin, &sl);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -errno;
	if (from)
		from_sin(&sin, from);
	return n;
}

static void udp_close(struct nvm_link *l)
{
	close(l->fd);
	free(l);
}

static const struct nvm_link_ops udp_ops = { udp_send, udp_poll, udp_close, NULL };

void nvm_link_wait(struct nvm_link *l, int timeout_ms)
{
	if (l->ops->wait) {
		l->ops->wait(l, timeout_ms);
	} else {
		struct pollfd p = { .fd = l->fd, .events = POLLIN };
		poll(&p, l->fd >= 0 ? 1 : 0, timeout_ms);
	}
}

int nvm_link_udp_open(uint16_t port, struct nvm_link **out)
{
	struct nvm_link *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->ops = &udp_ops;
	l->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		int rc = -errno;
		free(l);
		return rc;
	}
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof(sin);
	int buf = 1 << 20;
	setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (bind(l->fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    getsockname(l->fd, (struct sockaddr *)&sin, &sl) != 0) {
		int rc = -errno;
		close(l->fd);
		free(l);
		return rc;
	}
	from_sin(&sin, &l->self);
	*out = l;
	return 0;
}

int nvm_link_udp_addr(const char *s, struct nvm_link_addr *a)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(s, ':');
	const char *port = s;
	if (colon) {
		size_t n = (size_t)(colon - s);
		if (n == 0 || n >= sizeof(host))
			return -EINVAL;
		memcpy(host, s, n);
		host[n] = '\0';
		port = colon + 1;
	}
	char *end;
	long p = strtol(port, &end, 10);
	struct in_addr in;
	if (*port == '\0' || *end != '\0' || p <= 0 || p > 65535 || inet_pton(AF_INET, host, &in) != 1)
		return -EINVAL;
	uint16_t np = htons((uint16_t)p);
	a->len = 6;
	memcpy(a->b, &in, 4);
	memcpy(a->b + 4, &np, 2);
	return 0;
}

uint16_t nvm_link_udp_port(const struct nvm_link_addr *a)
{
	uint16_t np;
	memcpy(&np, a->b + 4, 2);
	return ntohs(np);
}
