// SPDX-License-Identifier: GPL-2.0-only
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

#include "agent/http_server.h"
#include "agent/prom_text.h"

/*
 * How long a scrape waits for the exposition it asked for: a window's
 * close, or a reload, may hold the agent's loop; past it the last one is
 * served, at most a refresh old.
 */
#define SCRAPE_FRESH_WAIT_MS 250

struct http_server {
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;	/* the fields below: published by the agent, read by MHD's thread */
	char *text;
	size_t len;
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct http_server *h = cls;
	enum MHD_Result ret;

	(void)version; (void)upload; (void)upload_size; (void)state;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		__atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "only GET\n", 9);
	}
	pthread_mutex_lock(&h->lock);
	if (!strcmp(url, "/metrics")) {
		h->scrapes++;
		if (h->text)
			wait_fresh(h);
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
	if (h->scrape_fd < 0 || init_sync(h)) {
		snprintf(err, err_sz, "cannot make the scrape's event: %s", strerror(errno));
		if (h->scrape_fd >= 0)
			close(h->scrape_fd);
		free(h);
		return NULL;
	}
	/* One thread polls every connection: scrapes are rare and small. */
	/*
	 * No MHD_USE_ERROR_LOG: libmicrohttpd's own lines are not logfmt and
	 * name the wrong port on a failed bind; the failure is said below.
	 */
	h->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
				     (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				     0, NULL, NULL, on_request, h,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				     MHD_OPTION_CONNECTION_LIMIT, 16u,
				     MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				     MHD_OPTION_END);
	if (!h->daemon) {
		snprintf(err, err_sz, "cannot listen on %s (in use, or not an address of this machine); choose another with --listen",
			 listen);
		pthread_mutex_destroy(&h->lock);
		pthread_cond_destroy(&h->published_cond);
		close(h->scrape_fd);
		free(h);
		return NULL;
	}
	info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info ? info->port : 0;
	return h;
}

unsigned int http_server__port(const struct http_server *h)
{
	return h->port;
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
	if (!h)
		return;
	MHD_stop_daemon(h->daemon);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->published_cond);
	close(h->scrape_fd);
	free(h->text);
	free(h);
}
