/*
 * bench_iw_rdma: RDMA Write and Read bandwidth of the iWARP-over-SCTP RNIC on loopback, with
 * the caller driving progress and with the RNIC's progress thread, for a few segment sizes;
 * the SCTP core streaming the same bytes as plain messages is the baseline.
 *
 *   write: rank 0 posts COUNT Writes of SIZE then a Send; rank 1 answers the Send (which it
 *          receives only after every byte is placed); time to the answer.
 *   read:  rank 0 posts COUNT Reads of SIZE; time to the last completion.
 *   core:  rank 0 sends COUNT messages of SIZE on an ordinary context; rank 1 answers the last.
 * Usage: bench_iw_rdma [SIZE_BYTES [COUNT]] (default 4 MiB x 16). Bounded by alarm().
 */
#include "harness.h"
#include "iw/iw_verbs.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CTX_CTL 1
#define CTX_BULK 7

static struct iw_rnic *rn;
static volatile int bulk_got;
static uint32_t ctl_ring[16];
static unsigned ctl_in, ctl_out; /* written by the receiving thread, read by the main one */
static size_t size = 4u << 20;
static int count = 16;
static size_t seg;
static int threaded;

/* The contexts the RNIC does not claim (it registers its own handler in iw_open). */
static void on_complete(void *arg, const struct sctpt_cqe *c)
{
	(void)arg;
	if (c->kind != SCTPT_CQE_RECV || c->status < 0)
		return;
	if (c->context == CTX_CTL && c->len == 4) {
		memcpy(&ctl_ring[ctl_in % 16], c->data, 4);
		__atomic_add_fetch(&ctl_in, 1, __ATOMIC_RELEASE);
	} else if (c->context == CTX_BULK) {
		__atomic_add_fetch(&bulk_got, 1, __ATOMIC_ACQ_REL);
	}
}

static void pump(struct rank_ctx *rc)
{
	if (threaded) {
		usleep(50);
		return;
	}
	sctpt_wait(rc->ep, 1);
	if (rn)
		iw_progress(rn);
}

static void ctl_send(struct rank_ctx *rc, uint32_t v)
{
	struct iovec iov = {&v, 4};
	CHECK(sctpt_send(rc->ep, rc->peer[1 - rc->rank], CTX_CTL, 0, 0, &iov, 1, NULL) >= 0, "ctl");
	while (sctpt_pending(rc->ep, -1))
		pump(rc);
}

