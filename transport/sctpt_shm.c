/*
 * Same-host peers in the CLAN style: a distributed message queue per ordered pair (a ring in
 * the receiver's memory, written by the sender, read and write positions exchanged lazily),
 * cookies for large messages (the sender names its buffer, the receiver reads it with one
 * copy), and tripwires (a flag a sleeper arms; a writer wakes it only then).
 *
 * Setting up: the sender connects to the receiver's abstract unix socket (named in its card)
 * on its first send, and the receiver answers with the ring, an anonymous memfd sealed against
 * resizing, so no name is ever left in the file system and neither end can make the other's
 * accesses fault. The connection stays open: its end tells either side that the other one has
 * gone (closed in order if the owner says so in the ring's header, lost otherwise), the way an
 * SCTP association's end would.
 *
 * Receiving: records are read where they lie, checked (bounds, sequence, kind) on a private
 * copy of their header, and fed to the core's own receive path (ep->cur, the staging buffer,
 * reassembly, order, completions), parked beside the engine's so a message half-read from
 * SCTP is not disturbed. A whole message larger than what a completion carries inline goes to
 * a handler with a complete function where it lies in the ring (CLAN's in-place receive,
 * cfg.shm_lend): its room goes back to the sender once the entry is released. A faulty peer's
 * ring can make us fail that peer, never make us touch memory outside the segment.
 */
#include "sctpt_int.h"
#include "sctpt_shm_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

#define SOCK_PREFIX "sctpt-shm."
#define REC_BUDGET 256               /* records read from one ring per progress */
#define PULL_PIECE (512u << 10)      /* a pull is read in pieces of this much: other streams
				      * flow meanwhile */
#define POLL_MS 1                    /* sockets looked at this often while nothing says so */
#define CLOCK_EVERY 64               /* progress calls between looks at the clock (costly in a
				      * virtual machine, and nothing here needs it sooner) */
#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
#define LOANS 64                     /* records of one ring lent to completions at once */
#define PEEK_MAX 16                  /* rings a lock-free look covers (more: the lock path) */
#define PEEK_SLOW 16                 /* lock-free looks between progress calls that lock */
#define EXPRESS_FULL 16              /* express calls between whole progress calls (sockets,
				      * engine, the other rings' turn) */

/* epoll tags: low bits of a peer's address (calloc'd, 16-byte aligned) or of a pending
 * connection's */
enum { TAG_LISTEN = 0, TAG_EFD = 4, TAG_IN = 1, TAG_OUT = 2, TAG_PEND = 3 };

enum { OUT_NONE, OUT_CONNECTING, OUT_UP, OUT_SCTP, OUT_DOWN };

struct ring {
	struct sctpt_shm_ring_hdr *hdr;
	uint8_t *data;
	uint32_t size;
	void *map1, *map2;           /* receiver: header and data apart (data read-only) */
	size_t len1, len2;
};

/*
 * Records of a ring handed to completions where they lie (CLAN's in-place receive: no copy
 * into a buffer of ours): the ring keeps their space from the sender until the entries are
 * released, and its mapping outlives the peer while any is out. Oldest first.
 */
struct sctpt_loan {
	struct loans *ls;
	uint64_t start;              /* where its record starts in the ring */
	int done;
};

struct loans {
	struct sctpt_shm_peer *sp;   /* NULL once the ring is gone */
	int peeked;                  /* ... and then: its map was in the lock-free look's table */
	void *map;                   /* the ring's records: unmapped with the last loan then */
	size_t len;
	uint32_t head, n;
	struct sctpt_loan slot[LOANS];
};

/* A pull being read: its piece of the receive path (ep->cur) between progress calls. */
struct pull_rx {
	int active;
	uint16_t stream;
	uint32_t niov;
	struct sctpt_shm_iov iov[SCTPT_SHM_MAX_IOV];
	uint64_t len, done;
	struct sctpt_rxcur cur;
};

struct sctpt_shm_peer {
	struct sctpt_peer *p;
	char token[SCTPT_SHM_TOKEN_MAX];
	/* we send: the ring in the peer's memory */
	int out_state;
	int out_fd, out_efd;
	struct ring out;
	const struct sctpt_shm_ctl *out_ctl;
	uint64_t wpos, rcache;
	uint64_t rec_max;            /* payload of a record at most: a quarter of the ring, never
				    * more than a fragment (ring up) */
	uint64_t now_max;            /* the largest message sctpt_shm_send writes whole (ring up) */
	int pull;                    /* large messages may be pulls */
	struct sctpt_txq pulls;      /* sends the peer is to read, oldest first */
	uint64_t pulls_sent, pulls_acked;
	/* it sends: the ring in our memory */
	int in_fd, in_efd;
	struct ring in;
	int pid;                     /* the sender, as the kernel told us */
	uint64_t rpos, rpub;
	uint64_t rlast;              /* where the last record we consumed starts */
	struct loans *ls;            /* its records lent to completions (NULL: none yet) */
	int suspect;                 /* looked empty while its sender said otherwise */
	struct pull_rx pl;
	int peeked;                  /* its records' memory was in the lock-free look's table */
	int peek_slot;               /* ... at this index of it (-1: not there) */
	uint64_t ring_full, npulls, wakeups, nlent, nexpress;
	int used;                    /* 1: a ring to it was up, 2: one from it (they outlive it) */
};

/* An accepted connection whose HELLO has not come, or names a card not added yet. */
struct pending {
	int fd, efd;
	int have_hello;
	struct sctpt_shm_hello hello;
};

struct sctpt_shm {
	char token[SCTPT_SHM_TOKEN_MAX];
	uint64_t host;
	int lfd, efd, epfd;
	int ctl_fd;
	struct sctpt_shm_ctl *ctl;
	uint32_t ring_size;
	uint64_t probe;              /* what our HELLOs invite receivers to read */
	struct sctpt_shm_peer **peers;
	int npeers, cap;
	struct pending **pend;
	int npend, cap_pend;
	int connecting;              /* rings we asked for, not answered yet */
	int hellos;                  /* accepted connections whose HELLO has not come */
	int sleepers;
	uint64_t poll_ms;            /* next look at the sockets */
	int poke;                    /* look now: a sleep ended */
	int quiet;                   /* no peer talks SCTP: the engine is read every POLL_MS */
	uint64_t engine_ms;          /* 0: read it now */
	unsigned calls, engine_calls;
	struct sctpt_rxbuf *stage;
	/* for sctpt_shm_quiet, without the lock: where each ring's next record will be (npeek
	 * of them; -1: look under the lock, there is more to do than reading rings), rebuilt
	 * under the lock by every progress; and the records' mappings of rings gone since,
	 * replaced by zeros that such a look may still read */
	_Atomic int npeek;
	_Atomic(const _Atomic uint32_t *) peek[PEEK_MAX];
	_Atomic unsigned peek_calls;
	struct retired {
		void *addr;
		size_t len;
	} *retired;
	int nretired;
	/* express dispatch: calls since the last whole progress, where the next one starts
	 * looking, the message handed out (only one at a time: its thread is the dispatcher) */
	unsigned express_calls;
	int express_next;
	uint8_t express_data[SCTPT_CQE_INLINE];
};

static uint64_t now_ms(void)
{
	return sctpt_now_ms();
}

static uint64_t line_up(uint64_t n)
{
	return (n + SCTPT_SHM_LINE - 1) & ~(uint64_t)(SCTPT_SHM_LINE - 1);
}

static void wake(int fd)
{
	uint64_t one = 1;
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the sleeper has plenty to wake it */
	}
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* ---- host identity and the socket's name ---- */

static uint64_t fnv(uint64_t h, const void *buf, size_t n)
{
	const uint8_t *b = buf;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* This boot of this machine, in this network namespace (where abstract sockets live). */
static uint64_t host_identity(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char boot[64] = "";
	struct stat st;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, boot, sizeof(boot) - 1);
		boot[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	if (!boot[0])
		gethostname(boot, sizeof(boot) - 1);
	h = fnv(h, boot, strlen(boot));
	if (stat("/proc/self/ns/net", &st) == 0)
		h = fnv(h, &st.st_ino, sizeof(st.st_ino));
	return h;
}

static socklen_t sock_name(struct sockaddr_un *a, const char *token)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, SOCK_PREFIX "%s", token);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int token_parse(const char *t, uint64_t *host, long *pid)
{
	char *end;
	if (strlen(t) < 18 || t[16] != '.')
		return -1;
	*host = strtoull(t, &end, 16);
	if (end != t + 16)
		return -1;
	*pid = strtol(t + 17, &end, 10);
	return *end == '.' && *pid > 0 ? 0 : -1;
}

/* ---- epoll ---- */

static int ep_add(struct sctpt_shm *sh, int fd, uint64_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = tag};
	return epoll_ctl(sh->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void ep_retag(struct sctpt_shm *sh, int fd, uint64_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = tag};
	epoll_ctl(sh->epfd, EPOLL_CTL_MOD, fd, &ev);
}

static void ep_del(struct sctpt_shm *sh, int fd)
{
	if (fd >= 0)
		epoll_ctl(sh->epfd, EPOLL_CTL_DEL, fd, NULL);
}

/* ---- fds over the socket ---- */

