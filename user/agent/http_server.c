// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

#include "agent/http_server.h"
#include "agent/http_shed.h"
#include "agent/prom_proto.h"
#include "agent/prom_text.h"
#include "util/clock.h"

/*
 * How long a scrape waits for the exposition it asked for: a window's
 * close, or a reload, may hold the agent's loop; past it the last one is
 * served, at most a refresh old.
 */
#define SCRAPE_FRESH_WAIT_MS 250

/*
 * Connections at most: libmicrohttpd refuses one past it before any
 * callback of ours sees it, so slow clients are shed well below it
 * (HTTP_CONN_KEEP) and a probe or a scrape finds a free slot. No per-IP
 * limit: the kubelet's probes and a local client share the node's address.
 */
#define HTTP_CONN_LIMIT 256
/* Past this many connections, requests still being read are shed, the oldest first... */
#define HTTP_CONN_KEEP 64
/* ...once they are this old: new connections do not churn through each other. */
#define HTTP_SHED_MIN_AGE_MS 1000
/*
 * A request is read and answered within this, or its connection closes:
 * libmicrohttpd's own timeout is one of idleness, which a client sending
 * a byte now and then never trips. A probe or a scrape sends its request
 * at once and is answered in at most SCRAPE_FRESH_WAIT_MS and its transfer.
 */
#define HTTP_REQUEST_DEADLINE_MS 5000
/*
 * What libmicrohttpd keeps per connection (the request's headers and the
 * answer's): with HTTP_CONN_LIMIT, what slow clients can make the agent
 * hold. A probe's or a scrape's headers take a few hundred bytes.
 */
#define HTTP_CONN_MEMORY_BYTES (16 * 1024)
/* How often the deadlines are looked at while no socket wakes the thread. */
#define HTTP_SWEEP_MS 250

/* One connection's current request; its slot is libmicrohttpd's socket context. */
struct http_conn {
	struct MHD_Connection *c;	/* NULL: a free slot */
	uint64_t since_ms;	/* the accept, or the end of the previous answer */
	bool answering;		/* the request was read whole */
	bool shed;		/* shut down: libmicrohttpd closes it at its next turn */
};

struct http_server {
	struct MHD_Daemon *daemon;
	pthread_t thread;	/* runs the daemon, and sheds; owns conns */
	int wake_fd;		/* an eventfd: the thread stops */
	struct http_conn conns[HTTP_CONN_LIMIT];
	pthread_mutex_t lock;	/* the fields below: published by the agent, read by MHD's thread */
	char *text;
	size_t len;
	char *proto;		/* the same exposition in protobuf; NULL: none yet */
	size_t proto_len;
	bool wants_proto;	/* a scrape asked for protobuf: the owner renders it too from now on */
	bool published;		/* once: the agent's loop serves */
	const char *not_ready;	/* why /readyz says 503; NULL: ready */
	unsigned long scrapes;
	unsigned long bad;
	unsigned long publishes;	/* how many so far: a scrape waits for the next */
	pthread_cond_t published_cond;
	bool scrape_asks;	/* the owner serves asks (http_server__scrape_fd) */
	int scrape_fd;		/* an eventfd: a scrape asks for an exposition of now */
	unsigned int port;
};

/* Under h->lock: ask the owner for an exposition of now, and wait for it (or SCRAPE_FRESH_WAIT_MS). */
static void wait_fresh(struct http_server *h)
{
	unsigned long seen = h->publishes;
	uint64_t one = 1;
	struct timespec until;

	if (!h->scrape_asks || write(h->scrape_fd, &one, sizeof(one)) != sizeof(one))
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += SCRAPE_FRESH_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	while (h->publishes == seen)
		if (pthread_cond_timedwait(&h->published_cond, &h->lock, &until))
			break;
}

