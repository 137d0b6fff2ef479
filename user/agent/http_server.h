/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's HTTP endpoint (libmicrohttpd, its own thread): GET /metrics
 * serves the last published exposition; once the owner takes the scrape
 * fd, a scrape first asks it for an exposition of now and waits for it,
 * up to a quarter of a second. GET /healthz (liveness) says 200
 * from the first publish on: the agent's loop serves, whether or not its
 * probes count yet. GET /readyz (readiness) says 200 while the agent
 * calls itself ready and 503 with its reason otherwise. Both say 503
 * before the first publish. Requests that take too long to arrive are
 * closed, the slowest first (http_shed.h), so that slow clients cannot
 * hold every connection. A scrape that asks for the protobuf exposition
 * (Accept) is served it once the owner publishes one.
 */
#ifndef DLPROF_AGENT_HTTP_SERVER_H
#define DLPROF_AGENT_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#define HTTP_LISTEN_DEFAULT "127.0.0.1:9464"

struct http_server;

/*
 * Listen on ADDR:PORT (IPv4, [IPv6], or :PORT for every address; port 0:
 * one the kernel picks). NULL with a one-line message in err.
 */
struct http_server *http_server__start(const char *listen, char *err, size_t err_sz);
/* The port it listens on (the kernel's pick for port 0). */
unsigned int http_server__port(const struct http_server *h);
/*
 * Serve text (taken over, malloc'd) from now on. not_ready: why /readyz
 * says 503 (a string that outlives the server), NULL: ready.
 */
void http_server__publish(struct http_server *h, char *text, size_t len, const char *not_ready);
/*
 * Has a scrape asked for the protobuf exposition (prom_proto.h)? From
 * then on the owner renders it beside the text at each publish.
 */
bool http_server__wants_proto(struct http_server *h);
/*
 * The protobuf exposition (taken over, malloc'd) served from now on to
 * scrapes that ask for it; published before the text it goes with, whose
 * http_server__publish wakes the waiting scrapes.
 */
void http_server__publish_proto(struct http_server *h, char *proto, size_t len);
/*
 * An eventfd that becomes readable when a scrape asks for an exposition
 * of now (read it to reset): the owner publishes, and the scrape serves
 * that. Until it is taken, scrapes serve the last exposition at once.
 */
int http_server__scrape_fd(struct http_server *h);
/* Scrapes served, and requests answered 404/405. */
void http_server__counts(struct http_server *h, unsigned long *scrapes, unsigned long *bad);
void http_server__free(struct http_server *h);

#endif /* DLPROF_AGENT_HTTP_SERVER_H */
