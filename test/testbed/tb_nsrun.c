/*
 * tb_nsrun - run a program in another network namespace, keeping its PMIx server reachable.
 *
 *   tb_nsrun NETNS-PATH PROGRAM [ARGS...]
 *
 * Open MPI 4.1 with PMIx 4 does not give its ranks a unix-domain socket: the local PMIx
 * server (mpirun) listens on tcp4://127.0.0.1:PORT (PMIX_SERVER_URI*), and a rank moved to
 * another network namespace sees only that namespace's loopback.  So, before the program
 * starts, this listens on 127.0.0.1:PORT inside the target namespace, and relays every
 * connection made there to 127.0.0.1:PORT in our own namespace (a socket keeps the
 * namespace it was made in).  Then the child enters the namespace and execs PROGRAM; the
 * parent relays until the child ends, passes on SIGTERM/SIGINT/SIGHUP, and exits with the
 * child's status (128 + signal if killed).  The child dies with the parent (PDEATHSIG).
 *
 * MPICH's Hydra started with -pmi-port gives its ranks PMI_PORT=HOST:PORT (and PMI_ID, no
 * PMI_FD): the same relay then listens on 127.0.0.1:PORT in the namespace, the child gets
 * PMI_PORT=127.0.0.1:PORT, and connections go on to HOST:PORT from our namespace.  By
 * default Hydra hands each rank an already connected socket (PMI_FD) instead, which needs
 * no relay.  Without either (PMI_FD set, PMIx over a unix socket) it only enters the
 * namespace and execs.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>

#define MAX_PAIRS 64

static volatile sig_atomic_t child_pid;

static void pass_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* Where the relay's connections go (in our namespace): the rank's PMI server. */
static struct sockaddr_in target;

/* The TCP port of the PMIx server on 127.0.0.1, from PMIX_SERVER_URI*; 0 if none. */
static int pmix_port(void)
{
	static const char *vars[] = { "PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
				      "PMIX_SERVER_URI21", "PMIX_SERVER_URI2" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]), *p;
		if (v && (p = strstr(v, "tcp4://127.0.0.1:")))
			return atoi(p + strlen("tcp4://127.0.0.1:"));
	}
	return 0;
}

/* Hydra's PMI_PORT=HOST:PORT (only when there is no PMI_FD): resolves HOST into `target`
 * (here, before leaving our namespace) and returns PORT; 0 if none, -1 if unusable. */
static int pmi_port(void)
{
	const char *v = getenv("PMI_PORT"), *colon;
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res;
	char host[256];
	int port;

	if (!v || getenv("PMI_FD"))
		return 0;
	colon = strrchr(v, ':');
	port = colon ? atoi(colon + 1) : 0;
	if (!colon || colon == v || (size_t)(colon - v) >= sizeof(host) || port <= 0 || port > 65535) {
		fprintf(stderr, "tb_nsrun: PMI_PORT=%s: not HOST:PORT\n", v);
		return -1;
	}
	memcpy(host, v, (size_t)(colon - v));
	host[colon - v] = '\0';
	if (getaddrinfo(host, NULL, &hints, &res) || !res) {
		fprintf(stderr, "tb_nsrun: PMI_PORT=%s: cannot resolve %s\n", v, host);
		return -1;
	}
	memcpy(&target, res->ai_addr, sizeof(target));
	freeaddrinfo(res);
	target.sin_port = htons((uint16_t)port);
	return port;
}

/* A socket listening on 127.0.0.1:port (in the current namespace), or one connected to
 * `target`; -1 on error. */
static int tcp_socket(int port, int listening)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (listening) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64)) {
			close(fd);
			return -1;
		}
	} else if (connect(fd, (struct sockaddr *)&target, sizeof(target))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Copies what is readable from `from` to `to`; 0 on end of stream or error. */
static int pump(int from, int to)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n <= 0)
		return 0;
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return 0;
		off += w;
	}
	return 1;
}