/* ADDR:PORT, [ADDR6]:PORT or :PORT into a socket address. */
static int parse_listen(const char *listen, struct sockaddr_storage *ss, char *err, size_t err_sz)
{
	const char *colon = strrchr(listen, ':');
	char host[64];
	unsigned long port;
	char *end;
	size_t hlen;

	if (!colon)
		goto bad;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port > 65535)
		goto bad;
	hlen = (size_t)(colon - listen);
	if (hlen >= 2 && listen[0] == '[' && listen[hlen - 1] == ']') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		snprintf(host, sizeof(host), "%.*s", (int)(hlen - 2), listen + 1);
		*a6 = (struct sockaddr_in6){ .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
		if (hlen - 2 >= sizeof(host) || inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			goto bad;
		return 0;
	}
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		*a4 = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
		if (!hlen)
			return 0;	/* INADDR_ANY */
		snprintf(host, sizeof(host), "%.*s", (int)hlen, listen);
		if (hlen >= sizeof(host) || inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			goto bad;
	}
	return 0;
bad:
	snprintf(err, err_sz, "--listen: '%s' is not ADDR:PORT (e.g. 127.0.0.1:9464, [::1]:9464, :9464)", listen);
	return -EINVAL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *type, const char *body,
			     size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* "ok" once the agent serves, with why it is not ready yet when it is not; "starting" before. */
static enum MHD_Result health(struct MHD_Connection *c, const struct http_server *h)
{
	char body[160];
	int len;

	if (!h->published)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "starting: attaching\n", 20);
	len = snprintf(body, sizeof(body), "ok%s%s\n", h->not_ready ? "; not ready: " : "",
		       h->not_ready ? h->not_ready : "");
	return reply(c, MHD_HTTP_OK, "text/plain", body, (size_t)len < sizeof(body) ? (size_t)len : sizeof(body) - 1);
}

static enum MHD_Result readiness(struct MHD_Connection *c, const struct http_server *h)
{
	char body[160];
	int len;

	if (!h->published)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "starting: attaching\n", 20);
	if (!h->not_ready)
		return reply(c, MHD_HTTP_OK, "text/plain", "ready\n", 6);
	len = snprintf(body, sizeof(body), "not ready: %s\n", h->not_ready);
	return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", body,
		     (size_t)len < sizeof(body) ? (size_t)len : sizeof(body) - 1);
}

static uint64_t mono_ms(void)
{
	return mono_ns() / 1000000u;
}

static struct http_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* A connection opened (its request's clock starts) or closed (its slot is free). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode what)
{
	struct http_server *h = cls;
	struct http_conn *conn = *socket_context;

	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (conn)
			*conn = (struct http_conn){};
		return;
	}
	/* As many slots as libmicrohttpd takes connections: one is free. */
	for (size_t i = 0; i < HTTP_CONN_LIMIT; i++) {
		if (h->conns[i].c)
			continue;
		h->conns[i] = (struct http_conn){ .c = c, .since_ms = mono_ms() };
		*socket_context = &h->conns[i];
		return;
	}
}

/* The request was read whole: the pressure leaves its connection alone while it is answered. */
static void mark_answering(struct MHD_Connection *c)
{
	struct http_conn *conn = conn_of(c);

	if (conn)
		conn->answering = true;
}

/* An answer went out (or failed): a kept-alive connection's next request starts its clock anew. */
static void on_completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode why)
{
	struct http_conn *conn = conn_of(c);

	(void)cls; (void)state; (void)why;
	if (!conn)
		return;
	conn->answering = false;
	conn->since_ms = mono_ms();
}

/*
 * Shut the socket down, not close it: libmicrohttpd owns the descriptor,
 * sees the end at its next turn and closes the connection itself.
 */
static void shed_conn(struct http_conn *conn)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn->c, MHD_CONNECTION_INFO_CONNECTION_FD);

	if (info && !shutdown(info->connect_fd, SHUT_RDWR))
		conn->shed = true;
}

