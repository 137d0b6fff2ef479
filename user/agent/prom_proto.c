// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "agent/agent_pb.h"
#include "agent/pb_arena.h"
#include "agent/prom_proto.h"

struct prom_proto {
	struct pb_arena arena;		/* the open family's messages */
	Io__Prometheus__Client__MetricFamily fam;
	bool open;
	size_t cap;			/* of fam.metric (malloc'd) */
	unsigned char *out;
	size_t len, out_cap;
	bool failed;
};

struct prom_proto *prom_proto__new(void)
{
	return calloc(1, sizeof(struct prom_proto));
}

void prom_proto__free(struct prom_proto *p)
{
	if (!p)
		return;
	pb_arena_clear(&p->arena);
	free(p->fam.metric);
	free(p->out);
	free(p);
}

static bool reserve(struct prom_proto *p, size_t more)
{
	size_t cap = p->out_cap ? p->out_cap : 16384;
	unsigned char *n;

	if (p->len + more <= p->out_cap)
		return true;
	while (cap < p->len + more)
		cap *= 2;
	n = realloc(p->out, cap);
	if (!n)
		return false;
	p->out = n;
	p->out_cap = cap;
	return true;
}

/* The open family, length-delimited (a varint, then the message), onto the stream; its messages go. */
static void flush(struct prom_proto *p)
{
	size_t sz;

	if (!p->open)
		return;
	p->open = false;
	if (p->arena.failed)
		p->failed = true;
	sz = io__prometheus__client__metric_family__get_packed_size(&p->fam);
	if (!p->failed && reserve(p, sz + 10)) {
		for (size_t v = sz;; v >>= 7) {
			p->out[p->len++] = (unsigned char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
			if (v < 0x80)
				break;
		}
		p->len += io__prometheus__client__metric_family__pack(&p->fam, p->out + p->len);
	} else {
		p->failed = true;
	}
	pb_arena_clear(&p->arena);
	p->fam.n_metric = 0;
}

static Io__Prometheus__Client__MetricType type_of(const char *type)
{
	if (!strcmp(type, "counter"))
		return IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER;
	if (!strcmp(type, "gauge"))
		return IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE;
	if (!strcmp(type, "histogram"))
		return IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM;
	return IO__PROMETHEUS__CLIENT__METRIC_TYPE__UNTYPED;
}

void prom_proto__family(struct prom_proto *p, const char *name, const char *type, const char *help)
{
	Io__Prometheus__Client__Metric **metric = p->fam.metric;

	flush(p);
	io__prometheus__client__metric_family__init(&p->fam);
	p->fam.metric = metric;
	p->fam.name = pb_strdup(&p->arena, name);
	p->fam.help = pb_strdup(&p->arena, help);
	p->fam.has_type = true;
	p->fam.type = type_of(type);
	p->open = true;
}

static Io__Prometheus__Client__LabelPair *label(struct pb_arena *a, const char *name, const char *value)
{
	Io__Prometheus__Client__LabelPair *lp = pb_alloc(a, sizeof(*lp));

	if (!lp)
		return NULL;
	io__prometheus__client__label_pair__init(lp);
	lp->name = pb_strdup(a, name);
	lp->value = pb_strdup(a, value);
	return lp;
}

/* A metric of the open family with these labels (those with a value); NULL when out of memory. */
static Io__Prometheus__Client__Metric *add_metric(struct prom_proto *p, const struct prom_label *l, size_t nl,
						  const char *extra_name, const char *extra_value)
{
	struct pb_arena *a = &p->arena;
	Io__Prometheus__Client__Metric *m;

	if (!p->open)
		return NULL;
	if (p->fam.n_metric == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		void *n = realloc(p->fam.metric, cap * sizeof(*p->fam.metric));

		if (!n) {
			a->failed = true;
			return NULL;
		}
		p->fam.metric = n;
		p->cap = cap;
	}
	m = pb_alloc(a, sizeof(*m));
	if (!m)
		return NULL;
	io__prometheus__client__metric__init(m);
	m->label = pb_alloc(a, (nl + 1) * sizeof(*m->label));
	if (!m->label)
		return NULL;
	for (size_t i = 0; i < nl; i++)
		if (l[i].value)
			m->label[m->n_label++] = label(a, l[i].name, l[i].value);
	if (extra_name)
		m->label[m->n_label++] = label(a, extra_name, extra_value);
	p->fam.metric[p->fam.n_metric++] = m;
	return m;
}

void prom_proto__sample(struct prom_proto *p, const struct prom_label *l, size_t nl, const char *extra_name,
			const char *extra_value, double value)
{
	Io__Prometheus__Client__Metric *m = add_metric(p, l, nl, extra_name, extra_value);
	struct pb_arena *a = &p->arena;

	if (!m)
		return;
	switch (p->fam.type) {
	case IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER:
		m->counter = pb_alloc(a, sizeof(*m->counter));
		if (m->counter) {
			io__prometheus__client__counter__init(m->counter);
			m->counter->has_value = true;
			m->counter->value = value;
		}
		break;
	case IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE:
		m->gauge = pb_alloc(a, sizeof(*m->gauge));
		if (m->gauge) {
			io__prometheus__client__gauge__init(m->gauge);
			m->gauge->has_value = true;
			m->gauge->value = value;
		}
		break;
	default:
		m->untyped = pb_alloc(a, sizeof(*m->untyped));
		if (m->untyped) {
			io__prometheus__client__untyped__init(m->untyped);
			m->untyped->has_value = true;
			m->untyped->value = value;
		}
		break;
	}
}

static uint64_t whole(double v)
{
	return v > 0 ? (uint64_t)llround(v) : 0;
}

static void classic_buckets(struct pb_arena *a, Io__Prometheus__Client__Histogram *hg, const struct prom_hist *h)
{
	hg->bucket = pb_alloc(a, (h->nr_bounds + 1) * sizeof(*hg->bucket));
	if (!hg->bucket)
		return;
	for (size_t k = 0; k < h->nr_bounds; k++) {
		Io__Prometheus__Client__Bucket *b = pb_alloc(a, sizeof(*b));

		if (!b)
			return;
		io__prometheus__client__bucket__init(b);
		b->has_cumulative_count = b->has_upper_bound = true;
		b->cumulative_count = whole(h->cum[k]);
		b->upper_bound = h->upper_s[k];
		hg->bucket[hg->n_bucket++] = b;
	}
}

/* Gaps of more than this many empty buckets start a new span: fewer bytes than sending the zeros. */
#define SPAN_GAP 2

static void add_span(struct pb_arena *a, Io__Prometheus__Client__Histogram *hg, int32_t offset, uint32_t length)
{
	Io__Prometheus__Client__BucketSpan *s = pb_alloc(a, sizeof(*s));

	if (!s)
		return;
	io__prometheus__client__bucket_span__init(s);
	s->has_offset = s->has_length = true;
	s->offset = offset;
	s->length = length;
	hg->positive_span[hg->n_positive_span++] = s;
}

/* Spans and deltas: each bucket's count as the difference to the bucket sent before it. */
static void native_buckets(struct pb_arena *a, Io__Prometheus__Client__Histogram *hg, const struct native_hist *nh)
{
	int32_t span_start = 0, prev_end = 0;	/* in index space; prev_end: one past the last sent */
	int64_t prev = 0;
	size_t k = 0;

	hg->has_schema = hg->has_zero_threshold = hg->has_zero_count = true;
	hg->schema = NATIVE_HIST_SCHEMA;
	hg->zero_threshold = 0;
	hg->zero_count = nh->zero_count;
	hg->positive_span = pb_alloc(a, (nh->n + 1) * sizeof(*hg->positive_span));
	hg->positive_delta = pb_alloc(a, (nh->n + 1) * sizeof(*hg->positive_delta));
	if (!hg->positive_span || !hg->positive_delta)
		return;
	while (k < nh->n) {
		size_t end = k + 1, zeros = 0;

		/* A span runs until more than SPAN_GAP empty buckets follow; it ends before them. */
		for (; end < nh->n; end++) {
			zeros = nh->counts[end] ? 0 : zeros + 1;
			if (zeros > SPAN_GAP) {
				end -= zeros - 1;
				break;
			}
		}
		span_start = nh->first + (int32_t)k;
		add_span(a, hg, hg->n_positive_span ? span_start - prev_end : span_start, (uint32_t)(end - k));
		for (; k < end; k++) {
			hg->positive_delta[hg->n_positive_delta++] = (int64_t)nh->counts[k] - prev;
			prev = (int64_t)nh->counts[k];
		}
		prev_end = nh->first + (int32_t)end;
		while (k < nh->n && !nh->counts[k])
			k++;
	}
}

void prom_proto__histogram(struct prom_proto *p, const struct prom_label *l, size_t nl, const struct prom_hist *h)
{
	Io__Prometheus__Client__Metric *m = add_metric(p, l, nl, NULL, NULL);
	struct pb_arena *a = &p->arena;
	Io__Prometheus__Client__Histogram *hg;

	if (!m)
		return;
	hg = m->histogram = pb_alloc(a, sizeof(*hg));
	if (!hg)
		return;
	io__prometheus__client__histogram__init(hg);
	hg->has_sample_count = hg->has_sample_sum = true;
	hg->sample_count = h->native ? h->native->count : whole(h->count);
	hg->sample_sum = h->sum;
	classic_buckets(a, hg, h);
	if (h->native)
		native_buckets(a, hg, h->native);
}

char *prom_proto__take(struct prom_proto *p, size_t *len)
{
	char *out;

	flush(p);
	if (p->failed || !reserve(p, 1)) {
		free(p->out);
		p->out = NULL;
		p->len = p->out_cap = 0;
		p->failed = false;
		return NULL;
	}
	out = (char *)p->out;
	*len = p->len;
	p->out = NULL;
	p->len = p->out_cap = 0;
	return out;
}

/* "application/vnd.google.protobuf" with proto=io.prometheus.client.MetricFamily and encoding=delimited. */
bool prom_proto_accepted(const char *accept)
{
	const char *s = accept;

	while (s && *s) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s);
		char one[512];

		snprintf(one, sizeof(one), "%.*s", (int)(n < sizeof(one) ? n : sizeof(one) - 1), s);
		if (strstr(one, "application/vnd.google.protobuf") && strstr(one, "proto=io.prometheus.client.MetricFamily") &&
		    strstr(one, "encoding=delimited"))
			return true;
		s = end ? end + 1 : NULL;
	}
	return false;
}