/* Relays connections on lfd until the child ends; returns its exit status. */
static int relay(int lfd, int port)
{
	int pairs[MAX_PAIRS][2], npairs = 0, status;

	for (;;) {
		struct pollfd pfd[1 + 2 * MAX_PAIRS];
		int n = 0;

		if (waitpid(child_pid, &status, WNOHANG) == child_pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (int i = 0; i < npairs; i++) {
			pfd[n++] = (struct pollfd){ .fd = pairs[i][0], .events = POLLIN };
			pfd[n++] = (struct pollfd){ .fd = pairs[i][1], .events = POLLIN };
		}
		if (poll(pfd, (nfds_t)n, 100) <= 0)
			continue;
		if ((pfd[0].revents & POLLIN) && npairs < MAX_PAIRS) {
			int in = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), out = -1;
			if (in >= 0 && (out = tcp_socket(port, 0)) >= 0) {
				pairs[npairs][0] = in;
				pairs[npairs++][1] = out;
			} else if (in >= 0) {
				fprintf(stderr, "tb_nsrun: relay to %s:%d: %s\n", inet_ntoa(target.sin_addr),
					port, strerror(errno));
				close(in);
			}
			continue; /* the pollfd array no longer matches pairs */
		}
		for (int i = npairs - 1; i >= 0; i--) {
			int ok = 1;
			if (pfd[1 + 2 * i].revents)
				ok = pump(pairs[i][0], pairs[i][1]);
			if (ok && pfd[2 + 2 * i].revents)
				ok = pump(pairs[i][1], pairs[i][0]);
			if (!ok) {
				close(pairs[i][0]);
				close(pairs[i][1]);
				pairs[i][0] = pairs[npairs - 1][0];
				pairs[i][1] = pairs[npairs - 1][1];
				npairs--;
			}
		}
	}
}

int main(int argc, char **argv)
{
	int nsfd, hostfd, lfd = -1, port;
	pid_t parent = getpid();

	if (argc < 3) {
		fprintf(stderr, "usage: tb_nsrun NETNS-PATH PROGRAM [ARGS...]\n");
		return 127;
	}
	nsfd = open(argv[1], O_RDONLY | O_CLOEXEC);
	hostfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (nsfd < 0 || hostfd < 0) {
		fprintf(stderr, "tb_nsrun: %s: %s\n", argv[1], strerror(errno));
		return 127;
	}
	target.sin_family = AF_INET;
	target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	port = pmix_port();
	if (port > 0)
		target.sin_port = htons((uint16_t)port);
	else if ((port = pmi_port()) < 0)
		return 127;
	else if (port > 0) {
		char v[32];
		snprintf(v, sizeof(v), "127.0.0.1:%d", port);
		setenv("PMI_PORT", v, 1); /* the rank connects to the relay in its namespace */
	}
	if (port > 0) {
		if (setns(nsfd, CLONE_NEWNET)) {
			fprintf(stderr, "tb_nsrun: setns %s: %s\n", argv[1], strerror(errno));
			return 127;
		}
		lfd = tcp_socket(port, 1);
		if (lfd < 0 || setns(hostfd, CLONE_NEWNET)) {
			fprintf(stderr, "tb_nsrun: listen on 127.0.0.1:%d in %s: %s\n", port, argv[1],
				strerror(errno));
			return 127;
		}
	}
	if (lfd < 0) {   /* nothing to relay: just enter and exec */
		if (setns(nsfd, CLONE_NEWNET)) {
			fprintf(stderr, "tb_nsrun: setns %s: %s\n", argv[1], strerror(errno));
			return 127;
		}
		execvp(argv[2], argv + 2);
		fprintf(stderr, "tb_nsrun: %s: %s\n", argv[2], strerror(errno));
		return 127;
	}
	signal(SIGTERM, pass_signal);
	signal(SIGINT, pass_signal);
	signal(SIGHUP, pass_signal);
	child_pid = fork();
	if (child_pid < 0) {
		fprintf(stderr, "tb_nsrun: fork: %s\n", strerror(errno));
		return 127;
	}
	if (child_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (setns(nsfd, CLONE_NEWNET)) {
			fprintf(stderr, "tb_nsrun: setns %s: %s\n", argv[1], strerror(errno));
			_exit(127);
		}
		execvp(argv[2], argv + 2);
		fprintf(stderr, "tb_nsrun: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	return relay(lfd, port);
}
