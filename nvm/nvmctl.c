/*
 * nvmctl - manage the programs of a NIC VM: the paper's "suite of tools to load,
 * unload, run, and send messages to PANIC programs", over nvm_mgmt_remote.
 *
 *   nvmctl --to HOST:PORT load ID file.pdl|file.nvm
 *   nvmctl --to HOST:PORT replace ID file.pdl|file.nvm
 *   nvmctl --to HOST:PORT run ID
 *   nvmctl --to HOST:PORT send ID TRIGGER [WORD]...   (payload: 64-bit words)
 *   nvmctl --to HOST:PORT unload ID
 * HOST:PORT is a VM on the loopback UDP link; sctp:IP:UDPPORT:SCTPPORT one on the SCTP core.
 *
 * Exit status 0 on success, 1 with the VM's reason on stderr otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvm_link.h"
#include "nvm_mgmt.h"
#include "nvm_module.h"
#include "pdl_emit.h"
#include "common/sm_file.h"

static int usage(void)
{
	fprintf(stderr, "usage: nvmctl --to HOST:PORT load|replace ID FILE\n"
			"       nvmctl --to HOST:PORT run|unload ID\n"
			"       nvmctl --to HOST:PORT send ID TRIGGER [WORD]...\n"
			"HOST:PORT: a VM on loopback UDP, or sctp:IP:UDPPORT:SCTPPORT on the SCTP core\n");
	return 2;
}

/* A module image from a .nvm file, or compiled from PDL. */
static uint8_t *image(const char *path, size_t *len)
{
	char err[512], *buf;
	size_t n;
	if (sm_read_file(path, &buf, &n, err, sizeof(err))) {
		fprintf(stderr, "nvmctl: %s\n", err);
		return NULL;
	}
	struct nvm_module *m;
	int rc = (n >= 4 && memcmp(buf, "NVMM", 4) == 0)
			 ? nvm_module_decode(buf, n, &m, err, sizeof(err))
			 : pdl_compile(path, buf, n, &m, err, sizeof(err));
	free(buf);
	if (rc) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	uint8_t *img = NULL;
	if (nvm_module_encode(m, &img, len) != 0)
		img = NULL;
	nvm_module_free(m);
	return img;
}

int main(int argc, char **argv)
{
	struct nvm_link_addr to;
	if (argc < 5 || strcmp(argv[1], "--to") != 0)
		return usage();
	int sctp = strncmp(argv[2], "sctp:", 5) == 0;
	if ((sctp ? nvm_link_sctpt_addr(argv[2], &to) : nvm_link_udp_addr(argv[2], &to)) != 0)
		return usage();
	const char *cmd = argv[3];
	uint32_t id = (uint32_t)strtoul(argv[4], NULL, 0);
	struct nvm_link *link;
	/* A VM on loopback is reached from loopback; any other from the interfaces that are up. */
	int rc = sctp ? nvm_link_sctpt_open(to.b[0] == 127 ? "127.0.0.1" : NULL, 0, &link)
		      : nvm_link_udp_open(0, &link);
	if (rc) {
		fprintf(stderr, "nvmctl: cannot open the %s link: %s\n", sctp ? "SCTP" : "loopback UDP",
			strerror(-rc));
		return 1;
	}
	struct nvm_mgmt *h = nvm_mgmt_remote(link, &to);
	if (!h)
		return 1;
	if ((strcmp(cmd, "load") == 0 || strcmp(cmd, "replace") == 0) && argc == 6) {
		size_t len;
		uint8_t *img = image(argv[5], &len);
		rc = !img ? -EINVAL
			  : cmd[0] == 'l' ? nvm_mgmt_load(h, id, img, len) : nvm_mgmt_replace(h, id, img, len);
		free(img);
		if (!img) {
			nvm_mgmt_close(h);
			nvm_link_close(link);
			return 1;
		}
	} else if (strcmp(cmd, "run") == 0 && argc == 5) {
		rc = nvm_mgmt_run(h, id);
	} else if (strcmp(cmd, "unload") == 0 && argc == 5) {
		rc = nvm_mgmt_unload(h, id);
	} else if (strcmp(cmd, "send") == 0 && argc >= 6 && argc - 6 <= 1024) {
		int64_t words[1024];
		int n = argc - 6;
		for (int i = 0; i < n; i++)
			words[i] = strtoll(argv[6 + i], NULL, 0);
		rc = nvm_mgmt_send(h, id, (uint16_t)strtoul(argv[5], NULL, 0), words, (size_t)n * 8);
	} else {
		nvm_mgmt_close(h);
		nvm_link_close(link);
		return usage();
	}
	if (rc)
		fprintf(stderr, "nvmctl: %s %u: %s\n", cmd, id, h->err[0] ? h->err : strerror(-rc));
	nvm_mgmt_close(h);
	nvm_link_close(link);
	return rc ? 1 : 0;
}
