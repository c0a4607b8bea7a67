/* Which local addresses an endpoint binds: an explicit list, the thesis's multihoming
 * configuration file, or the machine's interfaces. */
#include "sctpt_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Fills netmask and MTU of the interface that has addr (defaults: /32, 1500). */
static void iface_info(uint32_t addr, uint32_t *mask, int *mtu)
{
	struct ifaddrs *ifs, *i;
	*mask = 0xffffffffu;
	*mtu = (ntohl(addr) >> 24) == 127 ? 65535 : 1500;
	if (getifaddrs(&ifs) != 0)
		return;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		if (((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr != addr)
			continue;
		if (i->ifa_netmask)
			*mask = ((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr;
		struct ifreq ifr;
		int fd = socket(AF_INET, SOCK_DGRAM, 0);
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", i->ifa_name);
		if (fd >= 0 && ioctl(fd, SIOCGIFMTU, &ifr) == 0)
			*mtu = ifr.ifr_mtu;
		if (fd >= 0)
			close(fd);
		break;
	}
	freeifaddrs(ifs);
}

static int add_addr(struct sctpt_udp *out, int n, int max, uint32_t a)
{
	for (int i = 0; i < n; i++)
		if (out[i].addr.sin_addr.s_addr == a)
			return n; /* listed twice */
	if (n == max)
		return sctpt_err(-E2BIG, "more than %d local addresses", max);
	memset(&out[n], 0, sizeof(out[n]));
	out[n].fd = -1;
	out[n].addr.sin_family = AF_INET;
	out[n].addr.sin_addr.s_addr = a;
	iface_info(a, &out[n].mask, &out[n].mtu);
	return n + 1;
}

int sctpt_config_file_addrs(const char *file, const char *host, uint32_t *addrs, int max)
{
	FILE *f = fopen(file, "r");
	char line[1024], me[256];
	int lineno = 0, n = -ENOENT;
	if (!f)
		return sctpt_err(-errno, "multihoming config %s: %s", file, strerror(errno));
	if (!host) {
		if (gethostname(me, sizeof(me)) != 0)
			snprintf(me, sizeof(me), "localhost");
		me[sizeof(me) - 1] = '\0';
		host = me;
	}
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok, *hash = strchr(line, '#');
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			n = sctpt_err(-EINVAL, "%s:%d: line too long", file, lineno);
			break;
		}
		if (hash)
			*hash = '\0';
		tok = strtok_r(line, " \t\r\n", &save);
		if (!tok)
			continue;
		int mine = strcmp(tok, host) == 0;
		int k = 0;
		while ((tok = strtok_r(NULL, " \t\r\n", &save)) != NULL) {
			struct in_addr in;
			if (inet_pton(AF_INET, tok, &in) != 1) {
				n = sctpt_err(-EINVAL, "%s:%d: '%s' is not an IPv4 address", file,
					      lineno, tok);
				goto out;
			}
			if (mine && k < max)
				addrs[k] = in.s_addr;
			k++;
		}
		if (k == 0) {
			n = sctpt_err(-EINVAL, "%s:%d: host %s has no address", file, lineno, line);
			goto out;
		}
		if (mine) {
			if (k > max) {
				n = sctpt_err(-E2BIG, "%s:%d: more than %d addresses", file, lineno, max);
				goto out;
			}
			n = k;
		}
	}
	if (n == -ENOENT)
		sctpt_err(-ENOENT, "multihoming config %s has no line for host %s", file, host);
out:
	fclose(f);
	return n;
}

int sctpt_local_addrs(const struct sctpt_config *cfg, struct sctpt_udp *out, int max)
{
	int n = 0;
	if (cfg->addrs && *cfg->addrs) {
		char buf[1024], *save = NULL, *tok;
		snprintf(buf, sizeof(buf), "%s", cfg->addrs);
		for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
			struct in_addr in;
			if (inet_pton(AF_INET, tok, &in) != 1)
				return sctpt_err(-EINVAL, "local address '%s' is not IPv4", tok);
			if ((n = add_addr(out, n, max, in.s_addr)) < 0)
				return n;
		}
		return n ? n : sctpt_err(-EINVAL, "empty local address list");
	}
	if (cfg->config_file) {
		uint32_t a[SCTPT_MAX_ADDRS];
		int k = sctpt_config_file_addrs(cfg->config_file, cfg->config_host, a,
						max < SCTPT_MAX_ADDRS ? max : SCTPT_MAX_ADDRS);
		if (k < 0)
			return k;
		for (int i = 0; i < k; i++)
			if ((n = add_addr(out, n, max, a[i])) < 0)
				return n;
		return n;
	}
	struct ifaddrs *ifs, *i;
	if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
				continue;
			if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
				continue;
			uint32_t a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
			if (n < max && (n = add_addr(out, n, max, a)) < 0)
				break;
		}
		freeifaddrs(ifs);
	}
	if (n <= 0)
		n = add_addr(out, 0, max, htonl(INADDR_LOOPBACK));
	return n;
}
