// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>

#include "agent/otlp_push.h"

struct request {
	uint8_t *data;
	size_t len;
};

struct otlp_push {
	CURL *curl;
	struct curl_slist *headers;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;		/* the fields below */
	pthread_cond_t wake;
	pthread_cond_t idle;		/* nothing queued or in flight any more */
	bool busy;			/* a request is in flight */
	struct request queue[OTLP_QUEUE_MAX];
	size_t head, n;
	bool stop;
	struct otlp_push_stats st;
};

int otlp_metrics_url(const char *base, char *buf, size_t sz)
{
	static const char suffix[] = "v1/metrics";
	size_t n = strlen(base);
	const char *path;
	int len;

	if (strncmp(base, "http://", 7) && strncmp(base, "https://", 8))
		return -EINVAL;
	path = strchr(base + (base[4] == 's' ? 8 : 7), '/');
	if (path && n >= sizeof(suffix) && !strcmp(base + n - (sizeof(suffix) - 1), suffix) &&
	    base[n - sizeof(suffix)] == '/')
		len = snprintf(buf, sz, "%s", base);
	else
		len = snprintf(buf, sz, "%s%s%s", base, n && base[n - 1] == '/' ? "" : "/", suffix);
	return len < 0 || (size_t)len >= sz ? -ENAMETOOLONG : 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* s[0..n) trimmed and %-decoded into a new string. */
static char *decoded(const char *s, size_t n)
{
	char *out, *o;

	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	out = o = malloc(n + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			*o++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

static bool is_token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return false;
	return true;
}

int otlp_header_lines(const char *headers, char **lines, size_t max)
{
	const char *s = headers;
	size_t n = 0;

	while (s && *s) {
		const char *end = strchr(s, ','), *eq;
		size_t len = end ? (size_t)(end - s) : strlen(s);
		char *name, *value;

		eq = memchr(s, '=', len);
		if (!eq || n == max)
			goto bad;
		name = decoded(s, (size_t)(eq - s));
		value = decoded(eq + 1, len - (size_t)(eq - s) - 1);
		if (!name || !value || !is_token(name) || strpbrk(value, "\r\n") ||
		    asprintf(&lines[n], "%s: %s", name, value) < 0) {
			free(name);
			free(value);
			goto bad;
		}
		n++;
		free(name);
		free(value);
		s = end ? end + 1 : NULL;
	}
	return (int)n;
bad:
	while (n)
		free(lines[--n]);
	return -EINVAL;
}

static size_t discard(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	(void)ptr; (void)ctx;
	return size * nmemb;
}

/* One attempt: 1 taken, 0 to retry (the endpoint is down or busy), -1 refused. */
static int send_one(struct otlp_push *p, const struct request *r)
{
	long status = 0;

	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, r->data);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE, (long)r->len);
	if (curl_easy_perform(p->curl) != CURLE_OK)
		return 0;
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return 1;
	/* The spec's retryable answers: too many requests, bad gateway, unavailable, gateway timeout. */
	if (status == 429 || status == 502 || status == 503 || status == 504)
		return 0;
	return -1;
}

/* The CLOCK_REALTIME moment s seconds from now, as pthread_cond_timedwait() takes it. */
static struct timespec realtime_in(double s)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += (time_t)s;
	t.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

static void sleep_unless_stopped(struct otlp_push *p, double s)
{
	struct timespec until = realtime_in(s);
	while (!p->stop)
		if (pthread_cond_timedwait(&p->wake, &p->lock, &until))
			break;
}

/* Under the lock: the oldest waiting request, out of the queue. */
static struct request pop(struct otlp_push *p)
{
	struct request r = p->queue[p->head];

	p->queue[p->head] = (struct request){};
	p->head = (p->head + 1) % OTLP_QUEUE_MAX;
	p->n--;
	return r;
}

/*
 * The oldest request is taken out of the queue and sent, outside the
 * lock, until the endpoint takes or refuses it; between attempts, the
 * backoff. A full queue meanwhile makes it the one that goes.
 */
