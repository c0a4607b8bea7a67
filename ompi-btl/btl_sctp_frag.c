/* btl sctp frag: free-list classes, allocation by size, and the stream key of a message. */
#include "btl_sctp_frag.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/output.h"

static void frag_common_init(mca_btl_sctp_frag_t *frag, opal_free_list_t *list, size_t size)
{
	frag->my_list = list;
	frag->size = size;
	frag->buf = size ? (unsigned char *)(frag + 1) : NULL;
	frag->buf_malloced = false;
	frag->endpoint = NULL;
}

static void frag_eager_constructor(mca_btl_sctp_frag_t *frag)
{
	frag_common_init(frag, &mca_btl_sctp_component.frag_eager,
			 mca_btl_sctp_component.eager_buf);
}

static void frag_max_constructor(mca_btl_sctp_frag_t *frag)
{
	frag_common_init(frag, &mca_btl_sctp_component.frag_max,
			 mca_btl_sctp_module.super.btl_max_send_size);
}

static void frag_user_constructor(mca_btl_sctp_frag_t *frag)
{
	frag_common_init(frag, &mca_btl_sctp_component.frag_user, 0);
}

OBJ_CLASS_INSTANCE(mca_btl_sctp_frag_t, mca_btl_base_descriptor_t, NULL, NULL);
OBJ_CLASS_INSTANCE(mca_btl_sctp_frag_eager_t, mca_btl_base_descriptor_t, frag_eager_constructor,
		   NULL);
OBJ_CLASS_INSTANCE(mca_btl_sctp_frag_max_t, mca_btl_base_descriptor_t, frag_max_constructor,
		   NULL);
OBJ_CLASS_INSTANCE(mca_btl_sctp_frag_user_t, mca_btl_base_descriptor_t, frag_user_constructor,
		   NULL);

static void frag_reset(mca_btl_sctp_frag_t *frag)
{
	frag->base.des_segments = frag->segments;
	frag->base.des_segment_count = 1;
	frag->base.des_cbfunc = NULL;
	frag->base.des_cbdata = NULL;
	frag->base.des_context = NULL;
	frag->base.des_flags = 0;
	frag->base.order = MCA_BTL_NO_ORDER;
	frag->segments[0].seg_addr.pval = frag->buf;
	frag->segments[0].seg_len = 0;
	frag->segments[1].seg_addr.pval = NULL;
	frag->segments[1].seg_len = 0;
	frag->endpoint = NULL;
}

mca_btl_sctp_frag_t *mca_btl_sctp_frag_alloc_user(void)
{
	mca_btl_sctp_frag_t *frag =
		(mca_btl_sctp_frag_t *)opal_free_list_get(&mca_btl_sctp_component.frag_user);
	if (OPAL_UNLIKELY(NULL == frag))
		return NULL;
	frag->buf = NULL;
	frag->size = 0;
	frag->buf_malloced = false;
	frag_reset(frag);
	return frag;
}

mca_btl_sctp_frag_t *mca_btl_sctp_frag_alloc(size_t size)
{
	mca_btl_sctp_frag_t *frag;

	if (size <= mca_btl_sctp_component.eager_buf) {
		frag = (mca_btl_sctp_frag_t *)opal_free_list_get(&mca_btl_sctp_component.frag_eager);
	} else if (size <= mca_btl_sctp_module.super.btl_max_send_size) {
		frag = (mca_btl_sctp_frag_t *)opal_free_list_get(&mca_btl_sctp_component.frag_max);
	} else {
		frag = mca_btl_sctp_frag_alloc_user();
		if (OPAL_UNLIKELY(NULL == frag))
			return NULL;
		frag->buf = malloc(size);
		if (NULL == frag->buf) {
			mca_btl_sctp_frag_return(frag);
			return NULL;
		}
		frag->buf_malloced = true;
		frag->size = size;
	}
	if (OPAL_UNLIKELY(NULL == frag))
		return NULL;
	frag_reset(frag);
	return frag;
}

void mca_btl_sctp_frag_return(mca_btl_sctp_frag_t *frag)
{
	if (frag->buf_malloced) {
		free(frag->buf);
		frag->buf = NULL;
		frag->buf_malloced = false;
		frag->size = 0;
	}
	opal_free_list_return(frag->my_list, &frag->base.super);
}

/* ob1's wire header prefix (ompi/mca/pml/ob1/pml_ob1_hdr.h of Open MPI 4.1), read only to
 * pick a stream; mca_btl_sctp_frag_check_ob1 makes sure that is the ob1 we run with. */
