/*
 * The provider in one process: fi_getinfo with hints that must match (Open MPI's mtl ofi and
 * btl ofi, fi_pingpong, no hints, old API versions) and hints that must not; address vectors
 * (table and map: insert, lookup, remove, straddr, bad names); completion queues in every
 * format, filled far past their size without losing an entry; counters, event queues, and
 * the calls the provider refuses.
 */
#include "ofi_test.h"
#include "common/sm_check.h"

#include <stdlib.h>
#include <string.h>

static struct fi_info *hints(void)
{
	struct fi_info *h = fi_allocinfo();

	h->fabric_attr->prov_name = strdup("sctp");
	return h;
}

/* fi_getinfo on h (freed); returns the answer or NULL. */
static struct fi_info *ask(uint32_t version, struct fi_info *h)
{
	struct fi_info *info = NULL;
	int rc = fi_getinfo(version, NULL, NULL, 0, h, &info);

	fi_freeinfo(h);
	if (rc == 0 && info && strcmp(info->fabric_attr->prov_name, "sctp") != 0) {
		fi_freeinfo(info);
		return NULL;
	}
	return rc == 0 ? info : NULL;
}

TEST(must_match)
{
	struct fi_info *h, *i;

	/* no caps asked for, every registration mode accepted: everything, and of the modes
	 * only those RMA needs (FI_MR_LOCAL and FI_MR_ALLOCATED cleared) */
	h = hints();
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	i = ask(FI_VERSION(1, 17), h);
	REQUIRE(i);
	CHECK((i->caps & (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC)) ==
	      (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC));
	CHECK_EQ(i->ep_attr->type, FI_EP_RDM);
	CHECK_EQ(i->domain_attr->mr_mode, FI_MR_VIRT_ADDR | FI_MR_PROV_KEY);
	CHECK(i->domain_attr->cq_data_size >= 4);
	CHECK(i->tx_attr->msg_order & FI_ORDER_SAS);
	CHECK_EQ(i->mode, 0);
	fi_freeinfo(i);

	/* Open MPI's mtl ofi (API 1.0, then with directed receives and CQ data) */
	h = hints();
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_TAGGED;
	h->tx_attr->msg_order = h->rx_attr->msg_order = FI_ORDER_SAS;
	h->tx_attr->op_flags = h->rx_attr->op_flags = FI_COMPLETION;
	h->domain_attr->av_type = FI_AV_MAP;
	h->domain_attr->resource_mgmt = FI_RM_ENABLED;
	i = ask(FI_VERSION(1, 0), h);
	REQUIRE(i, "mtl ofi's hints");
	CHECK(i->caps & FI_TAGGED);
	CHECK(!(i->caps & FI_RMA), "only what was asked for");
	CHECK_EQ(i->domain_attr->mr_mode, 0);
	CHECK_EQ(i->domain_attr->av_type, FI_AV_MAP);
	CHECK_EQ(i->ep_attr->mem_tag_format >> 60, 0xf, "the leading tag bits are usable");
	fi_freeinfo(i);
	h = hints();
	h->mode = FI_CONTEXT;
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_TAGGED | FI_DIRECTED_RECV;
	h->domain_attr->cq_data_size = 4;
	h->domain_attr->threading = FI_THREAD_SAFE;
	i = ask(FI_VERSION(1, 5), h);
	REQUIRE(i, "mtl ofi's hints with FI_DIRECTED_RECV and CQ data");
	CHECK_EQ(i->domain_attr->threading, FI_THREAD_SAFE);
	fi_freeinfo(i);

	/* Open MPI's btl ofi */
	h = hints();
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_RMA | FI_ATOMIC;
	h->domain_attr->mr_mode = FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR |
				  FI_MR_ENDPOINT;
	h->tx_attr->iov_limit = h->rx_attr->iov_limit = 1;
	h->tx_attr->op_flags = FI_DELIVERY_COMPLETE | FI_COMPLETION;
	i = ask(FI_VERSION(1, 9), h);
	REQUIRE(i, "btl ofi's hints");
	CHECK_EQ(i->domain_attr->mr_mode, FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
	CHECK(i->tx_attr->op_flags & FI_DELIVERY_COMPLETE);
	fi_freeinfo(i);

	/* fi_pingpong (FI_LOCAL_MR mode, nothing else) */
	h = hints();
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG;
	h->mode = FI_CONTEXT | FI_LOCAL_MR;
	CHECK((i = ask(FI_VERSION(1, 17), h)) != NULL, "fi_pingpong's hints");
	fi_freeinfo(i);

	/* no caps and no mr_mode: everything but RMA */
	h = hints();
	i = ask(FI_VERSION(1, 17), h);
	REQUIRE(i);
	fi_freeinfo(i);
	h = hints();
	h->domain_attr->mr_mode = 0;
	h->ep_attr->type = FI_EP_UNSPEC;
	i = ask(FI_VERSION(1, 17), h);
	REQUIRE(i);
	CHECK(!(i->caps & (FI_RMA | FI_ATOMIC)));
	CHECK(i->caps & FI_TAGGED);
	fi_freeinfo(i);

	/* before 1.5: basic registration */
	h = hints();
	h->caps = FI_RMA;
	h->domain_attr->mr_mode = FI_MR_BASIC;
	i = ask(FI_VERSION(1, 4), h);
	REQUIRE(i, "FI_MR_BASIC");
	CHECK_EQ(i->domain_attr->mr_mode, FI_MR_BASIC);
	fi_freeinfo(i);

	/* automatic progress is offered when asked for */
	h = hints();
	h->domain_attr->data_progress = FI_PROGRESS_AUTO;
	h->domain_attr->av_type = FI_AV_TABLE;
	i = ask(FI_VERSION(1, 17), h);
	REQUIRE(i);
	CHECK_EQ(i->domain_attr->data_progress, FI_PROGRESS_AUTO);
	CHECK_EQ(i->domain_attr->av_type, FI_AV_TABLE);
	fi_freeinfo(i);
}

TEST(must_not_match)
{
	struct fi_info *h;
#define NO(what, ...)                                                                         \
	do {                                                                                  \
		h = hints();                                                                  \
		__VA_ARGS__;                                                                  \
		struct fi_info *i_ = ask(FI_VERSION(1, 17), h);                               \
		CHECK(!i_, "%s must not match", what);                                        \
		fi_freeinfo(i_);                                                              \
	} while (0)

	NO("FI_EP_MSG", h->ep_attr->type = FI_EP_MSG);
	NO("FI_EP_DGRAM", h->ep_attr->type = FI_EP_DGRAM);
	NO("RMA without mr_mode bits", h->caps = FI_RMA, h->domain_attr->mr_mode = 0);
	NO("RMA with FI_MR_SCALABLE", h->caps = FI_RMA, h->domain_attr->mr_mode = FI_MR_SCALABLE);
	NO("FI_HMEM", h->caps = FI_MSG | FI_HMEM);
	NO("FI_RMA_EVENT", h->caps = FI_RMA | FI_RMA_EVENT,
	   h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY);
	NO("FI_COLLECTIVE", h->caps = FI_COLLECTIVE);
	NO("FI_NAMED_RX_CTX", h->caps = FI_TAGGED | FI_NAMED_RX_CTX);
	NO("read-after-write order", h->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW);
	NO("strict completion order", h->tx_attr->comp_order = FI_ORDER_STRICT);
	NO("a 1 MiB inject size", h->tx_attr->inject_size = 1 << 20);
	NO("100 iovecs", h->tx_attr->iov_limit = 100);
	NO("sockaddr addresses", h->addr_format = FI_SOCKADDR_IN);
	NO("another domain", h->domain_attr->name = strdup("eth0"));
	NO("16 bytes of CQ data", h->domain_attr->cq_data_size = 16);
	NO("scalable endpoints", h->ep_attr->tx_ctx_cnt = 4);
	NO("shared receive contexts", h->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT);
	NO("an 8 GiB message", h->ep_attr->max_msg_size = 8ULL << 30);
	NO("a foreign destination", h->dest_addr = calloc(1, 16), h->dest_addrlen = 16);
	NO("another provider", free(h->fabric_attr->prov_name),
	   h->fabric_attr->prov_name = strdup("tcp"));
#undef NO
}

static void open_domain(struct fid_fabric **fab, struct fid_domain **dom, struct fi_info **info)
{
	struct fi_info *h = hints();

	h->caps = FI_MSG | FI_TAGGED;
	*info = ask(FI_VERSION(1, 17), h);
	REQUIRE(*info);
	REQUIRE(fi_fabric((*info)->fabric_attr, fab, NULL) == 0);
	REQUIRE(fi_domain(*fab, *info, dom, NULL) == 0);
}

TEST(address_vectors)
{
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fi_info *info;
	struct fid_ep *ep;
	uint8_t name[64], names[3 * 64], back[64];
	size_t len = sizeof(name);
	char str[256];

	open_domain(&fab, &dom, &info);
	REQUIRE(fi_endpoint(dom, info, &ep, NULL) == 0);
	REQUIRE(fi_getname(&ep->fid, name, &len) == 0);
	CHECK(len <= FI_NAME_MAX, "names fit Open MPI's FI_NAME_MAX buffer");
	size_t small = 8;
	CHECK_EQ(fi_getname(&ep->fid, back, &small), -FI_ETOOSMALL);
	CHECK_EQ(small, len);
	for (int t = 0; t < 2; t++) {
		struct fi_av_attr a = {.type = t ? FI_AV_MAP : FI_AV_TABLE};
		struct fid_av *av;
		fi_addr_t fa[3], again;
		REQUIRE(fi_av_open(dom, &a, &av, NULL) == 0);
		for (int k = 0; k < 3; k++)
			memcpy(names + k * len, name, len);
		names[len + 8] ^= 0xff; /* another domain's nonce: another name */
		CHECK_EQ(fi_av_insert(av, names, 3, fa, 0, NULL), 3);
		if (!t) {
			CHECK_EQ(fa[0], 0);
			CHECK_EQ(fa[1], 1);
			CHECK_EQ(fa[2], 2);
		}
		size_t blen = sizeof(back);
		CHECK_EQ(fi_av_lookup(av, fa[1], back, &blen), 0);
		CHECK_EQ(blen, len);
		CHECK(memcmp(back, names + len, len) == 0);
		size_t slen = sizeof(str);
		fi_av_straddr(av, name, str, &slen);
		CHECK(strncmp(str, "fi_sctp://", 10) == 0, "straddr: %s", str);
		CHECK(strlen(str) + 1 == slen);
		CHECK_EQ(fi_av_remove(av, &fa[1], 1, 0), 0);
		blen = sizeof(back);
		CHECK_EQ(fi_av_lookup(av, fa[1], back, &blen), -FI_ENOENT);
		CHECK_EQ(fi_av_remove(av, &fa[1], 1, 0), -FI_EINVAL, "removed once only");
		CHECK_EQ(fi_av_insert(av, names + len, 1, &again, 0, NULL), 1);
		if (t)
			CHECK_EQ(again, fa[1], "a map reuses the removed entry");
		else
			CHECK_EQ(again, 3, "a table never reuses an index");
		/* a name that is not one */
		uint8_t bad[64];
		memset(bad, 0x42, sizeof(bad));
		CHECK_EQ(fi_av_insert(av, bad, 1, &again, 0, NULL), 0);
		CHECK_EQ(again, FI_ADDR_NOTAVAIL);
		CHECK_EQ(fi_av_insertsvc(av, "127.0.0.1", "1234", &again, 0, NULL), -FI_ENOSYS);
		CHECK_EQ(fi_close(&av->fid), 0);
	}
	CHECK_EQ(fi_close(&ep->fid), 0);
	CHECK_EQ(fi_close(&dom->fid), 0);
	CHECK_EQ(fi_close(&fab->fid), 0);
	fi_freeinfo(info);
}

/* Sends to itself fill CQs of every format far past their size; every entry comes out with
 * the fields of its format. */
TEST(cq_formats_and_overflow)
{
	static const enum fi_cq_format fmt[] = {FI_CQ_FORMAT_CONTEXT, FI_CQ_FORMAT_MSG,
						FI_CQ_FORMAT_DATA, FI_CQ_FORMAT_TAGGED};
	static const size_t size[] = {sizeof(struct fi_cq_entry), sizeof(struct fi_cq_msg_entry),
				      sizeof(struct fi_cq_data_entry),
				      sizeof(struct fi_cq_tagged_entry)};
	const int n = 100;

	for (int f = 0; f < 4; f++) {
		struct fi_info *h = hints();
		struct ofi_node nd;
		struct fi_cq_attr ca = {.format = fmt[f], .size = 4};
		struct fid_cq *cq;
		int rx[100];
		h->caps = FI_MSG | FI_TAGGED;
		ofi_node_open(&nd, h, 0);
		/* a second endpoint's receive CQ of this format, 4 entries deep */
		struct fid_ep *ep2;
		fi_addr_t a2;
		uint8_t name2[64];
		size_t len2 = sizeof(name2);
		REQUIRE(fi_cq_open(nd.domain, &ca, &cq, NULL) == 0);
		REQUIRE(fi_endpoint(nd.domain, nd.info, &ep2, NULL) == 0);
		REQUIRE(fi_ep_bind(ep2, &nd.av->fid, 0) == 0);
		REQUIRE(fi_ep_bind(ep2, &cq->fid, FI_RECV | FI_TRANSMIT) == 0);
		REQUIRE(fi_enable(ep2) == 0);
		REQUIRE(fi_getname(&ep2->fid, name2, &len2) == 0);
		REQUIRE(fi_av_insert(nd.av, name2, 1, &a2, 0, NULL) == 1);
		for (int k = 0; k < n; k++) {
			CHECK_EQ(fi_trecv(ep2, &rx[k], sizeof(int), NULL, FI_ADDR_UNSPEC, (uint64_t)k,
					  0, &rx[k]), 0);
			CHECK_EQ(fi_tinjectdata(nd.ep, &k, sizeof(k), 1000 + (uint64_t)k, a2,
						(uint64_t)k), 0);
		}
		uint8_t buf[sizeof(struct fi_cq_tagged_entry) * 8];
		int got = 0, tries = 0;
		while (got < n && tries++ < 10000000) {
			ssize_t r = fi_cq_read(cq, buf, 8);
			if (r == -FI_EAGAIN)
				continue;
			REQUIRE(r > 0, "fi_cq_read: %zd", r);
			for (ssize_t e = 0; e < r; e++) {
				struct fi_cq_tagged_entry t = {0};
				memcpy(&t, buf + (size_t)e * size[f], size[f]);
				int k = (int)((int *)t.op_context - rx);
				CHECK(k >= 0 && k < n);
				if (f >= 1)
					CHECK_EQ(t.len, sizeof(int));
				if (f >= 2)
					CHECK_EQ(t.data, 1000 + (uint64_t)k);
				if (f >= 3)
					CHECK_EQ(t.tag, (uint64_t)k);
				if (k >= 0 && k < n)
					CHECK_EQ(rx[k], k);
			}
			got += (int)r;
		}
		CHECK_EQ(got, n, "format %d: every completion came out of a CQ of 4", f);
		CHECK_EQ(fi_close(&ep2->fid), 0);
		CHECK_EQ(fi_close(&cq->fid), 0);
		ofi_node_close(&nd);
	}
}

TEST(counters_eq_refusals)
{
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fi_info *info;
	struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP};
	struct fid_cntr *c;
	struct fi_eq_attr ea = {.wait_obj = FI_WAIT_UNSPEC};
	struct fid_eq *eq;
	uint32_t ev;
	char data[16];

	open_domain(&fab, &dom, &info);
	REQUIRE(fi_cntr_open(dom, &ca, &c, NULL) == 0);
	CHECK_EQ(fi_cntr_add(c, 5), 0);
	CHECK_EQ(fi_cntr_read(c), 5);
	CHECK_EQ(fi_cntr_set(c, 2), 0);
	CHECK_EQ(fi_cntr_adderr(c, 3), 0);
	CHECK_EQ(fi_cntr_readerr(c), 3);
	CHECK_EQ(fi_cntr_wait(c, 2, 0), 0);
	CHECK_EQ(fi_cntr_wait(c, 9, 10), -FI_ETIMEDOUT);
	CHECK_EQ(fi_close(&c->fid), 0);
	REQUIRE(fi_eq_open(fab, &ea, &eq, NULL) == 0);
	CHECK_EQ(fi_eq_sread(eq, &ev, data, sizeof(data), 10, 0), -FI_EAGAIN);
	CHECK_EQ(fi_eq_write(eq, FI_NOTIFY, "note", 5, 0), 5);
	CHECK_EQ(fi_eq_read(eq, &ev, data, sizeof(data), FI_PEEK), 5);
	CHECK_EQ(fi_eq_sread(eq, &ev, data, sizeof(data), 10, 0), 5);
	CHECK_EQ(ev, FI_NOTIFY);
	CHECK(strcmp(data, "note") == 0);
	CHECK_EQ(fi_eq_read(eq, &ev, data, sizeof(data), 0), -FI_EAGAIN);
	CHECK_EQ(fi_close(&eq->fid), 0);
	/* what the provider does not do, it says so */
	struct fid_pep *pep;
	struct fid_ep *sep;
	struct fi_cq_attr fdcq = {.format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_FD};
	struct fid_cq *cq;
	CHECK_EQ(fi_passive_ep(fab, info, &pep, NULL), -FI_ENOSYS);
	CHECK_EQ(fi_scalable_ep(dom, info, &sep, NULL), -FI_ENOSYS);
	CHECK_EQ(fi_cq_open(dom, &fdcq, &cq, NULL), -FI_ENOSYS);
	CHECK_EQ(fi_close(&dom->fid), 0);
	CHECK_EQ(fi_close(&fab->fid), 0);
	fi_freeinfo(info);
}

int main(void)
{
	RUN(must_match);
	RUN(must_not_match);
	RUN(address_vectors);
	RUN(cq_formats_and_overflow);
	RUN(counters_eq_refusals);
	return sm_check_result();
}
