/*
 * ch3:sctp -- start and end: the endpoint, business cards through PMI, VCs and process
 * groups, and the port functions (dynamic processes are not supported).
 */
#include "ch3_sctp.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Changes when the channel interface (not its implementation) changes. */
char MPIDI_CH3_ABIVersion[] = "1.1";

struct sctpc sctpc = { .rank = -1 };

/*
 * Cards go through the PMI KVS escaped: PMI's wire format ends a value at a space and splits
 * at '='. Everything but [A-Za-z0-9._-] becomes %XX.
 */
static void card_escape(const char *card, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (const unsigned char *c = (const unsigned char *) card; *c && o + 4 < len; c++) {
		if (isalnum(*c) || *c == '.' || *c == '_' || *c == '-') {
			out[o++] = (char) *c;
		} else {
			out[o++] = '%';
			out[o++] = hex[*c >> 4];
			out[o++] = hex[*c & 15];
		}
	}
	out[o] = '\0';
}

static int card_unescape(const char *in, char *card, size_t len)
{
	size_t o = 0;
	for (const char *c = in; *c; c++) {
		unsigned v;
		if (o + 1 >= len)
			return -1;
		if (*c != '%') {
			card[o++] = *c;
			continue;
		}
		if (sscanf(c + 1, "%2x", &v) != 1 || !c[1] || !c[2])
			return -1;
		card[o++] = (char) v;
		c += 2;
	}
	card[o] = '\0';
	return 0;
}

/*
 * Every rank of our process group gets its business card added to the core now, right after
 * all cards are in the KVS: the core accepts packets only from endpoints whose cards it has.
 * Adding a card costs no traffic; the association comes up with the first message (lazy
 * connection), so a job whose ranks talk to few others sets up few associations.
 */
static int add_peers(MPIDI_PG_t * pg, int pg_rank)
{
	int mpi_errno = MPI_SUCCESS;
	int n = MPIDI_PG_Get_size(pg);
	char card[SCTPT_CARD_MAX], esc[3 * SCTPT_CARD_MAX];

	sctpc.peer_vc = MPL_calloc((size_t) n, sizeof(*sctpc.peer_vc), MPL_MEM_ADDRESS);
	MPIR_ERR_CHKANDJUMP(!sctpc.peer_vc, mpi_errno, MPI_ERR_OTHER, "**nomem");
	sctpc.npeer_vc = n;
	for (int r = 0; r < n; r++) {
		MPIDI_VC_t *vc;
		if (r == pg_rank)
			continue;	/* CH3 handles messages to itself */
		mpi_errno = MPIDI_PG_GetConnString(pg, r, esc, sizeof(esc));
		MPIR_ERR_CHECK(mpi_errno);
		MPIR_ERR_CHKANDJUMP3(card_unescape(esc, card, sizeof(card)), mpi_errno, MPI_ERR_OTHER,
				     "**ch3|sctp|peer", "**ch3|sctp|peer %d %s %s", r, esc,
				     "not a business card");
		sctpt_peer_t id = sctpt_peer_add(sctpc.ep, card);
		MPIR_ERR_CHKANDJUMP3(id < 0, mpi_errno, MPI_ERR_OTHER, "**ch3|sctp|peer",
				     "**ch3|sctp|peer %d %s %s", r, card, sctpt_last_error());
		/* peer ids count up from 0 in the order cards are added */
		MPIR_Assert(id < n);
		MPIDI_PG_Get_vc(pg, r, &vc);
		vc->ch.peer = id;
		sctpc.peer_vc[id] = vc;
	}
  fn_exit:
	return mpi_errno;
  fn_fail:
	goto fn_exit;
}

int MPIDI_CH3_Init(int has_parent, MPIDI_PG_t * pg, int pg_rank)
{
	int mpi_errno = MPI_SUCCESS;
	struct sctpt_config cfg;
	char err[512] = "", esc[3 * SCTPT_CARD_MAX];

	MPIR_FUNC_ENTER;
	MPIR_ERR_CHKANDJUMP1(has_parent, mpi_errno, MPI_ERR_OTHER, "**ch3|sctp|nodynamic",
			     "**ch3|sctp|nodynamic %s", "a spawned process");
	sctpc.pg = pg;
	sctpc.rank = pg_rank;
	mpi_errno = MPIDI_CH3I_Progress_init();
	MPIR_ERR_CHECK(mpi_errno);

	MPIR_ERR_CHKANDJUMP1(sctpc_config(&cfg, err, sizeof(err)), mpi_errno, MPI_ERR_OTHER,
			     "**ch3|sctp|config", "**ch3|sctp|config %s", err);
	int rc = sctpt_open(&cfg, &sctpc.ep);
	MPIR_ERR_CHKANDJUMP1(rc < 0, mpi_errno, MPI_ERR_OTHER, "**ch3|sctp|open",
			     "**ch3|sctp|open %s", sctpt_last_error());
	rc = sctpt_card(sctpc.ep, sctpc.card, sizeof(sctpc.card));
	MPIR_ERR_CHKANDJUMP1(rc < 0, mpi_errno, MPI_ERR_OTHER, "**ch3|sctp|open",
			     "**ch3|sctp|open %s", sctpt_last_error());
	if (sctpc.env.verbose)
		fprintf(stderr, "ch3:sctp: rank %d bound, %u streams, card \"%s\"\n", pg_rank,
			sctpt_streams(sctpc.ep), sctpc.card);

	/* publishes the card and waits until every rank has (a PMI barrier) */
	card_escape(sctpc.card, esc, sizeof(esc));
	mpi_errno = MPIDI_PG_SetConnInfo(pg_rank, esc);
	MPIR_ERR_CHECK(mpi_errno);
	mpi_errno = add_peers(pg, pg_rank);
	MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
	MPIR_FUNC_EXIT;
	return mpi_errno;
  fn_fail:
	goto fn_exit;
}

