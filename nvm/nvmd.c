/*
 * nvmd - a NIC VM on its own, listening on a loopback UDP port: the "remote VM"
 * that nvmctl (or nvm_mgmt_remote) manages.  Prints on stdout, one per line, what its
 * programs DISPLAY ("display PROG VALUE"), send to the host ("host PROG TRIG WORD...")
 * and the VM's events ("event KIND PROG text").
 *
 *   nvmd [--link udp|sctp] [--bind ADDRS] [--port N] [--seconds S] [--seg ID:LEN]...
 *        [--map B:B:..:B=HOST:PORT]...
 *
 * --port 0 (the default) picks a free port; the first line says which:
 *   nvmd: listening on 127.0.0.1:PORT                (--link udp, the default)
 *   nvmd: listening on sctp:IP:UDPPORT:SCTPPORT      (--link sctp: the SCTP core, bound
 *                                                     to --bind, default 127.0.0.1)
 * --map takes addresses in the same form.
 * Runs until --seconds (default 60) have passed or SIGINT/SIGTERM.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvm_link.h"
#include "nvm_seg.h"
#include "nvm_vm.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int parse_map(struct nvm_vm *vm, const char *arg)
{
	const char *eq = strchr(arg, '=');
	uint8_t b[NVM_ADDR_MAX];
	size_t n = 0;
	struct nvm_link_addr to;
	if (!eq || (strncmp(eq + 1, "sctp:", 5) == 0 ? nvm_link_sctpt_addr(eq + 1, &to)
						     : nvm_link_udp_addr(eq + 1, &to)) != 0)
		return -EINVAL;
	for (const char *p = arg; p < eq && n < NVM_ADDR_MAX;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 0 || v > 255)
			return -EINVAL;
		b[n++] = (uint8_t)v;
		p = (*end == ':') ? end + 1 : end;
		if (end == eq)
			break;
	}
	return nvm_vm_map_addr(vm, b, n, &to);
}

static const char *event_kind(int k)
{
	switch (k) {
	case NVM_EV_FAULT: return "fault";
	case NVM_EV_STOP: return "stop";
	case NVM_EV_DROP: return "drop";
	default: return "senderr";
	}
}

int main(int argc, char **argv)
{
	long port = 0, seconds = 60;
	const char *kind = "udp", *bind = "127.0.0.1";
	struct nvm_link *link;
	int i;
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
			port = atol(argv[++i]);
		else if (strcmp(argv[i], "--link") == 0 && i + 1 < argc)
			kind = argv[++i];
		else if (strcmp(argv[i], "--bind") == 0 && i + 1 < argc)
			bind = argv[++i];
		else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = atol(argv[++i]);
		else if ((strcmp(argv[i], "--seg") == 0 || strcmp(argv[i], "--map") == 0) && i + 1 < argc)
			i++; /* after the VM exists */
		else {
			fprintf(stderr, "usage: nvmd [--link udp|sctp] [--bind ADDRS] [--port N] "
					"[--seconds S] [--seg ID:LEN]... [--map B:..:B=HOST:PORT]...\n");
			return 2;
		}
	int sctp = strcmp(kind, "sctp") == 0;
	if (!sctp && strcmp(kind, "udp") != 0) {
		fprintf(stderr, "nvmd: unknown link '%s' (udp or sctp)\n", kind);
		return 2;
	}
	if (port < 0 || port > 65535) {
		fprintf(stderr, "nvmd: bad port %ld\n", port);
		return 2;
	}
	int rc = sctp ? nvm_link_sctpt_open(bind, (uint16_t)port, &link)
		      : nvm_link_udp_open((uint16_t)port, &link);
	if (rc) {
		fprintf(stderr, "nvmd: cannot open %s port %ld: %s\n", sctp ? "SCTP-over-UDP" : "UDP", port,
			strerror(-rc));
		return 1;
	}
	struct nvm_vm *vm = nvm_vm_new(&(struct nvm_vm_config){ .link = link });
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seg") == 0) {
			unsigned id;
			size_t len;
			if (sscanf(argv[++i], "%u:%zu", &id, &len) != 2 || len == 0 || len > (1u << 26)) {
				fprintf(stderr, "nvmd: bad --seg %s (want ID:LEN)\n", argv[i]);
				return 2;
			}
			struct nvm_seg *s = nvm_seg_new(id, len, NVM_SEG_R | NVM_SEG_W);
			if (!s || nvm_vm_seg_attach(vm, s) != 0) {
				fprintf(stderr, "nvmd: cannot attach segment %u\n", id);
				return 1;
			}
			nvm_seg_put(s);
		} else if (strcmp(argv[i], "--map") == 0) {
			if (parse_map(vm, argv[++i]) != 0) {
				fprintf(stderr, "nvmd: bad --map %s\n", argv[i]);
				return 2;
			}
		} else {
			i++; /* --port, --seconds, --link, --bind: read above */
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (sctp) {
		char a[64];
		nvm_link_sctpt_format(&link->self, a, sizeof(a));
		printf("nvmd: listening on %s\n", a);
	} else {
		printf("nvmd: listening on 127.0.0.1:%u\n", nvm_link_udp_port(&link->self));
	}
	fflush(stdout);
	double end = now() + (double)seconds;
	while (!stop && now() < end) {
		int n = nvm_vm_progress(vm, 64);
		int64_t v[64];
		uint32_t p[64];
		size_t k;
		while ((k = nvm_vm_display_read(vm, v, p, 64)) > 0) {
			for (size_t j = 0; j < k; j++)
				printf("display %u %lld\n", p[j], (long long)v[j]);
			n++;
		}
		struct nvm_host_msg hm;
		static int64_t words[NVM_MSG_MAX / 8];
		while (nvm_vm_host_recv(vm, &hm, words, sizeof(words))) {
			printf("host %u %u", hm.src_prog, hm.trig);
			for (uint32_t j = 0; j < hm.len / 8; j++)
				printf(" %lld", (long long)words[j]);
			printf("\n");
			n++;
		}
		struct nvm_event ev;
		while (nvm_vm_event_next(vm, &ev)) {
			printf("event %s %u %s\n", event_kind(ev.kind), ev.prog, ev.text);
			n++;
		}
		if (n) {
			fflush(stdout);
		} else {
			nvm_link_wait(link, 1); /* idle: until the link has something, at most 1 ms */
		}
	}
	printf("nvmd: exiting\n");
	nvm_vm_free(vm);
	nvm_link_close(link);
	return 0;
}