/* Close what the policy picks among the connections not yet shed (http_shed.h). */
static void shed_slow(struct http_server *h)
{
	static const struct http_shed_limits lim = {
		.deadline_ms = HTTP_REQUEST_DEADLINE_MS,
		.keep = HTTP_CONN_KEEP,
		.min_age_ms = HTTP_SHED_MIN_AGE_MS,
	};
	struct http_conn_age ages[HTTP_CONN_LIMIT];
	struct http_conn *live[HTTP_CONN_LIMIT];
	bool shed[HTTP_CONN_LIMIT];
	uint64_t now = mono_ms();
	size_t n = 0;

	for (size_t i = 0; i < HTTP_CONN_LIMIT; i++) {
		struct http_conn *conn = &h->conns[i];

		if (!conn->c || conn->shed)
			continue;
		live[n] = conn;
		ages[n++] = (struct http_conn_age){ .age_ms = now - conn->since_ms, .answering = conn->answering };
	}
	if (!http_shed__pick(&lim, ages, n, shed))
		return;
	for (size_t i = 0; i < n; i++)
		if (shed[i])
			shed_conn(live[i]);
}

/*
 * The server's thread: libmicrohttpd's turns, driven from here rather than
 * from a thread of its own so that the deadlines are looked at after each
 * turn, and at least every HTTP_SWEEP_MS, on the thread that owns the
 * connections. Epoll: the agent may hold more descriptors than select takes.
 */
static void *serve(void *arg)
{
	struct http_server *h = arg;
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	struct pollfd fds[2] = {
		{ .fd = info ? info->epoll_fd : -1, .events = POLLIN },
		{ .fd = h->wake_fd, .events = POLLIN },
	};

	while (!(fds[1].revents & POLLIN)) {
		MHD_UNSIGNED_LONG_LONG next_ms;
		int wait_ms = HTTP_SWEEP_MS;

		if (MHD_get_timeout(h->daemon, &next_ms) == MHD_YES && next_ms < (MHD_UNSIGNED_LONG_LONG)wait_ms)
			wait_ms = (int)next_ms;
		if (poll(fds, 2, wait_ms) < 0)
			fds[1].revents = 0;	/* EINTR, or no memory for now: a turn, and again */
		MHD_run(h->daemon);
		shed_slow(h);
	}
	return NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct http_server *h = cls;
	enum MHD_Result ret;

	(void)version; (void)upload; (void)upload_size; (void)state;
	mark_answering(c);
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		__atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "only GET\n", 9);
	}
	pthread_mutex_lock(&h->lock);
	if (!strcmp(url, "/metrics")) {
		/* Before the first protobuf exposition is rendered, the text answers (the scraper takes either). */
		bool proto = prom_proto_accepted(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));

		h->scrapes++;
		h->wants_proto |= proto;
		if (h->text)
			wait_fresh(h);
		if (proto && h->proto)
			ret = reply(c, MHD_HTTP_OK, PROM_PROTO_CONTENT_TYPE, h->proto, h->proto_len);
		else
			ret = h->text ? reply(c, MHD_HTTP_OK, PROM_CONTENT_TYPE, h->text, h->len)
				      : reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "starting\n", 9);
	} else if (!strcmp(url, "/healthz")) {
		ret = health(c, h);
	} else if (!strcmp(url, "/readyz")) {
		ret = readiness(c, h);
	} else {
		h->bad++;
		ret = reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found: /metrics, /healthz, /readyz\n", 39);
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

/* The lock, and the condition a scrape waits on, timed by the monotonic clock. */
static int init_sync(struct http_server *h)
{
	pthread_condattr_t attr;
	int ret;

	ret = pthread_condattr_init(&attr);
	if (!ret)
		ret = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&h->published_cond, &attr);
	pthread_condattr_destroy(&attr);
	if (ret) {
		errno = ret;
		return -ret;
	}
	pthread_mutex_init(&h->lock, NULL);
	return 0;
}