static int send_fds(int fd, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		char b[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {(void *)buf, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.b;
		mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	return n == (ssize_t)len ? 0 : -1;
}

/* One message of exactly len bytes with up to max fds (the rest set to -1). Returns 1, 0 if
 * nothing is there yet, -1 if the connection ended or sent something else. */
static int recv_fds(int fd, void *buf, size_t len, int *fds, int max)
{
	union {
		char b[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {buf, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			    .msg_controllen = sizeof(ctl.b)};
	for (int i = 0; i < max; i++)
		fds[i] = -1;
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	int got = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		int tmp[4];
		memcpy(tmp, CMSG_DATA(c), (size_t)(k < 4 ? k : 4) * sizeof(int));
		for (int i = 0; i < k && i < 4; i++) {
			if (got < max)
				fds[got++] = tmp[i];
			else
				close(tmp[i]);
		}
	}
	if (n != (ssize_t)len || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		for (int i = 0; i < max; i++)
			close_fd(&fds[i]);
		return -1;
	}
	return 1;
}

/* ---- segments ---- */

/* A memfd of len bytes that nobody can shrink or grow. */
static int seg_create(const char *name, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len) != 0 || fcntl(fd, F_ADD_SEALS, SEALS) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A peer's memfd is safe to map for len bytes: that big and sealed against shrinking. */
static int seg_check(int fd, size_t len)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	return fstat(fd, &st) == 0 && (uint64_t)st.st_size >= len && seals >= 0 &&
	       (seals & F_SEAL_SHRINK) ? 0 : -1;
}

/* Records' memory a lock-free look may still be reading (sh NULL: none can be): zeros take
 * its place, and the address range stays ours until the endpoint closes. */
static void data_unmap(struct sctpt_shm *sh, void *addr, size_t len)
{
	if (sh) {
		atomic_store_explicit(&sh->npeek, -1, memory_order_relaxed);
		struct retired *nr = realloc(sh->retired, (size_t)(sh->nretired + 1) * sizeof(*nr));
		if (!nr)
			return; /* left mapped: still safe */
		sh->retired = nr;
		if (mmap(addr, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
			 -1, 0) == MAP_FAILED)
			return;
		nr[sh->nretired++] = (struct retired){addr, len};
		return;
	}
	munmap(addr, len);
}

/* peeked: the records' memory may be read by a lock-free look */
static void ring_unmap(struct sctpt_shm *sh, struct ring *r, int peeked)
{
	if (r->map1)
		munmap(r->map1, r->len1);
	if (r->map2)
		data_unmap(peeked ? sh : NULL, r->map2, r->len2);
	memset(r, 0, sizeof(*r));
}

/* ---- the endpoint ---- */

void sctpt_shm_open(struct sctpt_ep *ep)
{
	struct sctpt_shm *sh;
	uint32_t nonce = 0;
	struct sockaddr_un a;
	if (!ep->cfg.shm || !(sh = calloc(1, sizeof(*sh))))
		return;
	sh->lfd = sh->efd = sh->epfd = sh->ctl_fd = -1;
	atomic_init(&sh->npeek, -1);
	sh->host = host_identity();
	if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) != sizeof(nonce))
		nonce = (uint32_t)(uintptr_t)sh ^ (uint32_t)now_ms();
	if (getrandom(&sh->probe, sizeof(sh->probe), GRND_NONBLOCK) != sizeof(sh->probe))
		sh->probe = 0x9e3779b97f4a7c15ull ^ nonce;
	snprintf(sh->token, sizeof(sh->token), "%016llx.%d.%08x", (unsigned long long)sh->host,
		 (int)getpid(), nonce);
	size_t ring = ep->cfg.shm_ring;
	if (ring < SCTPT_SHM_MIN_RING)
		ring = SCTPT_SHM_MIN_RING;
	if (ring > SCTPT_SHM_MAX_RING)
		ring = SCTPT_SHM_MAX_RING;
	sh->ring_size = SCTPT_SHM_MIN_RING;
	while (sh->ring_size < ring)
		sh->ring_size *= 2;
	socklen_t alen = sock_name(&a, sh->token);
	sh->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	sh->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	sh->epfd = epoll_create1(EPOLL_CLOEXEC);
	sh->ctl_fd = seg_create("sctpt-ctl", sizeof(struct sctpt_shm_ctl));
	if (sh->lfd < 0 || sh->efd < 0 || sh->epfd < 0 || sh->ctl_fd < 0 ||
	    bind(sh->lfd, (struct sockaddr *)&a, alen) != 0 || listen(sh->lfd, 256) != 0 ||
	    ep_add(sh, sh->lfd, TAG_LISTEN) != 0 || ep_add(sh, sh->efd, TAG_EFD) != 0)
		goto fail;
	sh->ctl = mmap(NULL, sizeof(*sh->ctl), PROT_READ | PROT_WRITE, MAP_SHARED, sh->ctl_fd, 0);
	if (sh->ctl == MAP_FAILED) {
		sh->ctl = NULL;
		goto fail;
	}
	sh->ctl->magic = SCTPT_SHM_MAGIC;
	sh->ctl->version = SCTPT_SHM_VERSION;
	sh->ctl->pid = (uint32_t)getpid();
	if (!(sh->stage = sctpt_rxbuf_get(ep)))
		goto fail;
	ep->shm = sh;
	ep->wait_fd = sh->epfd;
	return;
fail:
	sctpt_err(-errno, "shared memory for same-host peers unavailable (%s): SCTP for all",
		  strerror(errno));
	ep->shm = sh;
	sctpt_shm_fini(ep);
}

void sctpt_shm_fini(struct sctpt_ep *ep)
{
	struct sctpt_shm *sh = ep->shm;
	if (!sh)
		return;
	for (int i = 0; i < sh->npend; i++) {
		close_fd(&sh->pend[i]->fd);
		close_fd(&sh->pend[i]->efd);
		free(sh->pend[i]);
	}
	free(sh->pend);
	free(sh->peers);
	for (int i = 0; i < sh->nretired; i++)
		munmap(sh->retired[i].addr, sh->retired[i].len);
	free(sh->retired);
	if (sh->ctl)
		munmap(sh->ctl, sizeof(*sh->ctl));
	close_fd(&sh->lfd);
	close_fd(&sh->efd);
	close_fd(&sh->epfd);
	close_fd(&sh->ctl_fd);
	if (sh->stage)
		sctpt_rxbuf_put(ep, sh->stage);
	free(sh);
	ep->shm = NULL;
	ep->wait_fd = -1;
}

const char *sctpt_shm_token(struct sctpt_ep *ep)
{
	return ep->shm ? ep->shm->token : NULL;
}

int sctpt_shm_is_local(struct sctpt_ep *ep, const struct sctpt_card_info *ci)
{
	uint64_t host;
	long pid;
	if (!ep->shm || !ci->shm[0] || token_parse(ci->shm, &host, &pid) != 0)
		return 0;
	/* two endpoints of one process talk SCTP (the engine's tests do that) */
	return host == ep->shm->host && pid != (long)getpid();
}

/* ---- peers ---- */

static void pend_drop(struct sctpt_shm *sh, int i)
{
	struct pending *pd = sh->pend[i];
	sh->hellos -= !pd->have_hello;
	ep_del(sh, pd->fd);
	close_fd(&pd->fd);
	close_fd(&pd->efd);
	free(pd);
	sh->pend[i] = sh->pend[--sh->npend];
}

static int accept_ring(struct sctpt_ep *ep, struct sctpt_peer *p, struct pending *pd);

int sctpt_shm_peer_init(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	struct sctpt_shm *sh = ep->shm;
	if (!sctpt_shm_is_local(ep, &p->info))
		return 0;
	struct sctpt_shm_peer *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	if (sh->npeers == sh->cap) {
		int cap = sh->cap ? 2 * sh->cap : 16;
		struct sctpt_shm_peer **np = realloc(sh->peers, (size_t)cap * sizeof(*np));
		if (!np) {
			free(sp);
			return -ENOMEM;
		}
		sh->peers = np;
		sh->cap = cap;
	}
	sh->peers[sh->npeers++] = sp;
	sp->p = p;
	snprintf(sp->token, sizeof(sp->token), "%s", p->info.shm);
	sp->out_fd = sp->out_efd = sp->in_fd = sp->in_efd = -1;
	sp->peek_slot = -1;
	STAILQ_INIT(&sp->pulls);
	p->shm = sp;
	/* its ring may have been asked for before its card was added here */
	for (int i = 0; i < sh->npend; i++) {
		struct pending *pd = sh->pend[i];
		if (pd->have_hello && strcmp(pd->hello.card, p->card) == 0) {
			if (accept_ring(ep, p, pd) != 0)
				pend_drop(sh, i);
			else
				sh->pend[i] = sh->pend[--sh->npend];
			break;
		}
	}
	return 0;
}

static void out_teardown(struct sctpt_shm *sh, struct sctpt_shm_peer *sp)
{
	if (sp->out_state == OUT_CONNECTING)
		sh->connecting--;
	ep_del(sh, sp->out_fd);
	close_fd(&sp->out_fd);
	close_fd(&sp->out_efd);
	ring_unmap(sh, &sp->out, 0);
	if (sp->out_ctl)
		munmap((void *)sp->out_ctl, sizeof(*sp->out_ctl));
	sp->out_ctl = NULL;
}

static void in_teardown(struct sctpt_shm *sh, struct sctpt_shm_peer *sp)
{
	struct loans *ls = sp->ls;
	if (ls && ls->n) { /* entries still read those records: the mapping goes with them */
		ls->sp = NULL;
		ls->peeked = sp->peeked;
		sp->in.map2 = NULL;
	} else {
		free(ls);
	}
	sp->ls = NULL;
	ep_del(sh, sp->in_fd);
	close_fd(&sp->in_fd);
	close_fd(&sp->in_efd);
	atomic_store_explicit(&sh->npeek, -1, memory_order_relaxed);
	ring_unmap(sh, &sp->in, sp->peeked);
	sp->peeked = 0;
	memset(&sp->pl, 0, sizeof(sp->pl)); /* its message was abandoned with the peer's */
}

void sctpt_shm_peer_down(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	struct sctpt_shm_peer *sp = p->shm;
	struct sctpt_txmsg *m;
	while ((m = STAILQ_FIRST(&sp->pulls))) {
		STAILQ_REMOVE_HEAD(&sp->pulls, link);
		sctpt_tx_finish(ep, m, -EPIPE);
	}
	if (ep->shm) {
		out_teardown(ep->shm, sp);
		in_teardown(ep->shm, sp);
	}
	if (sp->out_state != OUT_SCTP)
		sp->out_state = OUT_DOWN;
}

void sctpt_shm_peer_free(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	struct sctpt_shm_peer *sp = p->shm;
	struct sctpt_shm *sh = ep->shm;
	if (sh && sp->in.hdr) /* we close in order: not a loss for the sender */
		atomic_store_explicit(&sp->in.hdr->owner_closed, 1, memory_order_release);
	sctpt_shm_peer_down(ep, p);
	for (int i = 0; sh && i < sh->npeers; i++)
		if (sh->peers[i] == sp) {
			sh->peers[i] = sh->peers[--sh->npeers];
			break;
		}
	free(sp);
	p->shm = NULL;
}

