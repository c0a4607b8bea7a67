/*
 * btl sctp proc: a peer process as the BTL knows it -- its opal_proc_t and the business card
 * it published through the modex (the core's "sctpt1 <udp port> <sctp port> <ip> ..." string).
 */
#ifndef MCA_BTL_SCTP_PROC_H
#define MCA_BTL_SCTP_PROC_H

#include "btl_sctp.h"
#include "opal/util/proc.h"

BEGIN_C_DECLS

struct mca_btl_sctp_proc_t {
	opal_object_t super;
	opal_proc_t *proc;    /* retained */
	char *card;           /* NUL-terminated copy of the modex value */
	char name[128];       /* "[[jobid,vpid]] on <host>" for messages */
};
typedef struct mca_btl_sctp_proc_t mca_btl_sctp_proc_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_proc_t);

/* Looks up proc's card in the modex. OPAL_ERR_NOT_FOUND: the peer runs no sctp BTL. */
int mca_btl_sctp_proc_create(opal_proc_t *proc, mca_btl_sctp_proc_t **out);
/* Publishes our card (from mca_btl_sctp_component.card) through the modex. */
int mca_btl_sctp_proc_publish(void);
/* Every process of the job runs on this node (the job's size from the runtime; false when it
 * does not say). */
bool mca_btl_sctp_proc_job_on_this_node(void);
/* Gives the core the card of every process of our job (their associations are accepted from
 * then on, whether or not Open MPI added them to the BTL yet). */
void mca_btl_sctp_proc_add_job(void);

END_C_DECLS
#endif /* MCA_BTL_SCTP_PROC_H */
