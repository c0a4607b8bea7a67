/*
 * bench_nvm - NIC VM benchmarks, computed goto against switch dispatch in the same run:
 *   1. ns per instruction of a loop-heavy handler (loop.pdl, trigger 1)
 *   2. trigger dispatch cost, message in to handler start and back (empty handler):
 *      direct (nvm_vm_dispatch) and through the queue (nvm_vm_post + nvm_vm_progress)
 *   3. round trips on the local transport (UDP loopback): mcp2mcp (PING/PONG programs
 *      on two VMs, timed by CLOCK on the VM), app2app (host posts, program sends,
 *      the answer is DELIVERed into a host segment and FLAGged, host busy-polls),
 *      and a bare link round trip without any VM for reference.
 * Usage: bench_nvm [pdl-dir] [--quick]      every loop is bounded in count and time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvm/nvm_link.h"
#include "nvm/nvm_seg.h"
#include "nvm/nvm_vm.h"
#include "nvm/pdl_emit.h"

#ifndef NVM_PDL_DIR
#define NVM_PDL_DIR "test/nvm/pdl"
#endif

static const char *pdl_dir = NVM_PDL_DIR;
static int quick;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: the CPU-bound measurements (1, 2) use it, so time the
 * thread spends preempted on a busy machine does not count. */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct nvm_module *compile(const char *name)
{
	char path[1024], err[512];
	snprintf(path, sizeof(path), "%s/%s", pdl_dir, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "bench_nvm: cannot open %s (give the pdl directory as argument)\n", path);
		exit(1);
	}
	static char src[1 << 16];
	size_t n = fread(src, 1, sizeof(src), f);
	fclose(f);
	struct nvm_module *m;
	if (pdl_compile(path, src, n, &m, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return m;
}

static void load(struct nvm_vm *vm, uint32_t id, struct nvm_module *m)
{
	char err[256];
	if (nvm_vm_load(vm, id, m, err, sizeof(err)) != 0 || nvm_vm_run(vm, id) != 0) {
		fprintf(stderr, "bench_nvm: load %u: %s\n", id, err);
		exit(1);
	}
}

static const char *mode_name(unsigned mode)
{
	return mode == NVM_DISPATCH_GOTO ? "computed goto" : "switch";
}

/* 1. Loop-heavy handler: best of 5 runs of n iterations. */
static double ns_per_instruction(unsigned mode, uint64_t *instr_out)
{
	struct nvm_vm *vm = nvm_vm_new(&(struct nvm_vm_config){ .dispatch = mode,
							     .budget = 1ull << 40 });
	struct nvm_module *m = compile("loop.pdl");
	load(vm, 1, m);
	int64_t n = quick ? 200000 : 5000000;
	double best = 1e9;
	for (int r = 0; r < 5; r++) {
		struct nvm_prog_stats a, b;
		nvm_vm_prog_stats(vm, 1, &a);
		double t0 = cpu_now();
		nvm_vm_dispatch(vm, 1, 1, &n, 8);
		double t1 = cpu_now();
		nvm_vm_prog_stats(vm, 1, &b);
		uint64_t instr = b.instructions - a.instructions;
		double ns = (t1 - t0) * 1e9 / (double)instr;
		if (ns < best)
			best = ns;
		*instr_out = instr;
	}
	nvm_module_free(m);
	nvm_vm_free(vm);
	return best;
}

/* 2. Empty handler: ns per message, direct and queued. */
static void dispatch_cost(unsigned mode, double *direct, double *queued)
{
	struct nvm_vm *vm = nvm_vm_new(&(struct nvm_vm_config){ .dispatch = mode, .queue_len = 256 });
	struct nvm_module *m = compile("loop.pdl");
	load(vm, 1, m);
	int64_t payload[8] = { 0 };
	long n = quick ? 20000 : 1000000;
	double best_d = 1e9, best_q = 1e9;
	for (int r = 0; r < 3; r++) {
		double t0 = cpu_now();
		for (long i = 0; i < n; i++)
			nvm_vm_dispatch(vm, 1, 2, payload, sizeof(payload));
		double t1 = cpu_now();
		for (long i = 0; i < n; i += 128) {
			for (int k = 0; k < 128; k++)
				nvm_vm_post(vm, 1, 2, payload, sizeof(payload));
			nvm_vm_progress(vm, 128);
		}
		double t2 = cpu_now();
		long nq = ((n + 127) / 128) * 128;
		if ((t1 - t0) * 1e9 / n < best_d)
			best_d = (t1 - t0) * 1e9 / n;
		if ((t2 - t1) * 1e9 / nq < best_q)
			best_q = (t2 - t1) * 1e9 / nq;
	}
	*direct = best_d;
	*queued = best_q;
	nvm_module_free(m);
	nvm_vm_free(vm);
}

/* 2b. The paper's internal-latency program: delivertest's trigger 10 (DELIVER 64
 * bytes into host segment 2, AWAIT), ns per message through nvm_vm_dispatch. */
static double deliver_cost(unsigned mode)
{
	struct nvm_vm *vm = nvm_vm_new(&(struct nvm_vm_config){ .dispatch = mode });
	struct nvm_seg *seg = nvm_seg_new(2, 64, NVM_SEG_W);
	nvm_vm_seg_attach(vm, seg);
	struct nvm_module *m = compile("delivertest.pdl");
	load(vm, 1, m);
	long n = quick ? 20000 : 1000000;
	double best = 1e9;
	for (int r = 0; r < 3; r++) {
		double t0 = cpu_now();
		for (long i = 0; i < n; i++)
			nvm_vm_dispatch(vm, 1, 10, NULL, 0);
		double ns = (cpu_now() - t0) * 1e9 / n;
		if (ns < best)
			best = ns;
	}
	nvm_module_free(m);
	nvm_vm_free(vm);
	nvm_seg_put(seg);
	return best;
}

static const uint8_t paper_addr[] = { 0, 0, 0, 96, 221, 127, 255, 140 };

struct pair {
	struct nvm_link *la, *lb;
	struct nvm_vm *a, *b;
};

static void pair_open(struct pair *p, unsigned mode)
{
	if (nvm_link_udp_open(0, &p->la) || nvm_link_udp_open(0, &p->lb)) {
		fprintf(stderr, "bench_nvm: no loopback UDP\n");
		exit(77);
	}
	p->a = nvm_vm_new(&(struct nvm_vm_config){ .dispatch = mode, .link = p->la });
	p->b = nvm_vm_new(&(struct nvm_vm_config){ .dispatch = mode, .link = p->lb });
	nvm_vm_map_addr(p->a, paper_addr, sizeof(paper_addr), &p->lb->self);
}

static void pair_close(struct pair *p)
{
	nvm_vm_free(p->a);
	nvm_vm_free(p->b);
	nvm_link_close(p->la);
	nvm_link_close(p->lb);
}

/* 3a. mcp2mcp: PING (as printed in the paper) against PONG; mean of the CLOCK
 * round trips over `runs` runs of 100 exchanges, in microseconds. */
static double mcp2mcp(unsigned mode, int runs)
{
	struct pair p;
	pair_open(&p, mode);
	struct nvm_module *ping = compile("ping.pdl"), *pong = compile("pong.pdl");
	load(p.b, 415, pong);
	double sum = 0;
	long count = 0;
	for (int r = 0; r < runs; r++) {
		uint32_t id = 100 + r;
		load(p.a, id, ping);
		struct nvm_prog_stats st = { 0 };
		double end = now() + 10;
		for (long i = 0; i < 50000000 && now() < end; i++) {
			nvm_vm_progress(p.b, 16);
			nvm_vm_progress(p.a, 16);
			nvm_vm_prog_stats(p.a, id, &st);
			if (st.state == NVM_ST_STOPPED)
				break;
		}
		int64_t v[200];
		size_t n = nvm_vm_display_read(p.a, v, NULL, 200);
		for (size_t k = 0; k + 1 < n; k += 2, count++)
			sum += (double)(v[k + 1] - v[k]);
		nvm_vm_unload(p.a, id);
	}
	nvm_module_free(ping);
	nvm_module_free(pong);
	pair_close(&p);
	return count ? sum / count / 1000 : -1;
}

/* 3b. app2app: the VMs run in a progress thread; the host posts and busy-polls
 * the segment flag. */
static atomic_int stop_progress;

static void *progress_thread(void *arg)
{
	struct pair *p = arg;
	double end = now() + 60;
	while (!atomic_load_explicit(&stop_progress, memory_order_relaxed) && now() < end) {
		nvm_vm_progress(p->b, 16);
		nvm_vm_progress(p->a, 16);
	}
	return NULL;
}

/* Host-timed exchanges: post to app2app trigger 10, wait for the segment flag.
 * With threaded set the VMs progress in their own thread (the paper's NIC);
 * otherwise the waiting host drives progress itself, as our transports will. */
static double host_exchanges(struct pair *p, struct nvm_seg *seg, int exchanges, int threaded)
{
	pthread_t th;
	if (threaded) {
		atomic_store(&stop_progress, 0);
		pthread_create(&th, NULL, progress_thread, p);
	}
	double sum = 0;
	int done = 0;
	for (int i = 0; i < exchanges; i++) {
		double t0 = now(), limit = t0 + 1;
		nvm_vm_post(p->a, 1, 10, NULL, 0);
		while (!nvm_seg_flagged(seg) && now() < limit) {
			if (!threaded) {
				nvm_vm_progress(p->b, 16);
				nvm_vm_progress(p->a, 16);
			}
		}
		double t1 = now();
		if (!nvm_seg_flagged(seg))
			break;
		nvm_seg_clear_flag(seg);
		sum += t1 - t0;
		done++;
	}
	if (threaded) {
		atomic_store(&stop_progress, 1);
		pthread_join(th, NULL);
	}
	return done ? sum / done * 1e6 : -1;
}

static double app2app(unsigned mode, int exchanges, double *threaded, double *link_only)
{
	struct pair p;
	pair_open(&p, mode);
	struct nvm_seg *seg = nvm_seg_new(1, 64, NVM_SEG_R | NVM_SEG_W);
	nvm_vm_seg_attach(p.a, seg);
	struct nvm_module *app = compile("app2app.pdl"), *pong = compile("pong11.pdl");
	load(p.a, 1, app);
	load(p.b, 415, pong);
	double same = host_exchanges(&p, seg, exchanges, 0);
	*threaded = host_exchanges(&p, seg, exchanges, 1);
	nvm_module_free(app);
	nvm_module_free(pong);
	/* Bare link round trip, one thread, same sockets, no VM. */
	uint8_t buf[128] = { 0 }, in[256];
	struct nvm_link_addr from;
	double lsum = 0;
	int ldone = 0;
	for (int i = 0; i < exchanges; i++) {
		double t0 = now(), limit = t0 + 1;
		nvm_link_send(p.la, &p.lb->self, buf, 80);
		while (nvm_link_poll(p.lb, in, sizeof(in), &from, 0) <= 0 && now() < limit)
			;
		nvm_link_send(p.lb, &p.la->self, buf, 80);
		while (nvm_link_poll(p.la, in, sizeof(in), &from, 0) <= 0 && now() < limit)
			;
		double t1 = now();
		if (t1 < limit) {
			lsum += t1 - t0;
			ldone++;
		}
	}
	*link_only = ldone ? lsum / ldone * 1e6 : -1;
	nvm_seg_put(seg);
	pair_close(&p);
	return same;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else
			pdl_dir = argv[i];
	}
	unsigned modes[2] = { NVM_DISPATCH_GOTO, NVM_DISPATCH_SWITCH };
	printf("NIC VM benchmark%s (computed goto %s in this build)\n\n", quick ? " (quick)" : "",
	       nvm_have_goto() ? "available" : "NOT available: both rows are switch");
	printf("%-14s %9s %11s %10s %11s %11s %11s %11s %8s\n", "dispatch", "ns/instr", "trigger ns",
	       "queued ns", "deliver ns", "mcp2mcp us", "app2app us", "(thread) us", "link us");
	for (int k = 0; k < 2; k++) {
		uint64_t instr;
		double nsi = ns_per_instruction(modes[k], &instr);
		double d, q;
		dispatch_cost(modes[k], &d, &q);
		double dl = deliver_cost(modes[k]);
		double m = mcp2mcp(modes[k], quick ? 2 : 10);
		double link, thr;
		double a = app2app(modes[k], quick ? 200 : 2000, &thr, &link);
		printf("%-14s %9.2f %11.1f %10.1f %11.1f %11.1f %11.1f %11.1f %8.1f\n",
		       mode_name(modes[k]), nsi, d, q, dl, m, a, thr, link);
		fflush(stdout);
	}
	printf("\nns/instr, trigger, queued, deliver: thread CPU time (preemption not counted).\n"
	       "ns/instr: loop.pdl trigger 1 (13 instructions per iteration), best of 5.\n"
	       "trigger ns: empty MESSAGE block via nvm_vm_dispatch (64-byte payload), incl. return.\n"
	       "queued ns: same via nvm_vm_post + nvm_vm_progress (batches of 128).\n"
	       "deliver ns: the paper's delivertest, trigger 10 (DELIVER 64 bytes to a segment, AWAIT).\n"
	       "mcp2mcp: paper's PING vs PONG on two VMs over loopback UDP, CLOCK-timed on the VM.\n"
	       "app2app: host post -> VM SEND -> peer VM REPLY -> DELIVER+FLAG -> host sees flag;\n"
	       "  the waiting host drives progress (as the transports will); (thread): the VMs\n"
	       "  progress in their own thread, the host only busy-polls the flag (paper's setup).\n"
	       "link: bare loopback UDP round trip between the same two sockets, no VM.\n");
	return 0;
}