/* ---- setting up a ring: the sender's side ---- */

int sctpt_shm_routes(const struct sctpt_peer *p)
{
	return p->shm && p->shm->out_state != OUT_SCTP;
}

int sctpt_shm_connect(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	struct sctpt_shm *sh = ep->shm;
	struct sctpt_shm_peer *sp = p->shm;
	struct sockaddr_un a;
	if (!sh || sp->out_state == OUT_SCTP)
		return 1;
	if (sp->out_state != OUT_NONE)
		return 0;
	socklen_t alen = sock_name(&a, sp->token);
	struct sctpt_shm_hello *h = calloc(1, sizeof(*h));
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (!h || fd < 0 || connect(fd, (struct sockaddr *)&a, alen) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0 || cr.uid != getuid())
		goto sctp; /* (a socket of another user's is not our peer's) */
	h->magic = SCTPT_SHM_MAGIC;
	h->version = SCTPT_SHM_VERSION;
	h->ring_size = sh->ring_size;
	h->probe_addr = (uint64_t)(uintptr_t)&sh->probe;
	h->probe_value = sh->probe;
	snprintf(h->card, sizeof(h->card), "%s", ep->card);
	if (send_fds(fd, h, sizeof(*h), &sh->efd, 1) != 0 || ep_add(sh, fd, (uint64_t)(uintptr_t)sp |
								   TAG_OUT) != 0)
		goto sctp;
	free(h);
	sp->out_fd = fd;
	sp->out_state = OUT_CONNECTING;
	sh->connecting++;
	atomic_store_explicit(&sh->npeek, -1, memory_order_relaxed);
	return 0;
sctp:
	/* not reachable that way (another namespace, a full backlog): SCTP it is */
	free(h);
	if (fd >= 0)
		close(fd);
	sp->out_state = OUT_SCTP;
	return 1;
}

/* The setup failed on the way: the peer is reached through SCTP from now on. */
static void out_fallback(struct sctpt_ep *ep, struct sctpt_shm_peer *sp)
{
	struct sctpt_peer *p = sp->p;
	out_teardown(ep->shm, sp);
	sp->out_state = OUT_SCTP;
	if (p->state == SCTPT_PEER_CONNECTING) {
		int rc = ep->be->connect(ep, p);
		if (rc)
			sctpt_peer_fail(ep, p, rc);
	}
}

