/* test_nvm_mgmt: the management API, local and remote.  The remote VM runs its
 * progress loop in a thread (bounded in time) behind a loopback UDP link; the
 * client drives it through a second link. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "nvm_test.h"
#include "nvm/nvm_mgmt.h"

static const char *acc_src =
	"PROGRAM acc: VAR total; TRIGGERS 1; MESSAGE 1: total = total + FIELD(0); END;";
static const char *acc2_src =
	"PROGRAM acc: VAR total; TRIGGERS 1; MESSAGE 1: total = total + 2 * FIELD(0); END;";

static uint8_t *image(const char *src, size_t *len)
{
	struct nvm_module *m = compile_ok(src);
	uint8_t *img;
	nvm_module_encode(m, &img, len);
	nvm_module_free(m);
	return img;
}

/* The same script against any handle; vm is the VM behind it, for peeking. */
static void script(struct nvm_mgmt *h, struct nvm_vm *vm, void (*settle)(int64_t))
{
	size_t n1, n2;
	uint8_t *a = image(acc_src, &n1), *b = image(acc2_src, &n2);
	int64_t v = 5;
	CHECK_EQ(nvm_mgmt_load(h, 20, a, n1), 0);
	CHECK_EQ(nvm_mgmt_load(h, 20, a, n1), -EEXIST);
	CHECK(strstr(h->err, "already loaded") != NULL);
	CHECK_EQ(nvm_mgmt_run(h, 20), 0);
	CHECK_EQ(nvm_mgmt_send(h, 20, 1, &v, 8), 0);
	settle(5);
	CHECK_EQ(peek1(vm, 20, "total", 0), 5);
	CHECK_EQ(nvm_mgmt_replace(h, 20, b, n2), 0);
	CHECK_EQ(nvm_mgmt_send(h, 20, 1, &v, 8), 0);
	settle(15);
	CHECK_EQ(peek1(vm, 20, "total", 0), 15);
	b[n2 - 1] = 0xee; /* last code byte: RET -> unknown opcode */
	CHECK_EQ(nvm_mgmt_replace(h, 20, b, n2), -EINVAL);
	CHECK(strstr(h->err, "unknown opcode 0xee") != NULL);
	CHECK_EQ(nvm_mgmt_load(h, 21, a, 10), -EINVAL); /* truncated image */
	CHECK_EQ(nvm_mgmt_unload(h, 20), 0);
	CHECK_EQ(nvm_mgmt_unload(h, 20), -ENOENT);
	CHECK_EQ(nvm_mgmt_run(h, 20), -ENOENT);
	free(a);
	free(b);
}

static struct nvm_vm *local_vm;
static void settle_local(int64_t want)
{
	(void)want;
	nvm_vm_progress(local_vm, 100);
}

TEST(local_handle_loads_runs_sends_replaces_unloads)
{
	local_vm = nvm_vm_new(NULL);
	struct nvm_mgmt *h = nvm_mgmt_local(local_vm);
	script(h, local_vm, settle_local);
	nvm_mgmt_close(h);
	nvm_vm_free(local_vm);
}

static atomic_int stop_server;
static struct nvm_vm *remote_vm;

static void *server(void *arg)
{
	(void)arg;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!atomic_load(&stop_server)) {
		nvm_vm_progress(remote_vm, 64);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 30)
			break; /* bounded even if the client dies */
		struct timespec nap = { 0, 50000 };
		nanosleep(&nap, NULL);
	}
	return NULL;
}

static void settle_remote(int64_t want)
{
	/* A SEND is queued when answered; give the server a moment to run it. */
	for (int i = 0; i < 2000; i++) {
		int64_t v;
		struct timespec nap = { 0, 1000000 };
		if (nvm_vm_peek(remote_vm, 20, "total", 0, &v, 1) == 0 && v == want)
			return;
		nanosleep(&nap, NULL);
	}
}

TEST(remote_handle_over_loopback_link)
{
	struct nvm_link *ls, *lc;
	if (nvm_link_udp_open(0, &ls) || nvm_link_udp_open(0, &lc)) {
		fprintf(stderr, "no loopback UDP\n");
		exit(77);
	}
	remote_vm = nvm_vm_new(&(struct nvm_vm_config){ .link = ls });
	pthread_t th;
	atomic_store(&stop_server, 0);
	pthread_create(&th, NULL, server, NULL);
	struct nvm_mgmt *h = nvm_mgmt_remote(lc, &ls->self);
	script(h, remote_vm, settle_remote);
	atomic_store(&stop_server, 1);
	pthread_join(th, NULL);
	/* Nobody answers now: a bounded timeout, not a hang. */
	h->timeout_ms = 200;
	CHECK_EQ(nvm_mgmt_unload(h, 20), -ETIMEDOUT);
	nvm_mgmt_close(h);
	nvm_vm_free(remote_vm);
	nvm_link_close(ls);
	nvm_link_close(lc);
}

TEST(link_refuses_non_loopback_destinations)
{
	struct nvm_link *l;
	if (nvm_link_udp_open(0, &l))
		exit(77);
	struct nvm_link_addr far = { 6, { 192, 0, 2, 1, 0x1f, 0x90 } };
	CHECK_EQ(nvm_link_send(l, &far, "x", 1), -EHOSTUNREACH);
	nvm_link_close(l);
}

int main(void)
{
	RUN(local_handle_loads_runs_sends_replaces_unloads);
	RUN(remote_handle_over_loopback_link);
	RUN(link_refuses_non_loopback_destinations);
	return sm_check_result();
}