static uint32_t ctl_recv(struct rank_ctx *rc)
{
	while (__atomic_load_n(&ctl_in, __ATOMIC_ACQUIRE) == ctl_out)
		pump(rc);
	return ctl_ring[ctl_out++ % 16];
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void wait_wc(struct rank_ctx *rc, struct iw_cq *cq, enum iw_wc_opcode op)
{
	struct iw_wc wc;
	while (iw_poll_cq(cq, 1, &wc) == 0)
		pump(rc);
	CHECK(wc.status == IW_WC_SUCCESS && wc.opcode == op, "wc status %d op %d", wc.status,
	      wc.opcode);
}

static int body(struct rank_ctx *rc)
{
	struct iw_rnic_attr a;
	struct iw_pd *pd;
	struct iw_cq *cq;
	struct iw_qp *qp;
	uint32_t stag, note_stag, qpn;
	static uint32_t note;
	unsigned char *buf = malloc(size);
	CHECK(buf, "malloc");
	memset(buf, 1, size);
	iw_rnic_attr_init(&a);
	a.seg_size = seg;
	a.progress_thread = threaded;
	CHECK(iw_open(rc->ep, &a, &rn) == 0 && iw_pd_alloc(rn, &pd) == 0 &&
	      iw_cq_create(rn, 0, &cq) == 0, "open");
	struct iw_qp_attr qa = {.send_cq = cq, .recv_cq = cq};
	CHECK(iw_qp_create(pd, &qa, &qp) == 0, "qp");
	CHECK(iw_reg_mr(pd, buf, size, 0x1f, &stag) == 0 &&
	      iw_reg_mr(pd, &note, 4, IW_ACCESS_LOCAL_WRITE | IW_ACCESS_LOCAL_READ, &note_stag) == 0,
	      "reg");
	struct iw_sge nsge = {&note, 4, note_stag};
	struct iw_recv_wr rwr = {.sg_list = &nsge, .num_sge = 1};
	struct iw_send_wr swr = {.opcode = IW_WR_SEND, .sg_list = &nsge, .num_sge = 1};
	CHECK(iw_post_recv(qp, &rwr) == 0, "post recv");
	/* exchange QP numbers, STags and addresses (rank 1's buffer is the remote one) */
	ctl_send(rc, iw_qp_num(qp));
	qpn = ctl_recv(rc);
	CHECK(iw_qp_connect(qp, rc->peer[1 - rc->rank], qpn) == 0, "connect");
	harness_barrier(rc);
	uint64_t raddr = (uint64_t)(uintptr_t)buf;
	uint32_t rstag = stag;
	ctl_send(rc, (uint32_t)raddr);
	uint32_t lo = ctl_recv(rc);
	ctl_send(rc, (uint32_t)(raddr >> 32));
	raddr = (uint64_t)ctl_recv(rc) << 32 | lo;
	ctl_send(rc, stag);
	rstag = ctl_recv(rc);
	harness_barrier(rc);
	double bw[3];
	struct iw_sge sge = {buf, (uint32_t)size, stag};
	if (rc->rank == 0) {
		double t0 = now();
		for (int i = 0; i < count; i++) {
			struct iw_send_wr wr = {.opcode = IW_WR_WRITE, .sg_list = &sge, .num_sge = 1,
						.remote_stag = rstag, .remote_to = raddr};
			CHECK(iw_post_send(qp, &wr) == 0, "post write: %s", iw_last_error());
		}
		CHECK(iw_post_send(qp, &swr) == 0, "post send");
		for (int i = 0; i < count + 1; i++)
			wait_wc(rc, cq, i < count ? IW_WC_WRITE : IW_WC_SEND);
		wait_wc(rc, cq, IW_WC_RECV);
		bw[0] = (double)size * count / (now() - t0) / 1e6;
		t0 = now();
		for (int i = 0; i < count; i++) {
			struct iw_send_wr wr = {.opcode = IW_WR_READ, .sg_list = &sge, .num_sge = 1,
						.remote_stag = rstag, .remote_to = raddr};
			CHECK(iw_post_send(qp, &wr) == 0, "post read: %s", iw_last_error());
		}
		for (int i = 0; i < count; i++)
			wait_wc(rc, cq, IW_WC_READ);
		bw[1] = (double)size * count / (now() - t0) / 1e6;
		t0 = now();
		struct iovec iov = {buf, size};
		for (int i = 0; i < count; i++)
			CHECK(sctpt_send(rc->ep, rc->peer[1], CTX_BULK, i, 0, &iov, 1, NULL) >= 0, "send");
		ctl_recv(rc);
		bw[2] = (double)size * count / (now() - t0) / 1e6;
		printf("%-16s seg %7zu  size %9zu x %3d   write %8.1f MB/s   read %8.1f MB/s   core "
		       "messages %8.1f MB/s\n", threaded ? "progress thread" : "caller progress",
		       seg, size, count, bw[0], bw[1], bw[2]);
	} else {
		wait_wc(rc, cq, IW_WC_RECV);
		CHECK(iw_post_send(qp, &swr) == 0, "post send");
		wait_wc(rc, cq, IW_WC_SEND);
		while (__atomic_load_n(&bulk_got, __ATOMIC_ACQUIRE) < count)
			pump(rc);
		ctl_send(rc, 1);
	}
	harness_barrier(rc);
	iw_close(rn);
	rn = NULL;
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t segs[] = {16 * 1024, 60 * 1024, 256 * 1024};
	struct sctpt_config cfg;
	if (argc > 1)
		size = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		count = atoi(argv[2]);
	sctpt_config_init(&cfg);
	cfg.addrs = "127.0.0.1";
	cfg.handler.complete = on_complete;
	for (threaded = 0; threaded < 2; threaded++)
		for (size_t i = 0; i < sizeof(segs) / sizeof(segs[0]); i++) {
			seg = segs[i];
			bulk_got = 0;
			if (harness_run(2, 120, &cfg, body) != 0)
				return 1;
		}
	return 0;
}