static int corrupt(struct sctpt_ep *ep, struct sctpt_peer *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int corrupt(struct sctpt_ep *ep, struct sctpt_peer *p, const char *fmt, ...)
{
	char why[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	sctpt_err(-EPROTO, "peer %s corrupted a shared-memory ring: %s", p->card, why);
	sctpt_peer_fail(ep, p, -EPROTO);
	return -EPROTO;
}

static void out_welcome(struct sctpt_ep *ep, struct sctpt_shm_peer *sp)
{
	struct sctpt_shm *sh = ep->shm;
	struct sctpt_shm_welcome w;
	int fds[3];
	int rc = recv_fds(sp->out_fd, &w, sizeof(w), fds, 3);
	if (rc == 0)
		return;
	if (rc < 0 || w.magic != SCTPT_SHM_MAGIC || w.version != SCTPT_SHM_VERSION ||
	    w.status != 0 || fds[2] < 0 || w.ring_size < SCTPT_SHM_MIN_RING ||
	    w.ring_size > SCTPT_SHM_MAX_RING || (w.ring_size & (w.ring_size - 1)) ||
	    seg_check(fds[0], SCTPT_SHM_HDR_SIZE + (size_t)w.ring_size) != 0 ||
	    seg_check(fds[1], sizeof(struct sctpt_shm_ctl)) != 0)
		goto fallback;
	size_t len = SCTPT_SHM_HDR_SIZE + (size_t)w.ring_size;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	void *c = mmap(NULL, sizeof(struct sctpt_shm_ctl), PROT_READ, MAP_SHARED, fds[1], 0);
	if (m == MAP_FAILED || c == MAP_FAILED) {
		if (m != MAP_FAILED)
			munmap(m, len);
		if (c != MAP_FAILED)
			munmap(c, sizeof(struct sctpt_shm_ctl));
		goto fallback;
	}
	sp->out = (struct ring){.hdr = m, .data = (uint8_t *)m + SCTPT_SHM_HDR_SIZE,
				.size = w.ring_size, .map1 = m, .len1 = len};
	sp->out_ctl = c;
	close(fds[0]);
	close(fds[1]);
	sp->out_efd = fds[2];
	fds[2] = -1;
	const struct sctpt_shm_ring_hdr *hd = sp->out.hdr;
	if (hd->magic != SCTPT_SHM_MAGIC || hd->version != SCTPT_SHM_VERSION ||
	    hd->size != w.ring_size || atomic_load(&hd->read_pos) != 0) {
		fds[0] = fds[1] = -1;
		goto fallback;
	}
	sp->pull = hd->pull && ep->cfg.shm_pull_min > 0;
	sp->rec_max = sp->out.size / 4 - SCTPT_SHM_REC_LEN - SCTPT_HDR_LEN;
	if (sp->rec_max > ep->cfg.frag_size)
		sp->rec_max = ep->cfg.frag_size;
	/* one record, and not what the receiver is to pull */
	sp->now_max = sp->rec_max;
	if (sp->pull && sp->now_max >= ep->cfg.shm_pull_min)
		sp->now_max = ep->cfg.shm_pull_min - 1;
	sp->wpos = sp->rcache = 0;
	sp->out_state = OUT_UP;
	sp->used |= 1;
	sh->connecting--;
	struct sctpt_peer *p = sp->p;
	if (p->state == SCTPT_PEER_CONNECTING || p->state == SCTPT_PEER_IDLE) {
		char what[SCTPT_CARD_MAX + 32];
		p->state = SCTPT_PEER_UP;
		snprintf(what, sizeof(what), "peer %s up", p->card);
		sctpt_cq_event(ep, SCTPT_EV_ASSOC_UP, p, 0, -1, what);
	}
	return;
fallback:
	for (int i = 0; i < 3; i++)
		close_fd(&fds[i]);
	out_fallback(ep, sp);
}

/* ---- setting up a ring: the receiver's side ---- */

/* Can we read the sender's memory (ptrace rules, containers)? Its HELLO names 8 bytes. */
static int probe_pull(int pid, const struct sctpt_shm_hello *h)
{
	uint64_t v = 0;
	struct iovec l = {&v, sizeof(v)};
	struct iovec r = {(void *)(uintptr_t)h->probe_addr, sizeof(v)};
	return pid > 0 && process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(v) &&
	       v == h->probe_value;
}

static void refuse(int fd, int status)
{
	struct sctpt_shm_welcome w = {.magic = SCTPT_SHM_MAGIC, .version = SCTPT_SHM_VERSION,
				      .status = status};
	send_fds(fd, &w, sizeof(w), NULL, 0);
}

/* The sender of pd is p: make its ring and hand it over. 0, or -1 (pd is the caller's to
 * drop; the sender falls back to SCTP). */
static int accept_ring(struct sctpt_ep *ep, struct sctpt_peer *p, struct pending *pd)
{
	struct sctpt_shm *sh = ep->shm;
	struct sctpt_shm_peer *sp = p->shm;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	/* anyone in this network namespace may connect: only our own user gets a ring */
	if (!sp || sp->in.hdr || sp->in_fd >= 0 || p->state == SCTPT_PEER_FAILED ||
	    getsockopt(pd->fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0 || cr.uid != getuid()) {
		refuse(pd->fd, -EEXIST);
		return -1;
	}
	uint32_t size = sh->ring_size;
	if (pd->hello.ring_size >= SCTPT_SHM_MIN_RING && pd->hello.ring_size < size &&
	    !(pd->hello.ring_size & (pd->hello.ring_size - 1)))
		size = pd->hello.ring_size;
	int fd = seg_create("sctpt-ring", SCTPT_SHM_HDR_SIZE + (size_t)size);
	if (fd < 0) {
		refuse(pd->fd, -errno);
		return -1;
	}
	/* our view: the header read-write, the records read-only */
	void *h = mmap(NULL, SCTPT_SHM_HDR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	void *d = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, SCTPT_SHM_HDR_SIZE);
	if (h == MAP_FAILED || d == MAP_FAILED) {
		if (h != MAP_FAILED)
			munmap(h, SCTPT_SHM_HDR_SIZE);
		if (d != MAP_FAILED)
			munmap(d, size);
		close(fd);
		refuse(pd->fd, -ENOMEM);
		return -1;
	}
	struct sctpt_shm_ring_hdr *hd = h;
	hd->magic = SCTPT_SHM_MAGIC;
	hd->version = SCTPT_SHM_VERSION;
	hd->size = size;
	hd->owner_pid = (uint32_t)getpid();
	hd->sender_pid = (uint32_t)cr.pid;
	hd->pull = ep->cfg.shm_pull_min > 0 && probe_pull(cr.pid, &pd->hello);
	struct sctpt_shm_welcome w = {.magic = SCTPT_SHM_MAGIC, .version = SCTPT_SHM_VERSION,
				      .ring_size = size};
	int fds[3] = {fd, sh->ctl_fd, sh->efd};
	if (send_fds(pd->fd, &w, sizeof(w), fds, 3) != 0) {
		munmap(h, SCTPT_SHM_HDR_SIZE);
		munmap(d, size);
		close(fd);
		return -1;
	}
	close(fd); /* the mappings keep it; it never had a name */
	sp->in = (struct ring){.hdr = hd, .data = d, .size = size, .map1 = h,
			       .len1 = SCTPT_SHM_HDR_SIZE, .map2 = d, .len2 = size};
	sp->pid = cr.pid;
	sp->in_fd = pd->fd;
	sp->in_efd = pd->efd;
	sp->rpos = sp->rpub = sp->rlast = 0;
	sp->used |= 2;
	ep_retag(sh, sp->in_fd, (uint64_t)(uintptr_t)sp | TAG_IN);
	free(pd);
	return 0;
}

static void on_listen(struct sctpt_ep *ep)
{
	struct sctpt_shm *sh = ep->shm;
	for (int k = 0; k < 64; k++) {
		int fd = accept4(sh->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct pending *pd = calloc(1, sizeof(*pd));
		if (sh->npend == sh->cap_pend) {
			int cap = sh->cap_pend ? 2 * sh->cap_pend : 8;
			struct pending **np = realloc(sh->pend, (size_t)cap * sizeof(*np));
			if (np) {
				sh->pend = np;
				sh->cap_pend = cap;
			}
		}
		if (!pd || sh->npend == sh->cap_pend) {
			free(pd);
			close(fd); /* the sender sees it end and uses SCTP */
			continue;
		}
		pd->fd = fd;
		pd->efd = -1;
		sh->pend[sh->npend++] = pd;
		sh->hellos++;
		if (ep_add(sh, fd, (uint64_t)(uintptr_t)pd | TAG_PEND) != 0)
			pend_drop(sh, sh->npend - 1);
	}
}

static void on_pending(struct sctpt_ep *ep, struct pending *pd)
{
	struct sctpt_shm *sh = ep->shm;
	int i = 0, rc = 0;
	while (i < sh->npend && sh->pend[i] != pd)
		i++;
	if (i == sh->npend)
		return;
	if (!pd->have_hello) {
		rc = recv_fds(pd->fd, &pd->hello, sizeof(pd->hello), &pd->efd, 1);
		if (rc == 0)
			return;
		if (rc < 0 || pd->hello.magic != SCTPT_SHM_MAGIC ||
		    pd->hello.version != SCTPT_SHM_VERSION || pd->efd < 0 ||
		    memchr(pd->hello.card, '\0', sizeof(pd->hello.card)) == NULL) {
			if (rc > 0)
				refuse(pd->fd, -EPROTO);
			pend_drop(sh, i);
			return;
		}
		pd->have_hello = 1;
		sh->hellos--;
	} else {
		char b;
		if (recv(pd->fd, &b, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN)
			return;
		pend_drop(sh, i); /* gone, or talking out of turn */
		return;
	}
	struct sctpt_peer *p = NULL;
	for (int k = 0; k < ep->npeers && !p; k++)
		if (strcmp(ep->peers[k]->card, pd->hello.card) == 0)
			p = ep->peers[k];
	if (!p && ep->cfg.accept_unknown) {
		/* out of the list meanwhile: adding the peer looks there for its HELLO */
		sh->pend[i] = sh->pend[--sh->npend];
		p = sctpt_peer_adopt(ep, pd->hello.card);
		sh->pend[sh->npend++] = pd; /* the slot is still ours: nothing was added */
		i = sh->npend - 1;
	}
	if (!p)
		return; /* kept until its card is added (sctpt_shm_peer_init) */
	if (accept_ring(ep, p, pd) != 0)
		pend_drop(sh, i);
	else
		sh->pend[i] = sh->pend[--sh->npend];
}

/* ---- the peer went away ---- */

static int in_poll(struct sctpt_ep *ep, struct sctpt_shm_peer *sp, int budget);

/* The connection to or from sp's process ended: it closed in order (and said so in a ring
 * header, or with CLOSE in its ring to us), or it is lost. */
static void peer_gone(struct sctpt_ep *ep, struct sctpt_shm_peer *sp)
{
	struct sctpt_peer *p = sp->p;
	if (sp->out_state == OUT_CONNECTING) { /* refused, or gone before answering */
		out_fallback(ep, sp);
		return;
	}
	/* what it wrote before it went is still ours to read */
	if (sp->in.hdr)
		in_poll(ep, sp, (int)(sp->in.size / SCTPT_SHM_LINE) + 1);
	if (p->state == SCTPT_PEER_FAILED || !p->shm)
		return;
	if (p->state != SCTPT_PEER_CLOSED && !sp->in.hdr && sp->out.hdr &&
	    atomic_load_explicit(&sp->out.hdr->owner_closed, memory_order_acquire))
		sctpt_peer_closed(ep, p); /* closed in order; it never sent to us */
	sctpt_peer_fail(ep, p, -ECONNRESET);
}

static void on_conn(struct sctpt_ep *ep, struct sctpt_shm_peer *sp, int out, uint32_t events)
{
	int fd = out ? sp->out_fd : sp->in_fd;
	if (fd < 0)
		return;
	if (out && sp->out_state == OUT_CONNECTING) {
		out_welcome(ep, sp);
		if (sp->out_state == OUT_UP && !(events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR)))
			return;
		if (sp->out_state != OUT_UP)
			return;
	}
	char b[64];
	ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	peer_gone(ep, sp); /* ended (n 0, or an error), or spoke out of turn */
}

/* Everything the sockets have to say. */
static int poll_sockets(struct sctpt_ep *ep)
{
	struct sctpt_shm *sh = ep->shm;
	struct epoll_event evs[32];
	int count = 0;
	for (int round = 0; round < 4; round++) {
		int n = epoll_wait(sh->epfd, evs, 32, 0);
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;
			if (tag == TAG_LISTEN) {
				on_listen(ep);
			} else if (tag == TAG_EFD) {
				uint64_t v;
				if (read(sh->efd, &v, sizeof(v)) < 0) {
					/* drained by another look already */
				}
			} else if ((tag & 3) == TAG_PEND) {
				on_pending(ep, (struct pending *)(uintptr_t)(tag & ~3ull));
			} else {
				struct sctpt_shm_peer *sp = (void *)(uintptr_t)(tag & ~3ull);
				int ok = 0;
				for (int k = 0; k < sh->npeers && !ok; k++)
					ok = sh->peers[k] == sp;
				if (ok)
					on_conn(ep, sp, (tag & 3) == TAG_OUT, evs[i].events);
			}
			count++;
		}
		if (n < 32)
			break;
	}
	return count;
}

/* ---- sending ---- */

/* Zeroes the seq of the record after one at pos of need bytes (that line is always free). */
static void clear_next(struct ring *r, uint64_t pos, uint64_t need)
{
	struct sctpt_shm_rec *next = (void *)(r->data + ((pos + need) & (r->size - 1)));
	atomic_store_explicit(&next->seq, 0, memory_order_relaxed);
}

/* Room for a record of need bytes at sp->wpos (a PAD first if it would cross the end), and
 * the line after it: where to write it, or NULL (full: *rc 0; broken: *rc < 0). */
static struct sctpt_shm_rec *reserve_slow(struct sctpt_ep *ep, struct sctpt_shm_peer *sp,
					  uint64_t need, int *rc)
{
	struct ring *r = &sp->out;
	uint64_t off = sp->wpos & (r->size - 1);
	uint64_t pad = off + need > r->size ? r->size - off : 0;
	*rc = 0;
	if (sp->wpos + pad + need + SCTPT_SHM_LINE - sp->rcache > r->size) {
		uint64_t rp = atomic_load_explicit(&r->hdr->read_pos, memory_order_acquire);
		if (rp < sp->rcache || rp > sp->wpos || rp % SCTPT_SHM_LINE) {
			*rc = corrupt(ep, sp->p, "read position %llu outside %llu..%llu",
				      (unsigned long long)rp, (unsigned long long)sp->rcache,
				      (unsigned long long)sp->wpos);
			return NULL;
		}
		sp->rcache = rp;
		if (sp->wpos + pad + need + SCTPT_SHM_LINE - sp->rcache > r->size) {
			sp->ring_full++;
			return NULL;
		}
	}
	if (pad) {
		struct sctpt_shm_rec *pr = (void *)(r->data + off);
		pr->kind = SCTPT_SHM_PAD;
		pr->stream = 0;
		pr->len = (uint32_t)(pad - SCTPT_SHM_REC_LEN);
		pr->reserved = 0;
		clear_next(r, sp->wpos, pad);
		atomic_store_explicit(&pr->seq, SCTPT_SHM_SEQ(sp->wpos), memory_order_release);
		sp->wpos += pad;
		/* so that write_pos lags the records by one at most (see ring_check) */
		atomic_store_explicit(&r->hdr->write_pos, sp->wpos, memory_order_release);
		off = 0;
	}
	return (void *)(r->data + off);
}

/* reserve_slow's answer where the room is known without looking: as on most sends */
static inline struct sctpt_shm_rec *reserve(struct sctpt_ep *ep, struct sctpt_shm_peer *sp,
					    uint64_t need, int *rc)
{
	struct ring *r = &sp->out;
	uint64_t off = sp->wpos & (r->size - 1);
	if (off + need <= r->size && sp->wpos + need + SCTPT_SHM_LINE - sp->rcache <= r->size) {
		*rc = 0;
		return (void *)(r->data + off);
	}
	return reserve_slow(ep, sp, need, rc);
}

/* The record at sp->wpos is written: make it valid, and trip the receiver's wire. */
static inline void commit(struct sctpt_shm_peer *sp, struct sctpt_shm_rec *rec, uint64_t need)
{
	clear_next(&sp->out, sp->wpos, need);
	atomic_store_explicit(&rec->seq, SCTPT_SHM_SEQ(sp->wpos), memory_order_release);
	sp->wpos += need;
	atomic_store_explicit(&sp->out.hdr->write_pos, sp->wpos, memory_order_release);
	/* either the receiver sees the record when it re-checks after arming, or we see it
	 * armed here */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&sp->out_ctl->armed, memory_order_relaxed)) {
		wake(sp->out_efd);
		sp->wakeups++;
	}
}

static void put_envelope(const struct sctpt_txmsg *m, uint64_t payload, uint8_t *out)
{
	struct sctpt_hdr h = m->hdr;
	uint64_t left = m->hdr.msg_len - m->hdr.offset;
	h.flags = (uint8_t)((m->hdr.flags & (SCTPT_F_UNORDERED | SCTPT_F_MSGID)) |
			    (h.offset == 0 ? SCTPT_F_FIRST : 0) |
			    (payload == left ? SCTPT_F_LAST : 0));
	sctpt_hdr_encode(&h, out);
}

/* A PULL for the whole of m, if it qualifies: 1 written, 0 no room, -1 not a pull. */
static int push_pull(struct sctpt_ep *ep, struct sctpt_shm_peer *sp, uint16_t s,
		     struct sctpt_txmsg *m, int *rc)
{
	struct sctpt_shm_iov iov[SCTPT_SHM_MAX_IOV];
	uint32_t n = 0;
	for (int i = m->iov_idx; i < m->iovcnt; i++) {
		if (!m->iov[i].iov_len)
			continue;
		if (n == SCTPT_SHM_MAX_IOV)
			return -1;
		iov[n++] = (struct sctpt_shm_iov){(uint64_t)(uintptr_t)m->iov[i].iov_base,
						  m->iov[i].iov_len};
	}
	uint32_t len = SCTPT_HDR_LEN + (uint32_t)sizeof(struct sctpt_shm_pull) + 16 * n;
	uint64_t need = line_up(SCTPT_SHM_REC_LEN + len);
	struct sctpt_shm_rec *rec = reserve(ep, sp, need, rc);
	if (!rec)
		return 0;
	rec->kind = SCTPT_SHM_PULL;
	rec->stream = s;
	rec->len = len;
	rec->reserved = 0;
	uint8_t *b = (uint8_t *)rec + SCTPT_SHM_REC_LEN;
	put_envelope(m, m->hdr.msg_len, b);
	struct sctpt_shm_pull *pl = (void *)(b + SCTPT_HDR_LEN);
	pl->niov = n;
	pl->reserved = 0;
	memcpy(pl->iov, iov, n * sizeof(iov[0]));
	commit(sp, rec, need);
	sp->pulls_sent++;
	sp->npulls++;
	return 1;
}

void sctpt_shm_pulled(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_txmsg *m)
{
	atomic_store_explicit(&ep->shm->npeek, -1, memory_order_relaxed); /* out_poll's */
	STAILQ_INSERT_TAIL(&p->shm->pulls, m, link);
}

int sctpt_shm_push(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t s, struct sctpt_txmsg *m,
		   size_t *n)
{
	struct sctpt_shm_peer *sp = p->shm;
	int rc = 0;
	if (sp->out_state == OUT_SCTP)
		return SCTPT_SHM_SCTP;
	if (sp->out_state != OUT_UP ||
	    atomic_load_explicit(&sp->out.hdr->owner_closed, memory_order_relaxed))
		return SCTPT_SHM_FULL; /* not yet; or its end is coming (the socket says when) */
	uint64_t left = m->hdr.msg_len - m->hdr.offset;
	if (sp->pull && m->hdr.offset == 0 && m->hdr.op == SCTPT_OP_DATA &&
	    left >= ep->cfg.shm_pull_min) {
		int k = push_pull(ep, sp, s, m, &rc);
		if (k >= 0)
			return k ? SCTPT_SHM_PULLED : rc;
	}
	uint64_t pay = left < sp->rec_max ? left : sp->rec_max;
	uint64_t need = line_up(SCTPT_SHM_REC_LEN + SCTPT_HDR_LEN + pay);
	struct sctpt_shm_rec *rec = reserve(ep, sp, need, &rc);
	if (!rec)
		return rc;
	rec->kind = SCTPT_SHM_DATA;
	rec->stream = s;
	rec->len = (uint32_t)(SCTPT_HDR_LEN + pay);
	rec->reserved = 0;
	uint8_t *d = (uint8_t *)rec + SCTPT_SHM_REC_LEN;
	put_envelope(m, pay, d);
	d += SCTPT_HDR_LEN;
	/* the payload straight from the caller's iovecs */
	size_t want = (size_t)pay, off = m->iov_off;
	for (int i = m->iov_idx; want; i++) {
		size_t c = m->iov[i].iov_len - off;
		if (c > want)
			c = want;
		memcpy(d, (const uint8_t *)m->iov[i].iov_base + off, c);
		d += c;
		want -= c;
		off = 0;
	}
	commit(sp, rec, need);
	*n = (size_t)pay;
	return SCTPT_SHM_WROTE;
}

int sctpt_shm_send(struct sctpt_ep *ep, struct sctpt_peer *p, uint16_t s, struct sctpt_hdr *h,
		   struct sctpt_order_ctx *oc, const struct iovec *iov, int iovcnt)
{
	struct sctpt_shm_peer *sp = p->shm;
	uint64_t len = h->msg_len;
	int rc;
	/* what sctpt_shm_push would write as one DATA record of the whole message */
	if (sp->out_state != OUT_UP || len > sp->now_max ||
	    atomic_load_explicit(&sp->out.hdr->owner_closed, memory_order_relaxed))
		return 0;
	uint64_t need = line_up(SCTPT_SHM_REC_LEN + SCTPT_HDR_LEN + len);
	struct sctpt_shm_rec *rec = reserve(ep, sp, need, &rc);
	if (!rec)
		return rc;
	if (oc) /* only now: a message that waits in its queue takes its number there */
		h->seq = sctpt_order_stamp(oc);
	h->flags |= SCTPT_F_FIRST | SCTPT_F_LAST;
	rec->kind = SCTPT_SHM_DATA;
	rec->stream = s;
	rec->len = (uint32_t)(SCTPT_HDR_LEN + len);
	rec->reserved = 0;
	uint8_t *d = (uint8_t *)rec + SCTPT_SHM_REC_LEN;
	sctpt_hdr_encode(h, d);
	d += SCTPT_HDR_LEN;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len)
			memcpy(d, iov[i].iov_base, iov[i].iov_len);
		d += iov[i].iov_len;
	}
	commit(sp, rec, need);
	return 1;
}

