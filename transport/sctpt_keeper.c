/*
 * The keeper: a thread per endpoint that answers the peers while the application is away.
 *
 * An engine that reads its sockets only inside the application's progress goes silent while
 * the application computes: no SACK, no HEARTBEAT-ACK, and after assoc_max_retrans
 * retransmissions its peers declare it lost. TCP's ACKs come from the kernel; ours come from
 * here. The thread naps; each time it wakes and finds that no progress call came since the
 * last time, it takes the endpoint and lets the engine read, acknowledge and run its timers
 * (be->keep), handing nothing to the application: new messages wait in the engine within
 * its receive window. While the application stays away the thread sleeps on the sockets, so
 * it answers at once; the first progress call sends it back to napping.
 *
 * Exclusion. Without cfg.single_thread the thread takes the core's mutex like any other.
 * With it the application takes no mutex, so the two meet in a Dekker handshake: the
 * application says it is in (ep->app_in) and then looks at ep->keeper_in; the keeper says
 * it is in and then looks at ep->app_in, one of the two sees the other. The barrier that
 * needs is on the keeper's side only (membarrier(2) makes one on every thread of the
 * process), so the application pays two plain stores and a load; where the kernel lacks
 * membarrier the application's store is a full barrier instead.
 */
#include "sctpt_int.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sctpt_keeper {
	pthread_t thread;
	int stop_fd;  /* readable once the endpoint closes */
	int nap_ms;
};

static int membarrier(int cmd)
{
	return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

/* The keeper has the endpoint (1) or the application is in it (0). Holds ep->lock. */
static int keeper_enter(struct sctpt_ep *ep)
{
	if (!ep->cfg.single_thread)
		return 1;
	__atomic_store_n(&ep->keeper_in, 1, __ATOMIC_RELAXED);
	if (ep->app_fence || membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&ep->app_in, __ATOMIC_ACQUIRE))
		return 1;
	__atomic_store_n(&ep->keeper_in, 0, __ATOMIC_RELEASE);
	return 0;
}

static void keeper_leave(struct sctpt_ep *ep)
{
	if (ep->cfg.single_thread)
		__atomic_store_n(&ep->keeper_in, 0, __ATOMIC_RELEASE);
}

void sctpt_keeper_wait(struct sctpt_ep *ep)
{
	/* the keeper holds the mutex for as long as it is in, and looks at app_in (set) before
	 * it goes in again */
	pthread_mutex_lock(&ep->lock);
	pthread_mutex_unlock(&ep->lock);
}

/* One round for an absent application: 0 if it came back meanwhile. */
static int keep(struct sctpt_ep *ep)
{
	if (pthread_mutex_trylock(&ep->lock) != 0)
		return 0;
	int in = keeper_enter(ep);
	if (in) {
		ep->be->keep(ep);
		keeper_leave(ep);
	}
	pthread_mutex_unlock(&ep->lock);
	return in;
}

static void *keeper_main(void *arg)
{
	struct sctpt_ep *ep = arg;
	struct sctpt_keeper *k = ep->keeper;
	unsigned seen = __atomic_load_n(&ep->app_calls, __ATOMIC_RELAXED);
	int away = 0;
	for (;;) {
		struct pollfd pfd[SCTPT_MAX_ADDRS + 1];
		nfds_t n = 0;
		pfd[n++] = (struct pollfd){.fd = k->stop_fd, .events = POLLIN};
		for (int i = 0; away && i < ep->nudp; i++)
			pfd[n++] = (struct pollfd){.fd = ep->udp[i].fd, .events = POLLIN};
		if (poll(pfd, n, k->nap_ms) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		unsigned calls = __atomic_load_n(&ep->app_calls, __ATOMIC_RELAXED);
		if (calls != seen) {
			seen = calls;
			away = 0;
			continue;
		}
		away = keep(ep);
	}
	return NULL;
}

int sctpt_keeper_start(struct sctpt_ep *ep)
{
	if (!ep->be->keep || ep->cfg.keeper_ms <= 0)
		return 0;
	struct sctpt_keeper *k = calloc(1, sizeof(*k));
	if (!k)
		return sctpt_err(-ENOMEM, "out of memory for the keeper");
	k->nap_ms = ep->cfg.keeper_ms;
	k->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->stop_fd < 0) {
		free(k);
		return sctpt_err(-errno, "eventfd: %s", strerror(errno));
	}
	/* registering is per process and idempotent */
	ep->app_fence = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0;
	ep->keeper = k;
	int rc = pthread_create(&k->thread, NULL, keeper_main, ep);
	if (rc != 0) {
		ep->keeper = NULL;
		close(k->stop_fd);
		free(k);
		return sctpt_err(-rc, "cannot start the keeper thread: %s", strerror(rc));
	}
	return 0;
}

void sctpt_keeper_stop(struct sctpt_ep *ep)
{
	struct sctpt_keeper *k = ep->keeper;
	if (!k)
		return;
	uint64_t one = 1;
	if (write(k->stop_fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd far from overflow takes it */
	pthread_join(k->thread, NULL);
	close(k->stop_fd);
	ep->keeper = NULL;
	free(k);
}

