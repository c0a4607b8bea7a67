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