/* Pulls the receiver has read: their sends complete. */
static int out_poll(struct sctpt_ep *ep, struct sctpt_shm_peer *sp)
{
	if (STAILQ_EMPTY(&sp->pulls) || !sp->out.hdr)
		return 0;
	uint64_t d = atomic_load_explicit(&sp->out.hdr->pulls_done, memory_order_acquire);
	if (d == sp->pulls_acked)
		return 0;
	if (d < sp->pulls_acked || d > sp->pulls_sent)
		return corrupt(ep, sp->p, "%llu pulls done of %llu", (unsigned long long)d,
			       (unsigned long long)sp->pulls_sent), 0;
	int n = 0;
	while (sp->pulls_acked < d) {
		struct sctpt_txmsg *m = STAILQ_FIRST(&sp->pulls);
		STAILQ_REMOVE_HEAD(&sp->pulls, link);
		sp->pulls_acked++;
		sctpt_tx_finish(ep, m, 0);
		n++;
	}
	return n;
}

/* ---- receiving ---- */

enum { PUB_BATCH, PUB_CAUGHT_UP, PUB_NOW };

/* Tells the sender what we consumed: in batches (smaller ones once we caught up), when it
 * waits for room, and before we sleep. A sender that finds the ring full always finds at
 * least a batch's worth consumed soon: the ring holds many batches. */
static void publish(struct sctpt_shm_peer *sp, int mode)
{
	struct ring *r = &sp->in;
	uint64_t batch = mode == PUB_BATCH ? r->size / 4 : mode == PUB_CAUGHT_UP ? r->size / 16 : 0;
	/* read, but for records still lent to completions */
	uint64_t pos = sp->ls && sp->ls->n ? sp->ls->slot[sp->ls->head].start : sp->rpos;
	if (pos == sp->rpub)
		return;
	if (pos - sp->rpub < batch &&
	    !atomic_load_explicit(&r->hdr->sender_waiting, memory_order_relaxed))
		return;
	atomic_store_explicit(&r->hdr->read_pos, pos, memory_order_release);
	sp->rpub = pos;
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&r->hdr->sender_waiting, memory_order_relaxed)) {
		atomic_store_explicit(&r->hdr->sender_waiting, 0, memory_order_relaxed);
		wake(sp->in_efd);
		sp->wakeups++;
	}
}

static void pull_done(struct sctpt_shm_peer *sp)
{
	struct ring *r = &sp->in;
	atomic_fetch_add_explicit(&r->hdr->pulls_done, 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&r->hdr->sender_waiting, memory_order_relaxed)) {
		atomic_store_explicit(&r->hdr->sender_waiting, 0, memory_order_relaxed);
		wake(sp->in_efd);
		sp->wakeups++;
	}
}

/* The next piece of the pull under way, read into the receive path's buffer. 1: done, 0: more
 * to come, < 0: the peer failed. */
static int pull_step(struct sctpt_ep *ep, struct sctpt_shm_peer *sp)
{
	struct pull_rx *pl = &sp->pl;
	struct sctpt_peer *p = sp->p;
	struct sctpt_rxcur *c = &ep->cur;
	*c = pl->cur;
	if (!c->discard) {
		uint64_t want = pl->len - pl->done;
		if (want > PULL_PIECE && !c->in_stage) /* the stage is not ours between calls */
			want = PULL_PIECE;
		if (want > c->cap)
			want = c->cap; /* cannot be: the envelope's length was checked */
		struct iovec l = {c->dst, (size_t)want}, r[SCTPT_SHM_MAX_IOV];
		unsigned long nr = 0;
		uint64_t skip = pl->done, left = want;
		for (uint32_t i = 0; i < pl->niov && left; i++) {
			if (skip >= pl->iov[i].len) {
				skip -= pl->iov[i].len;
				continue;
			}
			uint64_t k = pl->iov[i].len - skip;
			if (k > left)
				k = left;
			r[nr++] = (struct iovec){(void *)(uintptr_t)(pl->iov[i].addr + skip), (size_t)k};
			left -= k;
			skip = 0;
		}
		ssize_t got = want ? process_vm_readv(sp->pid, &l, 1, r, nr, 0) : 0;
		if (got <= 0 && want) {
			int e = got < 0 ? errno : EFAULT;
			unsigned long long at = (unsigned long long)pl->iov[0].addr;
			memset(c, 0, sizeof(*c));
			memset(pl, 0, sizeof(*pl));
			if (e == ESRCH) {
				sctpt_err(-ECONNRESET, "peer %s went away during a transfer", p->card);
				sctpt_peer_fail(ep, p, -ECONNRESET);
				return -ECONNRESET;
			}
			return corrupt(ep, p, "its buffer at %#llx could not be read: %s", at,
				       strerror(e));
		}
		sctpt_rx_account(ep, 0, (size_t)got);
		pl->done += (uint64_t)got;
	} else {
		pl->done = pl->len;
	}
	if (pl->done < pl->len) {
		pl->cur = *c;
		memset(c, 0, sizeof(*c));
		return 0;
	}
	pl->active = 0;
	sctpt_rx_end(ep);
	memset(c, 0, sizeof(*c));
	if (!sp->in.hdr)
		return -EPIPE; /* the message failed the peer */
	pull_done(sp);
	return 1;
}