static void *run(void *arg)
{
	struct otlp_push *p = arg;
	double backoff = OTLP_BACKOFF_FIRST_S;
	struct request r = {};

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		int ret;

		if (!r.data) {
			if (!p->n) {
				pthread_cond_wait(&p->wake, &p->lock);
				continue;
			}
			r = pop(p);
			p->busy = true;
		}
		pthread_mutex_unlock(&p->lock);
		ret = send_one(p, &r);
		pthread_mutex_lock(&p->lock);
		if (ret == 0) {
			p->st.failures++;
			sleep_unless_stopped(p, backoff);
			backoff = backoff * 2 > OTLP_BACKOFF_MAX_S ? OTLP_BACKOFF_MAX_S : backoff * 2;
			if (p->n < OTLP_QUEUE_MAX)
				continue;
		}
		if (ret > 0)
			p->st.sent++;
		else
			p->st.dropped++;
		free(r.data);
		r = (struct request){};
		p->busy = false;
		if (!p->n)
			pthread_cond_broadcast(&p->idle);
		if (ret > 0)
			backoff = OTLP_BACKOFF_FIRST_S;
	}
	pthread_mutex_unlock(&p->lock);
	free(r.data);
	return NULL;
}

void otlp_push__enqueue(struct otlp_push *p, uint8_t *data, size_t len)
{
	pthread_mutex_lock(&p->lock);
	if (p->n == OTLP_QUEUE_MAX) {
		free(pop(p).data);
		p->st.dropped++;
	}
	p->queue[(p->head + p->n) % OTLP_QUEUE_MAX] = (struct request){ data, len };
	p->n++;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

void otlp_push__drain(struct otlp_push *p, double timeout_s)
{
	struct timespec until = realtime_in(timeout_s);
	pthread_mutex_lock(&p->lock);
	while (p->n || p->busy)
		if (pthread_cond_timedwait(&p->idle, &p->lock, &until))
			break;
	pthread_mutex_unlock(&p->lock);
}

void otlp_push__stats(struct otlp_push *p, struct otlp_push_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	pthread_mutex_unlock(&p->lock);
}

static int setup_curl(struct otlp_push *p, const struct otlp_push_opts *o, char *err, size_t err_sz)
{
	char *lines[OTLP_MAX_HEADERS];
	int n = otlp_header_lines(o->headers, lines, OTLP_MAX_HEADERS);

	if (n < 0) {
		snprintf(err, err_sz, "OTLP headers: '%s' is not name=value[,name=value...] (at most %d)",
			 o->headers, OTLP_MAX_HEADERS);
		return -EINVAL;
	}
	p->headers = curl_slist_append(NULL, "Content-Type: application/x-protobuf");
	for (int i = 0; i < n; i++) {
		if (p->headers)
			p->headers = curl_slist_append(p->headers, lines[i]);
		free(lines[i]);
	}
	p->curl = curl_easy_init();
	if (!p->curl || !p->headers) {
		snprintf(err, err_sz, "cannot set up the OTLP client: out of memory");
		return -ENOMEM;
	}
	curl_easy_setopt(p->curl, CURLOPT_URL, o->url);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, p->headers);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT, (long)OTLP_TIMEOUT_S);
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (o->ca_file)
		curl_easy_setopt(p->curl, CURLOPT_CAINFO, o->ca_file);
	return 0;
}

struct otlp_push *otlp_push__new(const struct otlp_push_opts *o, char *err, size_t err_sz)
{
	struct otlp_push *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(err, err_sz, "cannot set up the OTLP client: out of memory");
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->idle, NULL);
	if (setup_curl(p, o, err, err_sz))
		goto fail;
	if (pthread_create(&p->thread, NULL, run, p)) {
		snprintf(err, err_sz, "cannot start the OTLP push thread");
		goto fail;
	}
	p->started = true;
	return p;
fail:
	otlp_push__free(p);
	return NULL;
}

void otlp_push__free(struct otlp_push *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	if (p->started)
		pthread_join(p->thread, NULL);
	while (p->n)
		free(pop(p).data);
	if (p->curl)
		curl_easy_cleanup(p->curl);
	curl_slist_free_all(p->headers);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->idle);
	free(p);
}
