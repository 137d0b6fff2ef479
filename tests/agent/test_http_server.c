// SPDX-License-Identifier: GPL-2.0-only
/*
 * The endpoint's health and readiness: /healthz alive from the first
 * publish on, /readyz only while ready, each saying why not; silent
 * connections shed; over a real socket on a port the kernel picks.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/http_server.h"
#include "util/clock.h"

/* GET path over HTTP/1.0: the status, and the body into body. */
static int get(const struct http_server *h, const char *path, char *body, size_t sz)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)http_server__port(h)) };
	char buf[1024], req[128];
	size_t len = 0;
	ssize_t n;
	int fd, status = -1;
	char *end;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", path);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (len + 1 < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
	sscanf(buf, "HTTP/1.%*d %d", &status);
	end = strstr(buf, "\r\n\r\n");
	snprintf(body, sz, "%s", end ? end + 4 : "");
	return status;
}

static char *text(const char *s)
{
	char *t = strdup(s);

	assert_non_null(t);
	return t;
}

static void test_health_and_readiness(void **state)
{
	char err[256], body[256];
	struct http_server *h = http_server__start("127.0.0.1:0", err, sizeof(err));

	(void)state;
	assert_non_null(h);
	/* Nothing published: the agent is still attaching. */
	assert_int_equal(get(h, "/healthz", body, sizeof(body)), 503);
	assert_string_equal(body, "starting: attaching\n");
	assert_int_equal(get(h, "/readyz", body, sizeof(body)), 503);
	assert_int_equal(get(h, "/metrics", body, sizeof(body)), 503);

	/* Serving, not ready: alive, and both say why. */
	http_server__publish(h, text("m 1\n"), 4, "the cold start");
	assert_int_equal(get(h, "/healthz", body, sizeof(body)), 200);
	assert_string_equal(body, "ok; not ready: the cold start\n");
	assert_int_equal(get(h, "/readyz", body, sizeof(body)), 503);
	assert_string_equal(body, "not ready: the cold start\n");
	assert_int_equal(get(h, "/metrics", body, sizeof(body)), 200);
	assert_string_equal(body, "m 1\n");

	http_server__publish(h, text("m 2\n"), 4, NULL);
	assert_int_equal(get(h, "/healthz", body, sizeof(body)), 200);
	assert_string_equal(body, "ok\n");
	assert_int_equal(get(h, "/readyz", body, sizeof(body)), 200);
	assert_string_equal(body, "ready\n");

	/* A reload that failed: still alive, not ready. */
	http_server__publish(h, text("m 3\n"), 4, "nothing attached");
	assert_int_equal(get(h, "/healthz", body, sizeof(body)), 200);
	assert_int_equal(get(h, "/readyz", body, sizeof(body)), 503);
	assert_int_equal(get(h, "/nothing", body, sizeof(body)), 404);
	http_server__free(h);
}

/* The agent's part: each ask on the scrape fd answered with a new exposition ("m <n>"). */
static void *owner(void *arg)
{
	struct http_server *h = arg;
	struct pollfd pfd = { .fd = http_server__scrape_fd(h), .events = POLLIN };
	uint64_t asks;

	for (int n = 10; n < 12; n++) {
		char *t = malloc(8);

		assert_int_equal(poll(&pfd, 1, 5000), 1);
		assert_int_equal(read(pfd.fd, &asks, sizeof(asks)), sizeof(asks));
		assert_non_null(t);
		snprintf(t, 8, "m %d\n", n);
		http_server__publish(h, t, strlen(t), NULL);
	}
	return NULL;
}

/* Once the owner takes the scrape fd, a scrape serves what it publishes after the ask; unanswered, the last one soon. */
static void test_scrape_asks_for_now(void **state)
{
	char err[256], body[256];
	struct http_server *h = http_server__start("127.0.0.1:0", err, sizeof(err));
	pthread_t t;
	double t0;

	(void)state;
	assert_non_null(h);
	http_server__publish(h, text("m 1\n"), 4, NULL);
	/* Nobody serves asks yet: the last exposition, at once. */
	assert_int_equal(get(h, "/metrics", body, sizeof(body)), 200);
	assert_string_equal(body, "m 1\n");
	/* Taken before the owner starts, or a scrape could come first and not ask. */
	http_server__scrape_fd(h);
	assert_int_equal(pthread_create(&t, NULL, owner, h), 0);
	assert_int_equal(get(h, "/metrics", body, sizeof(body)), 200);
	assert_string_equal(body, "m 10\n");
	assert_int_equal(get(h, "/metrics", body, sizeof(body)), 200);
	assert_string_equal(body, "m 11\n");
	assert_int_equal(pthread_join(t, NULL), 0);
	/* The owner is gone: the scrape waits its bound, then serves the last one. */
	t0 = mono_seconds();
	assert_int_equal(get(h, "/metrics", body, sizeof(body)), 200);
	assert_string_equal(body, "m 11\n");
	assert_true(mono_seconds() - t0 < 2);
	http_server__free(h);
}

/* A connection to the server that sends nothing. */
static int silent(const struct http_server *h)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)http_server__port(h)) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Closed by the server: its end reads as EOF or a reset. */
static bool closed(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&pfd, 1, 0) == 1 && read(fd, &c, 1) <= 0;
}

/*
 * Connections that send nothing hold no probe off: there is room for
 * them, and past the number kept the oldest are closed after a second.
 */
static void test_silent_clients_shed(void **state)
{
	enum { SILENT = 100, KEPT = 64 };
	char err[256], body[256];
	struct http_server *h = http_server__start("127.0.0.1:0", err, sizeof(err));
	int fds[SILENT], gone = 0;

	(void)state;
	assert_non_null(h);
	http_server__publish(h, text("m 1\n"), 4, NULL);
	for (int i = 0; i < SILENT; i++)
		fds[i] = silent(h);
	assert_int_equal(get(h, "/healthz", body, sizeof(body)), 200);
	usleep(1500 * 1000);	/* past the age the pressure sheds at */
	for (int i = 0; i < SILENT; i++)
		gone += closed(fds[i]);
	assert_true(gone >= SILENT - KEPT);
	assert_int_equal(get(h, "/metrics", body, sizeof(body)), 200);
	for (int i = 0; i < SILENT; i++)
		close(fds[i]);
	http_server__free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health_and_readiness),
		cmocka_unit_test(test_scrape_asks_for_now),
		cmocka_unit_test(test_silent_clients_shed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