/* A PULL record (its header checked): take its iovecs, start the message. */
static int pull_start(struct sctpt_ep *ep, struct sctpt_shm_peer *sp, const struct sctpt_shm_rec *h,
		      const uint8_t *body)
{
	struct sctpt_peer *p = sp->p;
	struct pull_rx *pl = &sp->pl;
	struct sctpt_hdr env;
	uint32_t niov;
	if (h->len < SCTPT_HDR_LEN + sizeof(struct sctpt_shm_pull))
		return corrupt(ep, p, "pull record of %u bytes", h->len);
	memcpy(ep->stage->data, body, SCTPT_HDR_LEN);
	memcpy(&niov, body + SCTPT_HDR_LEN, sizeof(niov));
	if (niov > SCTPT_SHM_MAX_IOV || h->len != SCTPT_HDR_LEN + sizeof(struct sctpt_shm_pull) +
							 16 * niov)
		return corrupt(ep, p, "pull record of %u bytes with %u iovecs", h->len, niov);
	memcpy(pl->iov, body + SCTPT_HDR_LEN + sizeof(struct sctpt_shm_pull), 16 * (size_t)niov);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < niov; i++) {
		if (pl->iov[i].len > SCTPT_MAX_MSG)
			return corrupt(ep, p, "pull iovec of %llu bytes",
				       (unsigned long long)pl->iov[i].len);
		sum += pl->iov[i].len;
	}
	if (sctpt_hdr_decode(ep->stage->data, SCTPT_HDR_LEN, &env) != 0 ||
	    env.op != SCTPT_OP_DATA || env.offset != 0 || env.msg_len != sum ||
	    (env.flags & (SCTPT_F_FIRST | SCTPT_F_LAST)) != (SCTPT_F_FIRST | SCTPT_F_LAST))
		return corrupt(ep, p, "pull of %llu bytes whose envelope says otherwise",
			       (unsigned long long)sum);
	pl->niov = niov;
	pl->len = sum;
	pl->done = 0;
	pl->stream = h->stream;
	sctpt_rx_begin(ep, p, h->stream, SCTPT_HDR_LEN);
	if (!sp->in.hdr) {
		memset(&ep->cur, 0, sizeof(ep->cur));
		return -EPIPE;
	}
	pl->cur = ep->cur;
	memset(&ep->cur, 0, sizeof(ep->cur));
	pl->active = 1;
	/* into the staging buffer: now, the next record needs it; into its own buffer: once
	 * the records behind it have had their turn */
	return pl->cur.in_stage ? pull_step(ep, sp) : 0;
}

void sctpt_shm_loan_end(struct sctpt_ep *ep, struct sctpt_loan *loan)
{
	struct loans *ls = loan->ls;
	int moved = 0;
	loan->done = 1;
	while (ls->n && ls->slot[ls->head].done) {
		ls->head = (ls->head + 1) % LOANS;
		ls->n--;
		moved = 1;
	}
	if (!ls->sp) {
		if (!ls->n) {
			data_unmap(ls->peeked ? ep->shm : NULL, ls->map, ls->len);
			free(ls);
		}
		return;
	}
	if (moved) /* as after reading: the sender may want the room */
		publish(ls->sp, PUB_CAUGHT_UP);
}

/* A DATA record holding a whole message larger than what a completion carries inline, for a
 * handler that releases it promptly: the completion points into the ring. 1 if lent. */
static int lend(struct sctpt_ep *ep, struct sctpt_shm_peer *sp, const struct sctpt_shm_rec *h,
		const uint8_t *body, size_t pay)
{
	struct loans *ls = sp->ls;
	uint8_t env[SCTPT_HDR_LEN]; /* ours: the sender may write on */
	struct sctpt_hdr hdr;
	if (!ls) {
		if (!(ls = sp->ls = calloc(1, sizeof(*ls))))
			return 0;
		ls->sp = sp;
		ls->map = sp->in.map2;
		ls->len = sp->in.len2;
	}
	memcpy(env, body, SCTPT_HDR_LEN);
	if (ls->n == LOANS || !ls->map || sctpt_hdr_decode(env, SCTPT_HDR_LEN, &hdr) != 0)
		return 0; /* (a bad envelope: the usual path says what is wrong with it) */
	struct sctpt_loan *l = &ls->slot[(ls->head + ls->n) % LOANS];
	l->ls = ls;
	l->start = sp->rlast;
	l->done = 0;
	ls->n++;
	if (sctpt_rx_lent(ep, sp->p, h->stream, &hdr, body + SCTPT_HDR_LEN, pay, l)) {
		sp->nlent++;
		return 1;
	}
	ls->n--; /* not one to lend: untouched */
	return 0;
}

/* A DATA record (header checked): a message or fragment, through the receive path. */
static void data_record(struct sctpt_ep *ep, struct sctpt_shm_peer *sp,
			const struct sctpt_shm_rec *h, const uint8_t *body)
{
	struct sctpt_rxcur *c = &ep->cur;
	size_t pay = h->len - SCTPT_HDR_LEN;
	if (pay <= SCTPT_CQE_INLINE ? sctpt_rx_small(ep, sp->p, h->stream, body, pay) :
				      ep->cfg.shm_lend && lend(ep, sp, h, body, pay))
		return;
	memcpy(ep->stage->data, body, SCTPT_HDR_LEN);
	sctpt_rx_begin(ep, sp->p, h->stream, SCTPT_HDR_LEN);
	if (!c->discard && pay) {
		size_t k = pay < c->cap ? pay : c->cap;
		memcpy(c->dst, body + SCTPT_HDR_LEN, k);
		sctpt_rx_account(ep, 0, k);
		pay -= k;
	}
	sctpt_rx_account(ep, 1, pay); /* more than the envelope said: its error */
	sctpt_rx_end(ep);
	memset(c, 0, sizeof(*c));
}

/* The record of need bytes at sp->rpos is taken (read, lent, or a PAD skipped). */
static inline void consumed(struct sctpt_shm_peer *sp, uint64_t need)
{
	sp->rlast = sp->rpos;
	sp->rpos += need;
}

/* Where sp's ring should have a record it has not (seq, 0 or anything else): nothing yet,
 * or a corrupted ring. 0 or -EPROTO. */
static int ring_check(struct sctpt_ep *ep, struct sctpt_shm_peer *sp, uint32_t seq)
{
	struct ring *r = &sp->in;
	const struct sctpt_shm_rec *rec = (const void *)(r->data + (sp->rpos & (r->size - 1)));
	sp->suspect = 0;
	if (seq != 0)
		return corrupt(ep, sp->p, "sequence %#x at %llu, expected 0 or %#x", seq,
			       (unsigned long long)sp->rpos, SCTPT_SHM_SEQ(sp->rpos));
	/* the sender stores a record's seq before write_pos: seeing write_pos past us, the
	 * record is there */
	uint64_t wp = atomic_load_explicit(&r->hdr->write_pos, memory_order_acquire);
	if (wp == sp->rpos)
		return 0;
	/* the sender stores write_pos just after a record's seq: caught between the two, it
	 * says where the record we consumed last starts */
	if (wp == sp->rlast)
		return 0;
	seq = atomic_load_explicit((_Atomic uint32_t *)&rec->seq, memory_order_acquire);
	if (wp < sp->rpos || wp - sp->rpos > r->size || seq != SCTPT_SHM_SEQ(sp->rpos))
		return corrupt(ep, sp->p, "written up to %llu, but no record at %llu",
			       (unsigned long long)wp, (unsigned long long)sp->rpos);
	return 0;
}

/* Reads sp's ring: up to budget records. Returns how many. */
static int in_poll(struct sctpt_ep *ep, struct sctpt_shm_peer *sp, int budget)
{
	struct sctpt_peer *p = sp->p;
	int count = 0, caught_up = 0;
	int was_active = sp->pl.active;
	if (was_active) {
		int rc = pull_step(ep, sp);
		if (rc < 0)
			return 1;
		count += rc;
	}
	while (count < budget && sp->in.hdr) {
		struct ring *r = &sp->in;
		uint64_t off = sp->rpos & (r->size - 1);
		const struct sctpt_shm_rec *rec = (const void *)(r->data + off);
		uint32_t seq = atomic_load_explicit((_Atomic uint32_t *)&rec->seq,
						    memory_order_acquire);
		if (seq != SCTPT_SHM_SEQ(sp->rpos) && (seq != 0 || sp->suspect) &&
		    ring_check(ep, sp, seq) != 0)
			return count + 1;
		if (seq != SCTPT_SHM_SEQ(sp->rpos)) {
			caught_up = 1;
			break;
		}
		struct sctpt_shm_rec h; /* ours: the sender may write on */
		memcpy((uint8_t *)&h + 4, (const uint8_t *)rec + 4, SCTPT_SHM_REC_LEN - 4);
		uint64_t need = line_up(SCTPT_SHM_REC_LEN + (uint64_t)h.len);
		if (need > r->size - off) {
			corrupt(ep, p, "record of %u bytes at %llu runs past the ring's end", h.len,
				(unsigned long long)sp->rpos);
			return count + 1;
		}
		if (h.kind == SCTPT_SHM_PAD) {
			if (need != r->size - off) {
				corrupt(ep, p, "padding of %u bytes short of the ring's end", h.len);
				return count + 1;
			}
			consumed(sp, need);
			continue;
		}
		if ((h.kind != SCTPT_SHM_DATA && h.kind != SCTPT_SHM_PULL) ||
		    h.stream >= ep->cfg.streams || h.len < SCTPT_HDR_LEN) {
			corrupt(ep, p, "record kind %u, stream %u, %u bytes", h.kind, h.stream, h.len);
			return count + 1;
		}
		/* behind a pull under way: only other streams' messages go by (CLOSE waits) */
		if (sp->pl.active &&
		    (h.kind == SCTPT_SHM_PULL || h.stream == sp->pl.stream || h.stream == 0))
			break;
		const uint8_t *body = (const uint8_t *)rec + SCTPT_SHM_REC_LEN;
		consumed(sp, need);
		count++;
		/* where the next record starts: the sender zeroed it (or wrote there) before this
		 * one became valid, so the line is on its way while this one is delivered rather
		 * than after it */
		__builtin_prefetch(r->data + (sp->rpos & (r->size - 1)));
		if (h.kind == SCTPT_SHM_DATA)
			data_record(ep, sp, &h, body);
		else if (pull_start(ep, sp, &h, body) < 0)
			return count;
	}
	if (sp->pl.active && !was_active && pull_step(ep, sp) < 0)
		return count;
	if (sp->in.hdr)
		publish(sp, caught_up ? PUB_CAUGHT_UP : PUB_BATCH);
	return count;
}

