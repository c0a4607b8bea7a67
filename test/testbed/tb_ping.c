/*
 * tb_ping - a bounded ICMP echo for the testbed (the images we test on have no ping).
 *
 *   tb_ping [-I IFNAME] [-c COUNT] [-W SECONDS] IPV4
 *
 * Sends COUNT echo requests (default 2), one every 200 ms, out of IFNAME if given
 * (SO_BINDTODEVICE), and waits at most SECONDS (default 2) in all.  Exit 0 when a reply
 * from IPV4 came back, 1 when none did, 2 on a usage or socket error (message on stderr).
 * Needs root (a raw ICMP socket), like the namespaces it runs in.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint16_t cksum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

static int send_echo(int fd, const struct sockaddr_in *to, uint16_t id, uint16_t seq)
{
	unsigned char pkt[sizeof(struct icmphdr) + 16] = { 0 };
	struct icmphdr *h = (struct icmphdr *)pkt;

	h->type = ICMP_ECHO;
	h->un.echo.id = htons(id);
	h->un.echo.sequence = htons(seq);
	memcpy(pkt + sizeof(*h), "fnn-testbed ping", 16);
	h->checksum = cksum(pkt, sizeof(pkt));
	if (sendto(fd, pkt, sizeof(pkt), 0, (const struct sockaddr *)to, sizeof(*to)) < 0)
		return -errno;
	return 0;
}

/* 1 if buf is an echo reply with our id from the target address. */
static int is_reply(const unsigned char *buf, ssize_t n, const struct sockaddr_in *from,
		    const struct sockaddr_in *to, uint16_t id)
{
	const struct iphdr *ip = (const struct iphdr *)buf;
	size_t hl;
	const struct icmphdr *h;

	if (n < (ssize_t)sizeof(*ip))
		return 0;
	hl = (size_t)ip->ihl * 4;
	if ((size_t)n < hl + sizeof(*h) || from->sin_addr.s_addr != to->sin_addr.s_addr)
		return 0;
	h = (const struct icmphdr *)(buf + hl);
	return h->type == ICMP_ECHOREPLY && ntohs(h->un.echo.id) == id;
}

int main(int argc, char **argv)
{
	const char *ifname = NULL;
	int count = 2, opt, fd, sent = 0;
	double wait_s = 2, t0, next;
	struct sockaddr_in to = { .sin_family = AF_INET };
	uint16_t id = (uint16_t)getpid();

	while ((opt = getopt(argc, argv, "I:c:W:")) != -1) {
		if (opt == 'I')
			ifname = optarg;
		else if (opt == 'c')
			count = atoi(optarg);
		else if (opt == 'W')
			wait_s = atof(optarg);
		else
			return 2;
	}
	if (optind != argc - 1 || count < 1 || wait_s <= 0 ||
	    inet_pton(AF_INET, argv[optind], &to.sin_addr) != 1) {
		fprintf(stderr, "usage: tb_ping [-I IFNAME] [-c COUNT] [-W SECONDS] IPV4\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (fd < 0) {
		fprintf(stderr, "tb_ping: raw socket: %s\n", strerror(errno));
		return 2;
	}
	if (ifname && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname) + 1)) {
		fprintf(stderr, "tb_ping: bind to %s: %s\n", ifname, strerror(errno));
		close(fd);
		return 2;
	}
	t0 = now();
	next = t0;
	for (;;) {
		double t = now();
		unsigned char buf[1500];
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (t - t0 >= wait_s)
			break;
		if (sent < count && t >= next) {
			int rc = send_echo(fd, &to, id, (uint16_t)sent++);
			if (rc < 0)   /* no route: unreachable from here, keep the bound */
				fprintf(stderr, "tb_ping: %s via %s: %s\n", argv[optind],
					ifname ? ifname : "any", strerror(-rc));
			next = t + 0.2;
		}
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (is_reply(buf, n, &from, &to, id)) {
			close(fd);
			return 0;
		}
	}
	close(fd);
	return 1;
}