static void close_events(struct http_server *h)
{
	if (h->scrape_fd >= 0)
		close(h->scrape_fd);
	if (h->wake_fd >= 0)
		close(h->wake_fd);
}

/*
 * Driven by serve() (MHD_USE_EPOLL, no thread of its own). No
 * MHD_USE_ERROR_LOG: libmicrohttpd's own lines are not logfmt and name
 * the wrong port on a failed bind; the caller says the failure.
 */
static struct MHD_Daemon *start_daemon(struct http_server *h, const struct sockaddr_storage *ss)
{
	return MHD_start_daemon(MHD_USE_EPOLL | (ss->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, on_request, h,
				MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONN_LIMIT,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY_BYTES,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)(HTTP_REQUEST_DEADLINE_MS / 1000),
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
				MHD_OPTION_END);
}

/* The server's thread, with every signal blocked: the process's signals are its owner's to take. */
static int start_thread(struct http_server *h)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&h->thread, NULL, serve, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

struct http_server *http_server__start(const char *listen, char *err, size_t err_sz)
{
	struct sockaddr_storage ss = {};
	struct http_server *h;
	const union MHD_DaemonInfo *info;

	if (parse_listen(listen, &ss, err, err_sz))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, err_sz, "out of memory");
		return NULL;
	}
	h->scrape_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	h->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->scrape_fd < 0 || h->wake_fd < 0 || init_sync(h)) {
		snprintf(err, err_sz, "cannot make the endpoint's events: %s", strerror(errno));
		close_events(h);
		free(h);
		return NULL;
	}
	h->daemon = start_daemon(h, &ss);
	if (!h->daemon) {
		snprintf(err, err_sz, "cannot listen on %s (in use, or not an address of this machine); choose another with --listen",
			 listen);
		goto fail;
	}
	if (start_thread(h)) {
		snprintf(err, err_sz, "cannot start the endpoint's thread: out of memory or threads");
		goto fail;
	}
	info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : 0;
	return h;
fail:
	if (h->daemon)
		MHD_stop_daemon(h->daemon);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->published_cond);
	close_events(h);
	free(h);
	return NULL;
}

unsigned int http_server__port(const struct http_server *h)
{
	return h->port;
}

bool http_server__wants_proto(struct http_server *h)
{
	bool wants;

	pthread_mutex_lock(&h->lock);
	wants = h->wants_proto;
	pthread_mutex_unlock(&h->lock);
	return wants;
}

void http_server__publish_proto(struct http_server *h, char *proto, size_t len)
{
	char *old;

	pthread_mutex_lock(&h->lock);
	old = h->proto;
	h->proto = proto;
	h->proto_len = len;
	pthread_mutex_unlock(&h->lock);
	free(old);
}

void http_server__publish(struct http_server *h, char *text, size_t len, const char *not_ready)
{
	char *old;

	pthread_mutex_lock(&h->lock);
	old = h->text;
	h->text = text;
	h->len = len;
	h->published = true;
	h->not_ready = not_ready;
	h->publishes++;
	pthread_cond_broadcast(&h->published_cond);
	pthread_mutex_unlock(&h->lock);
	free(old);
}

int http_server__scrape_fd(struct http_server *h)
{
	pthread_mutex_lock(&h->lock);
	h->scrape_asks = true;
	pthread_mutex_unlock(&h->lock);
	return h->scrape_fd;
}

void http_server__counts(struct http_server *h, unsigned long *scrapes, unsigned long *bad)
{
	pthread_mutex_lock(&h->lock);
	*scrapes = h->scrapes;
	*bad = h->bad;
	pthread_mutex_unlock(&h->lock);
}

void http_server__free(struct http_server *h)
{
	uint64_t one = 1;

	if (!h)
		return;
	/* The thread ends before the daemon does: it drives the daemon's turns. */
	if (write(h->wake_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(h->thread, NULL);
	MHD_stop_daemon(h->daemon);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->published_cond);
	close_events(h);
	free(h->text);
	free(h->proto);
	free(h);
}
