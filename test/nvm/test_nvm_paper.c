/* test_nvm_paper: the paper's two programs run as printed: PING against a PONG on a
 * second VM over the loopback link, with CLOCK timestamps; delivertest DELIVERing
 * into a host segment. */
#include <time.h>

#include "nvm_test.h"
#include "nvm/nvm_link.h"
#include "nvm/nvm_seg.h"

static const uint8_t paper_addr[] = { 0, 0, 0, 96, 221, 127, 255, 140 };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

TEST(ping_pong_between_two_vms_records_100_round_trips)
{
	struct nvm_link *la, *lb;
	if (nvm_link_udp_open(0, &la) || nvm_link_udp_open(0, &lb)) {
		fprintf(stderr, "no loopback UDP\n");
		exit(77);
	}
	struct nvm_vm *a = nvm_vm_new(&(struct nvm_vm_config){ .link = la });
	struct nvm_vm *b = nvm_vm_new(&(struct nvm_vm_config){ .link = lb });
	CHECK_EQ(nvm_vm_map_addr(a, paper_addr, sizeof(paper_addr), &lb->self), 0);
	char err[256];
	struct nvm_module *pong = compile_file("pong.pdl"), *ping = compile_file("ping.pdl");
	CHECK_EQ(nvm_vm_load(b, 415, pong, err, sizeof(err)), 0);
	CHECK_EQ(nvm_vm_run(b, 415), 0);
	CHECK_EQ(nvm_vm_load(a, 7, ping, err, sizeof(err)), 0);
	CHECK_EQ(nvm_vm_run(a, 7), 0); /* BEGIN sends the first ping */
	struct nvm_prog_stats st = { 0 };
	double end = now_s() + 10;
	for (long i = 0; i < 10000000 && now_s() < end; i++) {
		nvm_vm_progress(b, 16);
		nvm_vm_progress(a, 16);
		nvm_vm_prog_stats(a, 7, &st);
		if (st.state == NVM_ST_STOPPED)
			break;
	}
	CHECK_EQ(st.state, NVM_ST_STOPPED);
	CHECK_EQ(st.activations, 101); /* BEGIN + 100 replies */
	int64_t v[200];
	CHECK_EQ(nvm_vm_display_read(a, v, NULL, 200), 200);
	double sum = 0;
	for (int k = 0; k < 100; k++) {
		CHECK(v[2 * k + 1] > v[2 * k]);                /* timerec > timesent */
		if (k)
			CHECK(v[2 * k] >= v[2 * k - 1]);       /* next send after last receive */
		sum += v[2 * k + 1] - v[2 * k];
	}
	printf("  mcp2mcp mean round trip over loopback UDP: %.1f us\n", sum / 100 / 1000);
	CHECK_EQ(count_events(a, NVM_EV_STOP, NULL), 1);
	nvm_module_free(pong);
	nvm_module_free(ping);
	nvm_vm_free(a);
	nvm_vm_free(b);
	nvm_link_close(la);
	nvm_link_close(lb);
}

TEST(delivertest_delivers_into_host_segment_2)
{
	struct nvm_vm *vm = nvm_vm_new(NULL);
	struct nvm_seg *seg = nvm_seg_new(2, 64, NVM_SEG_W);
	CHECK_EQ(nvm_vm_seg_attach(vm, seg), 0);
	memset(seg->base, 0xee, 64);
	char err[256];
	struct nvm_module *m = compile_file("delivertest.pdl");
	CHECK_EQ(nvm_vm_load(vm, 1, m, err, sizeof(err)), 0);
	CHECK_EQ(nvm_vm_run(vm, 1), 0);
	CHECK_EQ(nvm_vm_post(vm, 1, 10, NULL, 0), 0);
	CHECK_EQ(nvm_vm_progress(vm, 10), 1);
	int64_t w[8];
	memcpy(w, seg->base, 64);
	CHECK_EQ(w[0], 2);
	CHECK_EQ(w[1], 3);
	CHECK_EQ(w[2], 4);
	for (int i = 3; i < 8; i++)
		CHECK_EQ(w[i], 0);
	/* It AWAITs after each delivery and keeps serving. */
	memset(seg->base, 0, 64);
	CHECK_EQ(nvm_vm_post(vm, 1, 10, NULL, 0), 0);
	CHECK_EQ(nvm_vm_progress(vm, 10), 1);
	memcpy(w, seg->base, 64);
	CHECK_EQ(w[1], 3);
	struct nvm_prog_stats st;
	CHECK_EQ(nvm_vm_prog_stats(vm, 1, &st), 0);
	CHECK_EQ(st.state, NVM_ST_WAITING);
	CHECK_EQ(st.activations, 3);
	CHECK_EQ(count_events(vm, NVM_EV_FAULT, NULL), 0);
	nvm_module_free(m);
	nvm_vm_free(vm);
	nvm_seg_put(seg);
}

TEST(delivertest_faults_without_segment_rights)
{
	struct nvm_vm *vm = nvm_vm_new(NULL);
	struct nvm_seg *seg = nvm_seg_new(2, 64, NVM_SEG_R); /* read only for the VM */
	nvm_vm_seg_attach(vm, seg);
	char err[256];
	struct nvm_module *m = compile_file("delivertest.pdl");
	CHECK_EQ(nvm_vm_load(vm, 1, m, err, sizeof(err)), 0);
	nvm_vm_run(vm, 1);
	nvm_vm_post(vm, 1, 10, NULL, 0);
	nvm_vm_progress(vm, 10);
	struct nvm_event ev = { 0 };
	CHECK_EQ(count_events(vm, NVM_EV_FAULT, &ev), 1);
	CHECK_EQ(ev.code, NVM_F_RIGHTS);
	struct nvm_prog_stats st;
	CHECK_EQ(nvm_vm_prog_stats(vm, 1, &st), -ENOENT); /* unloaded */
	nvm_module_free(m);
	nvm_vm_free(vm);
	nvm_seg_put(seg);
}

int main(void)
{
	RUN(ping_pong_between_two_vms_records_100_round_trips);
	RUN(delivertest_delivers_into_host_segment_2);
	RUN(delivertest_faults_without_segment_rights);
	return sm_check_result();
}