/* ---- progress ---- */

/* Anything for in_poll or out_poll? */
static int work_waiting(const struct sctpt_shm *sh)
{
	for (int i = 0; i < sh->npeers; i++) {
		const struct sctpt_shm_peer *sp = sh->peers[i];
		const struct ring *r = &sp->in;
		if (!STAILQ_EMPTY(&sp->pulls) || sp->pl.active || sp->suspect)
			return 1;
		if (r->hdr && atomic_load_explicit((_Atomic uint32_t *)(r->data + (sp->rpos &
										 (r->size - 1))),
						   memory_order_relaxed) != 0)
			return 1; /* a record (or a corrupted ring) */
	}
	return 0;
}

/* The engine may be half-way through a message: its receive state and staging buffer wait
 * aside while the rings use the receive path. */
struct parking {
	struct sctpt_rxcur cur;
	struct sctpt_rxbuf *stage;
};

static void park(struct sctpt_ep *ep, struct parking *pk)
{
	pk->stage = ep->stage;
	ep->stage = ep->shm->stage;
	if (!ep->cur.active) { /* nothing to keep: the rings leave cur inactive too */
		ep->cur_parked = NULL;
		return;
	}
	pk->cur = ep->cur;
	ep->cur_parked = &pk->cur;
	memset(&ep->cur, 0, sizeof(ep->cur));
}

static void unpark(struct sctpt_ep *ep, struct parking *pk)
{
	ep->shm->stage = ep->stage;
	ep->stage = pk->stage;
	if (ep->cur_parked)
		ep->cur = pk->cur;
	ep->cur_parked = NULL;
}

/* The table for sctpt_shm_quiet, after a progress (lock held). */
static void peek_update(struct sctpt_shm *sh)
{
	int k = 0;
	if (sh->poke || sh->connecting || sh->hellos || sh->npeers > PEEK_MAX)
		k = -1;
	for (int i = 0; i < sh->npeers && k >= 0; i++) {
		struct sctpt_shm_peer *sp = sh->peers[i];
		const struct ring *r = &sp->in;
		sp->peek_slot = -1;
		if (!STAILQ_EMPTY(&sp->pulls) || sp->pl.active || sp->suspect) {
			k = -1;
		} else if (r->hdr) {
			const struct sctpt_shm_rec *rec =
				(const void *)(r->data + (sp->rpos & (r->size - 1)));
			sp->peeked = 1;
			sp->peek_slot = k;
			atomic_store_explicit(&sh->peek[k++], &rec->seq, memory_order_relaxed);
		}
	}
	for (int i = 0; k < 0 && i < sh->npeers; i++)
		sh->peers[i]->peek_slot = -1;
	atomic_store_explicit(&sh->npeek, k, memory_order_release);
}

int sctpt_shm_quiet(struct sctpt_ep *ep)
{
	struct sctpt_shm *sh = ep->shm;
	/* a plain count (a lost one costs nothing): now and then the lock path, for the clock */
	unsigned c = atomic_load_explicit(&sh->peek_calls, memory_order_relaxed);
	atomic_store_explicit(&sh->peek_calls, c + 1, memory_order_relaxed);
	int n = atomic_load_explicit(&sh->npeek, memory_order_acquire);
	if (c % PEEK_SLOW == 0 || n < 0 || !__atomic_load_n(&sh->quiet, __ATOMIC_RELAXED))
		return 0;
	for (int i = 0; i < n; i++) {
		const _Atomic uint32_t *seq = atomic_load_explicit(&sh->peek[i],
								   memory_order_relaxed);
		if (atomic_load_explicit(seq, memory_order_relaxed) != 0)
			return 0; /* a record, or something progress will find wrong */
	}
	return 1;
}

/*
 * Express: the record at the head of a ring, a whole small message that can be handed out now
 * (nothing queued before it for the handlers, nobody dispatching), goes to its handler from
 * here, copied aside, without a completion entry or the rest of a progress call. Whatever is
 * not plainly that -- another kind of record, a pull under way, a bad record, a message held
 * for order, a ring not set up -- is left for sctpt_shm_progress, which also runs every
 * EXPRESS_FULL calls (sockets, the engine, the other rings).
 */
int sctpt_shm_express(struct sctpt_ep *ep)
{
	struct sctpt_shm *sh = ep->shm;
	sctpt_complete_fn fn;
	void *arg;
	struct sctpt_cqe c;
	/* what the lock-free look watches: nothing there (it looked for another reason), no lock */
	int np = atomic_load_explicit(&sh->npeek, memory_order_acquire), seen = np < 0;
	for (int i = 0; i < np && !seen; i++)
		seen = atomic_load_explicit(atomic_load_explicit(&sh->peek[i], memory_order_relaxed),
					    memory_order_relaxed) != 0;
	if (!seen)
		return 0;
	sctpt_lock(ep);
	int n = sh->npeers;
	if (++sh->express_calls % EXPRESS_FULL == 0 || sh->poke || sh->connecting || sh->hellos ||
	    ep->ndone || !n)
		goto no;
	int i = sh->express_next < n ? sh->express_next : 0;
	for (int k = 0; k < n; k++, i = i + 1 < n ? i + 1 : 0) {
		struct sctpt_shm_peer *sp = sh->peers[i];
		struct ring *r = &sp->in;
		if (!r->hdr || sp->pl.active || sp->suspect)
			continue;
		uint64_t off = sp->rpos & (r->size - 1);
		const struct sctpt_shm_rec *rec = (const void *)(r->data + off);
		if (atomic_load_explicit((_Atomic uint32_t *)&rec->seq, memory_order_acquire) !=
		    SCTPT_SHM_SEQ(sp->rpos))
			continue; /* nothing (or something for sctpt_shm_progress to report) */
		struct sctpt_shm_rec h; /* ours: the sender may write on */
		memcpy((uint8_t *)&h + 4, (const uint8_t *)rec + 4, SCTPT_SHM_REC_LEN - 4);
		uint64_t need = line_up(SCTPT_SHM_REC_LEN + (uint64_t)h.len);
		if (h.kind != SCTPT_SHM_DATA || h.len < SCTPT_HDR_LEN || need > r->size - off ||
		    !sctpt_rx_express(ep, sp->p, h.stream, (const uint8_t *)rec + SCTPT_SHM_REC_LEN,
				      h.len - SCTPT_HDR_LEN, sh->express_data, &c, &fn, &arg))
			goto no; /* its turn is first: the whole progress takes it */
		consumed(sp, need);
		__builtin_prefetch(r->data + (sp->rpos & (r->size - 1)));
		publish(sp, PUB_BATCH);
		/* the lock-free look watches where the next record will be */
		if (sp->peek_slot >= 0 && sp->peek_slot < atomic_load_explicit(&sh->npeek,
										 memory_order_relaxed))
			atomic_store_explicit(&sh->peek[sp->peek_slot],
					      (const _Atomic uint32_t *)(r->data + (sp->rpos &
										     (r->size - 1))),
					      memory_order_relaxed);
		sh->express_next = i + 1;
		sp->nexpress++;
		sctpt_unlock(ep);
		fn(arg, &c);
		sctpt_cq_express_end(ep);
		return 1;
	}
no:
	sctpt_unlock(ep);
	return 0;
}

int sctpt_shm_progress(struct sctpt_ep *ep)
{
	struct sctpt_shm *sh = ep->shm;
	struct parking pk;
	int n = 0;
	uint64_t now = 0;
	if (sh->poke || sh->connecting || sh->hellos ||
	    (++sh->calls % CLOCK_EVERY == 0 && (now = now_ms()) >= sh->poll_ms)) {
		park(ep, &pk); /* a peer that went away has its last records read */
		sh->poke = 0;
		sh->poll_ms = (now ? now : now_ms()) + POLL_MS;
		n += poll_sockets(ep);
		unpark(ep, &pk);
	}
	if (!work_waiting(sh)) {
		peek_update(sh);
		return n;
	}
	park(ep, &pk);
	for (int i = 0; i < sh->npeers; i++) {
		struct sctpt_shm_peer *sp = sh->peers[i];
		if (sp->in.hdr)
			n += in_poll(ep, sp, REC_BUDGET);
		if (!STAILQ_EMPTY(&sp->pulls))
			n += out_poll(ep, sp);
	}
	unpark(ep, &pk);
	peek_update(sh);
	return n;
}

/* Does any peer talk SCTP (or might, having talked to us)? */
static int engine_busy(struct sctpt_ep *ep)
{
	if (ep->cur.active || ep->rail_peers)
		return 1;
	for (int i = 0; i < ep->npeers; i++) {
		const struct sctpt_peer *p = ep->peers[i];
		int shm_out = p->shm && (p->shm->out_state == OUT_UP ||
					 p->shm->out_state == OUT_CONNECTING);
		if (p->anonymous || p->assoc_in || (p->state != SCTPT_PEER_IDLE && !shm_out &&
						    p->state != SCTPT_PEER_FAILED))
			return 1;
	}
	return 0;
}

int sctpt_shm_engine_due(struct sctpt_ep *ep)
{
	struct sctpt_shm *sh = ep->shm;
	if (sh->engine_ms && ++sh->engine_calls % CLOCK_EVERY)
		return !sh->quiet;
	uint64_t now = now_ms();
	if (now >= sh->engine_ms) { /* who talks SCTP is looked at every POLL_MS */
		sh->quiet = !engine_busy(ep);
		sh->engine_ms = now + POLL_MS;
		return 1;
	}
	return !sh->quiet;
}