#define OB1_HDR_TYPE_MATCH (MCA_BTL_TAG_PML + 1)
#define OB1_HDR_TYPE_RNDV (MCA_BTL_TAG_PML + 2)
#define OB1_HDR_TYPE_RGET (MCA_BTL_TAG_PML + 3)
#define OB1_HDR_TYPE_FRAG (MCA_BTL_TAG_PML + 6)
#define OB1_MATCH_CTX_OFF 2 /* uint16_t hdr_ctx */
#define OB1_MATCH_TAG_OFF 8 /* int32_t hdr_tag */
#define OB1_FRAG_DST_OFF 24 /* opal_ptr_t hdr_dst_req (after offset and src_req) */

static uint32_t mix32(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

/* A hash as a key: 1..INT32_MAX (0 is the control key). */
static int32_t sctp_key(uint32_t h)
{
	return (int32_t)(h % INT32_MAX) + 1;
}

int32_t mca_btl_sctp_frag_stream_key(mca_btl_base_tag_t tag, const void *hdr, size_t len)
{
	const unsigned char *h = hdr;
	uint16_t ctx;
	int32_t mtag;
	uint64_t req;

	if (!mca_btl_sctp_component.stream_per_tag)
		return 0;
	if (!mca_btl_sctp_component.ob1_headers)
		return (int32_t)tag + 1; /* one stream per BTL tag: ob1's message types apart */
	if (NULL == h || len < 2 || tag != h[0])
		return 0;
	switch (h[0]) {
	case OB1_HDR_TYPE_MATCH:
	case OB1_HDR_TYPE_RNDV:
	case OB1_HDR_TYPE_RGET:
		if (len < OB1_MATCH_TAG_OFF + sizeof(mtag))
			return 0;
		memcpy(&ctx, h + OB1_MATCH_CTX_OFF, sizeof(ctx));
		memcpy(&mtag, h + OB1_MATCH_TAG_OFF, sizeof(mtag));
		return sctp_key(mix32(((uint64_t)ctx << 32) | (uint32_t)mtag));
	case OB1_HDR_TYPE_FRAG:
		if (len < OB1_FRAG_DST_OFF + sizeof(req))
			return 0;
		memcpy(&req, h + OB1_FRAG_DST_OFF, sizeof(req));
		return sctp_key(mix32(req));
	default:
		return 0; /* ACK, FIN, ...: short control messages */
	}
}

/* Reads one of the version numbers every component registers ("pml_ob1_major_version"). */
static bool ob1_version(const char *which, int *out)
{
	char name[64];
	const int *value = NULL;
	int idx;

	snprintf(name, sizeof(name), "pml_ob1_%s_version", which);
	if (OPAL_SUCCESS != mca_base_var_find_by_name(name, &idx) ||
	    OPAL_SUCCESS != mca_base_var_get_value(idx, &value, NULL, NULL) || NULL == value)
		return false;
	*out = *value;
	return true;
}

void mca_btl_sctp_frag_check_ob1(void)
{
	int major = -1, minor = -1;
	bool found = ob1_version("major", &major) && ob1_version("minor", &minor);

	mca_btl_sctp_component.ob1_headers =
		found && OMPI_MAJOR_VERSION == major && OMPI_MINOR_VERSION == minor;
	if (!mca_btl_sctp_component.stream_per_tag)
		return;
	if (mca_btl_sctp_component.ob1_headers)
		opal_output_verbose(20, opal_btl_base_framework.framework_output,
				    "btl sctp: streams chosen from ob1 %d.%d headers", major, minor);
	else if (found)
		opal_output_verbose(1, opal_btl_base_framework.framework_output,
				    "btl sctp: ob1's headers are not read: they are known as Open MPI "
				    "%d.%d lays them out and this ob1 is %d.%d; streams are chosen by "
				    "BTL tag only", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, major,
				    minor);
	else
		opal_output_verbose(1, opal_btl_base_framework.framework_output,
				    "btl sctp: ob1's headers are not read: pml ob1 is not loaded, so "
				    "its version cannot be checked; streams are chosen by BTL tag only");
}

/* Stream 1 carries control messages; the others are shared by hash of the key. */
uint16_t mca_btl_sctp_stream_map(void *arg, uint32_t context, int32_t key, uint16_t nstreams)
{
	(void)arg;
	(void)context;
	if (nstreams <= 2 || 0 == key)
		return 1;
	return (uint16_t)(2 + (uint32_t)(key - 1) % (uint32_t)(nstreams - 2));
}