int MPIDI_CH3_InitCompleted(void)
{
	return MPI_SUCCESS;
}

int MPIDI_CH3_Finalize(void)
{
	int mpi_errno = MPIDI_CH3I_Progress_finalize();
	sctpc_config_free();
	MPL_free(sctpc.peer_vc);
	sctpc.peer_vc = NULL;
	sctpc.npeer_vc = 0;
	return mpi_errno;
}

int MPIDI_CH3_PG_Init(MPIDI_PG_t * pg ATTRIBUTE((unused)))
{
	return MPI_SUCCESS;
}

int MPIDI_CH3_PG_Destroy(struct MPIDI_PG *pg ATTRIBUTE((unused)))
{
	return MPI_SUCCESS;
}

int MPIDI_CH3_VC_Init(MPIDI_VC_t * vc)
{
	vc->ch.peer = -1;
	vc->ch.failed = 0;
	vc->ch.priv = NULL;
	return MPI_SUCCESS;
}

int MPIDI_CH3_VC_Destroy(struct MPIDI_VC *vc)
{
	if (vc->ch.peer >= 0 && vc->ch.peer < sctpc.npeer_vc && sctpc.peer_vc[vc->ch.peer] == vc)
		sctpc.peer_vc[vc->ch.peer] = NULL;
	vc->ch.peer = -1;
	return MPI_SUCCESS;
}

#ifdef MPL_USE_DBG_LOGGING
const char *MPIDI_CH3_VC_GetStateString(struct MPIDI_VC *vc)
{
	return vc->ch.failed ? "FAILED" : vc->ch.peer < 0 ? "NO_CARD" : "CARD_KNOWN";
}
#endif

int MPIDI_CH3_Get_business_card(int myRank ATTRIBUTE((unused)), char *value, int length)
{
	int mpi_errno = MPI_SUCCESS;
	MPIR_ERR_CHKANDJUMP(strlen(sctpc.card) + 1 > (size_t) length, mpi_errno, MPI_ERR_OTHER,
			    "**buscard_len");
	strcpy(value, sctpc.card);
  fn_fail:
	return mpi_errno;
}

/*
 * Dynamic processes. Ports, connect/accept and spawn would need a connecting process from
 * another process group to be known to the core before its first packet arrives, and one
 * core peer per process where CH3 keeps a temporary VC beside the real one: not done.
 * Each operation fails with a message saying so.
 */
static int no_dynamic(const char *what)
{
	int mpi_errno = MPI_SUCCESS;
	MPIR_ERR_SET1(mpi_errno, MPI_ERR_OTHER, "**ch3|sctp|nodynamic",
		      "**ch3|sctp|nodynamic %s", what);
	return mpi_errno;
}

static int open_port(MPIR_Info * info ATTRIBUTE((unused)), char *port ATTRIBUTE((unused)))
{
	return no_dynamic("MPI_Open_port");
}

static int close_port(const char *port ATTRIBUTE((unused)))
{
	return no_dynamic("MPI_Close_port");
}

static int comm_accept(const char *port ATTRIBUTE((unused)), MPIR_Info * info
		       ATTRIBUTE((unused)), int root ATTRIBUTE((unused)), MPIR_Comm * comm
		       ATTRIBUTE((unused)), MPIR_Comm ** out ATTRIBUTE((unused)))
{
	return no_dynamic("MPI_Comm_accept");
}

static int comm_connect(const char *port ATTRIBUTE((unused)), MPIR_Info * info
			ATTRIBUTE((unused)), int root ATTRIBUTE((unused)), MPIR_Comm * comm
			ATTRIBUTE((unused)), MPIR_Comm ** out ATTRIBUTE((unused)))
{
	return no_dynamic("MPI_Comm_connect");
}

int MPIDI_CH3_PortFnsInit(MPIDI_PortFns * fns)
{
	fns->OpenPort = open_port;
	fns->ClosePort = close_port;
	fns->CommAccept = comm_accept;
	fns->CommConnect = comm_connect;
	return MPI_SUCCESS;
}

int MPIDI_CH3_Connect_to_root(const char *port ATTRIBUTE((unused)), MPIDI_VC_t ** vc)
{
	*vc = NULL;
	return no_dynamic("connecting to a port");
}