int sctpt_shm_unacked(struct sctpt_ep *ep)
{
	struct sctpt_shm *sh = ep->shm;
	int n = 0;
	for (int i = 0; i < sh->npeers; i++)
		if (sh->peers[i]->p->state != SCTPT_PEER_FAILED)
			n += (int)(sh->peers[i]->pulls_sent - sh->peers[i]->pulls_acked);
	return n;
}

/* ---- tripwires ---- */

/* Something to do for the rings (lock held). arm: also tell the senders of full rings and
 * unread pulls that we wait for them; and check a ring that looks empty against what its
 * sender says it wrote. */
static int rings_ready(struct sctpt_ep *ep, int arm)
{
	struct sctpt_shm *sh = ep->shm;
	for (int i = 0; i < sh->npeers; i++) {
		struct sctpt_shm_peer *sp = sh->peers[i];
		struct ring *r = &sp->in;
		if (r->hdr) {
			if (sp->pl.active)
				return 1;
			if (arm)
				publish(sp, PUB_NOW); /* a sender may wait for room meanwhile */
			const struct sctpt_shm_rec *rec = (const void *)(r->data + (sp->rpos &
										    (r->size - 1)));
			if (atomic_load_explicit((_Atomic uint32_t *)&rec->seq,
						 memory_order_acquire) != 0)
				return 1; /* a record, or a corrupted ring: progress sees which */
			if (arm && atomic_load_explicit(&r->hdr->write_pos, memory_order_acquire) !=
					   sp->rpos) {
				sp->suspect = 1;
				atomic_store_explicit(&sh->npeek, -1, memory_order_relaxed);
				return 1;
			}
		}
		if (sp->out.hdr && (!STAILQ_EMPTY(&sp->pulls) || sp->p->tx_queued)) {
			if (arm)
				atomic_store_explicit(&sp->out.hdr->sender_waiting, 1,
						      memory_order_relaxed);
			if (atomic_load_explicit(&sp->out.hdr->read_pos, memory_order_acquire) !=
				    sp->rcache ||
			    atomic_load_explicit(&sp->out.hdr->pulls_done, memory_order_acquire) !=
				    sp->pulls_acked)
				return 1;
		}
	}
	return 0;
}

int sctpt_shm_idle(struct sctpt_ep *ep, int timeout_ms)
{
	struct sctpt_shm *sh = ep->shm;
	struct timespec t0, t;
	long spin = ep->cfg.shm_spin_us;
	if (timeout_ms >= 0 && spin > 1000L * timeout_ms)
		spin = 1000L * timeout_ms;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int k = 0; spin > 0; k++) {
		sctpt_lock(ep);
		int ready = rings_ready(ep, 0);
		sctpt_unlock(ep);
		if (ready)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 >= spin)
			break;
		CPU_RELAX();
	}
	sctpt_lock(ep);
	if (sh->sleepers++ == 0)
		atomic_store_explicit(&sh->ctl->armed, 1, memory_order_relaxed);
	/* either a writer sees the wire armed, or we see what it wrote */
	atomic_thread_fence(memory_order_seq_cst);
	int ready = rings_ready(ep, 1);
	if (ready && --sh->sleepers == 0)
		atomic_store_explicit(&sh->ctl->armed, 0, memory_order_relaxed);
	sctpt_unlock(ep);
	return ready;
}

void sctpt_shm_awake(struct sctpt_ep *ep)
{
	struct sctpt_shm *sh = ep->shm;
	sctpt_lock(ep);
	if (--sh->sleepers == 0)
		atomic_store_explicit(&sh->ctl->armed, 0, memory_order_relaxed);
	sh->poke = 1;      /* the sockets may be why we woke */
	atomic_store_explicit(&sh->npeek, -1, memory_order_relaxed);
	sh->engine_ms = 0; /* ... the engine's too */
	sctpt_unlock(ep);
}

int sctpt_shm_pid(struct sctpt_ep *ep, struct sctpt_peer *p)
{
	struct sctpt_shm_peer *sp = p->shm;
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (!ep->shm || !ep->cfg.shm_pull_min)
		return -ENOTSUP;
	if (sp->in.hdr) /* it sent to us: the kernel named it, and we tried reading it */
		return sp->in.hdr->pull ? sp->pid : -ENOTSUP;
	if (sp->out_state == OUT_UP &&
	    getsockopt(sp->out_fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.pid > 0)
		return cr.pid;
	return -ENOTSUP;
}

void sctpt_shm_stats(struct sctpt_ep *ep, struct sctpt_peer *p, struct sctpt_peer_stats *st)
{
	struct sctpt_shm_peer *sp = p->shm;
	(void)ep;
	st->shm = sp->used;
	st->shm_pulls = sp->npulls;
	st->shm_ring_full = sp->ring_full;
	st->shm_wakeups = sp->wakeups;
	st->shm_lent = sp->nlent;
	st->shm_express = sp->nexpress;
}

/* ---- one-sided access to a peer's memory ---- */

static int peer_rw(struct sctpt_ep *ep, sctpt_peer_t id, int write, void *local, uint64_t remote,
		   size_t len)
{
	sctpt_lock(ep);
	struct sctpt_peer *p = sctpt_peer_get(ep, id);
	int pid = !p ? -EINVAL : p->state == SCTPT_PEER_FAILED || p->state == SCTPT_PEER_CLOSED ?
		  -EPIPE : !p->shm ? -ENOTSUP : sctpt_shm_pid(ep, p);
	sctpt_unlock(ep);
	if (pid < 0)
		return sctpt_err(pid, "peer %d: no access to its memory: %s", id, strerror(-pid));
	size_t done = 0;
	while (done < len) { /* the kernel may stop short, at a page it could not pin */
		struct iovec l = {(uint8_t *)local + done, len - done};
		struct iovec r = {(void *)(uintptr_t)(remote + done), len - done};
		ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) :
				    process_vm_readv(pid, &l, 1, &r, 1, 0);
		if (n <= 0) {
			int e = n < 0 ? errno : EFAULT;
			int rc = e == EPERM ? -ENOTSUP : e == ESRCH ? -EPIPE : -EFAULT;
			return sctpt_err(rc, "peer %d: %s %zu bytes at %#llx: %s", id,
					 write ? "writing" : "reading", len - done,
					 (unsigned long long)(remote + done), strerror(e));
		}
		done += (size_t)n;
	}
	return 0;
}

int sctpt_peer_read(struct sctpt_ep *ep, sctpt_peer_t peer, void *local, uint64_t remote,
		    size_t len)
{
	return peer_rw(ep, peer, 0, local, remote, len);
}

int sctpt_peer_write(struct sctpt_ep *ep, sctpt_peer_t peer, const void *local, uint64_t remote,
		     size_t len)
{
	return peer_rw(ep, peer, 1, (void *)local, remote, len);
}

int sctpt_peer_mem(struct sctpt_ep *ep, sctpt_peer_t id)
{
	int m = 0;
	sctpt_lock(ep);
	struct sctpt_peer *p = sctpt_peer_get(ep, id);
	struct sctpt_shm_peer *sp = p ? p->shm : NULL;
	if (sp && ep->shm && ep->cfg.shm_pull_min && p->state != SCTPT_PEER_FAILED &&
	    p->state != SCTPT_PEER_CLOSED) {
		/* each end tried reading the other's memory when it accepted its ring */
		if (sp->in.hdr && sp->in.hdr->pull)
			m |= SCTPT_MEM_READ;
		if (sp->out_state == OUT_UP && sp->pull)
			m |= SCTPT_MEM_PEER_READS;
	}
	sctpt_unlock(ep);
	return m;
}

/* ---- fuzzing the receiving side ---- */

int sctpt_shm_fuzz_ring(struct sctpt_ep *ep, sctpt_peer_t peer, const uint8_t *data, size_t len,
			uint64_t write_pos)
{
	struct parking pk;
	uint32_t size = SCTPT_SHM_MIN_RING;
	sctpt_lock(ep);
	struct sctpt_peer *p = sctpt_peer_get(ep, peer);
	struct sctpt_shm_peer *sp = p ? p->shm : NULL;
	if (!ep->shm || !sp || sp->in.hdr) {
		sctpt_unlock(ep);
		return -EINVAL;
	}
	while (size < len && size < (1u << 20))
		size *= 2;
	void *h = mmap(NULL, SCTPT_SHM_HDR_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *d = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED || d == MAP_FAILED) {
		if (h != MAP_FAILED)
			munmap(h, SCTPT_SHM_HDR_SIZE);
		if (d != MAP_FAILED)
			munmap(d, size);
		sctpt_unlock(ep);
		return -ENOMEM;
	}
	memcpy(d, data, len < size ? len : size);
	mprotect(d, size, PROT_READ); /* as the receiver maps a ring */
	struct sctpt_shm_ring_hdr *hd = h;
	hd->magic = SCTPT_SHM_MAGIC;
	hd->version = SCTPT_SHM_VERSION;
	hd->size = size;
	hd->pull = 1; /* pulls read this process's own memory */
	atomic_store(&hd->write_pos, write_pos);
	sp->in = (struct ring){.hdr = hd, .data = d, .size = size, .map1 = h,
			       .len1 = SCTPT_SHM_HDR_SIZE, .map2 = d, .len2 = size};
	sp->pid = (int)getpid();
	sp->rpos = sp->rpub = sp->rlast = 0;
	park(ep, &pk);
	for (int k = 0; k < 8 && sp->in.hdr; k++) {
		sp->suspect = k == 4; /* as before a sleep: what the sender claims is checked */
		in_poll(ep, sp, REC_BUDGET);
	}
	unpark(ep, &pk);
	if (sp->in.hdr)
		in_teardown(ep->shm, sp);
	sp->suspect = 0;
	if (p->state == SCTPT_PEER_FAILED) {
		p->state = SCTPT_PEER_IDLE;
		p->error = 0;
		sp->out_state = OUT_NONE;
	}
	sctpt_unlock(ep);
	sctpt_cq_dispatch(ep);
	return 0;
}
