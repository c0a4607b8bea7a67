/* btl sctp proc: business cards in and out of the modex. */
#include "btl_sctp_proc.h"

#include <stdlib.h>
#include <string.h>

#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"

static void proc_construct(mca_btl_sctp_proc_t *p)
{
	p->proc = NULL;
	p->card = NULL;
	p->name[0] = '\0';
}

static void proc_destruct(mca_btl_sctp_proc_t *p)
{
	free(p->card);
	if (NULL != p->proc)
		OBJ_RELEASE(p->proc);
}

OBJ_CLASS_INSTANCE(mca_btl_sctp_proc_t, opal_object_t, proc_construct, proc_destruct);

int mca_btl_sctp_proc_publish(void)
{
	int rc;
	size_t len = strlen(mca_btl_sctp_component.card) + 1;

	OPAL_MODEX_SEND(rc, OPAL_PMIX_GLOBAL, &mca_btl_sctp_component.super.btl_version,
			mca_btl_sctp_component.card, len);
	return rc;
}

int mca_btl_sctp_proc_create(opal_proc_t *proc, mca_btl_sctp_proc_t **out)
{
	mca_btl_sctp_proc_t *p;
	uint8_t *data = NULL;
	size_t size = 0;
	int rc;

	*out = NULL;
	OPAL_MODEX_RECV(rc, &mca_btl_sctp_component.super.btl_version, &proc->proc_name, &data,
			&size);
	if (OPAL_SUCCESS != rc)
		return rc;
	if (0 == size || size > SCTPT_CARD_MAX || '\0' != data[size - 1]) {
		opal_output(0, "btl sctp: the business card of %s on %s is malformed (%zu bytes)",
			    OPAL_NAME_PRINT(proc->proc_name),
			    opal_get_proc_hostname(proc), size);
		free(data);
		return OPAL_ERR_BAD_PARAM;
	}
	p = OBJ_NEW(mca_btl_sctp_proc_t);
	if (NULL == p) {
		free(data);
		return OPAL_ERR_OUT_OF_RESOURCE;
	}
	OBJ_RETAIN(proc);
	p->proc = proc;
	p->card = (char *)data;
	snprintf(p->name, sizeof(p->name), "%s on %s", OPAL_NAME_PRINT(proc->proc_name),
		 opal_get_proc_hostname(proc));
	*out = p;
	return OPAL_SUCCESS;
}

/* The number of processes of our job as the runtime tells it (0: it does not). */
static uint32_t sctp_job_size(void)
{
	opal_process_name_t job = {.jobid = OPAL_PROC_MY_NAME.jobid, .vpid = OPAL_VPID_WILDCARD};
	uint32_t nprocs = 0, *n = &nprocs;
	int rc;

	OPAL_MODEX_RECV_VALUE(rc, OPAL_PMIX_JOB_SIZE, &job, &n, OPAL_UINT32);
	if (OPAL_SUCCESS != rc)
		OPAL_MODEX_RECV_VALUE(rc, OPAL_PMIX_UNIV_SIZE, &OPAL_PROC_MY_NAME, &n, OPAL_UINT32);
	return OPAL_SUCCESS == rc ? nprocs : 0;
}

bool mca_btl_sctp_proc_job_on_this_node(void)
{
	uint32_t nprocs = sctp_job_size();

	return nprocs > 0 && nprocs == (uint32_t)opal_process_info.num_local_peers + 1;
}

/* Gives the core the card name published; the core's peer, or -1 (no card: it runs without
 * btl sctp, or the card is unusable). */
static sctpt_peer_t sctp_add_card(const opal_process_name_t *name)
{
	sctpt_peer_t peer = -1;
	uint8_t *data = NULL;
	size_t size = 0;
	int rc;

	OPAL_MODEX_RECV(rc, &mca_btl_sctp_component.super.btl_version, name, &data, &size);
	if (OPAL_SUCCESS != rc)
		return -1;
	if (size > 0 && size <= SCTPT_CARD_MAX && '\0' == data[size - 1])
		peer = sctpt_peer_add(mca_btl_sctp_component.ep, (const char *)data);
	if (peer < 0)
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: cannot add the card of %s: %s", OPAL_NAME_PRINT(*name),
				    sctpt_last_error());
	free(data);
	return peer < 0 ? -1 : peer;
}

/* Registers every process of our job with the core, so that it accepts their associations:
 * Open MPI adds processes on other nodes to the BTLs only when it first sends to them
 * (mpi_add_procs_cutoff), and the core refuses an association from a card it was never
 * given -- a rank receiving from such a peer before sending to it would lose the message.
 * The peers are kept by rank for the RDMA queue pairs, which have the same problem. */
void mca_btl_sctp_proc_add_job(void)
{
	mca_btl_sctp_component_t *c = &mca_btl_sctp_component;
	uint32_t nprocs = sctp_job_size(), added = 0;
	sctpt_peer_t *peers;

	if (0 == nprocs) {
		opal_output_verbose(10, opal_btl_base_framework.framework_output,
				    "btl sctp: the job's size is unknown: peers on other nodes must "
				    "send to us after we sent to them");
		return;
	}
	peers = malloc(nprocs * sizeof(*peers)); /* NULL: QPs only as add_procs makes them */
	for (uint32_t vpid = 0; vpid < nprocs; vpid++) {
		opal_process_name_t name = {.jobid = OPAL_PROC_MY_NAME.jobid, .vpid = vpid};
		sctpt_peer_t peer = vpid != OPAL_PROC_MY_NAME.vpid ? sctp_add_card(&name) : -1;

		added += peer >= 0;
		if (NULL != peers)
			peers[vpid] = peer;
	}
	OPAL_THREAD_LOCK(&c->qp_lock);
	c->job_peers = peers;
	c->job_size = nprocs;
	OPAL_THREAD_UNLOCK(&c->qp_lock);
	opal_output_verbose(10, opal_btl_base_framework.framework_output,
			    "btl sctp: the cards of %u of the job's %u processes given to the core",
			    added, nprocs);
}
