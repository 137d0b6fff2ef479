// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_pb.h"
#include "agent/native_hist.h"
#include "agent/otlp_encode.h"
#include "agent/pb_arena.h"

typedef Opentelemetry__Proto__Common__V1__KeyValue KeyValue;
typedef Opentelemetry__Proto__Metrics__V1__Metric Metric;
typedef Opentelemetry__Proto__Metrics__V1__NumberDataPoint NumberDataPoint;
typedef Opentelemetry__Proto__Metrics__V1__ExponentialHistogramDataPoint ExpPoint;
typedef Opentelemetry__Proto__Metrics__V1__ResourceMetrics ResourceMetrics;

#define CUMULATIVE OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE

/* A growing array of message pointers, in the arena (a full one is copied into one twice its size). */
struct ptrs {
	void **v;
	size_t n, cap;
};

static void push(struct pb_arena *a, struct ptrs *p, void *item)
{
	if (!item)
		return;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		void **v = pb_alloc(a, cap * sizeof(*v));

		if (!v)
			return;
		if (p->n)
			memcpy(v, p->v, p->n * sizeof(*v));
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = item;
}

enum { M_CALLS, M_DURATION, M_CPU, M_EVENTS, NR_METRICS };

/* The data points of one container's resource, per metric. */
struct group {
	const char *namespace, *pod, *container;
	struct ptrs points[NR_METRICS];
};

struct encoder {
	struct pb_arena arena;
	const struct otlp_encode_opts *o;
	struct group *groups;
	size_t nr_groups;
	struct native_hist nh;		/* scratch */
};

static KeyValue *kv(struct pb_arena *a, const char *key, const char *value)
{
	KeyValue *k = pb_alloc(a, sizeof(*k));
	Opentelemetry__Proto__Common__V1__AnyValue *v = pb_alloc(a, sizeof(*v));

	if (!k || !v || !value)
		return NULL;
	opentelemetry__proto__common__v1__key_value__init(k);
	opentelemetry__proto__common__v1__any_value__init(v);
	k->key = (char *)key;
	v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = (char *)value;
	k->value = v;
	return k;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static struct group *group_of(struct encoder *e, const struct series_labels *l)
{
	struct group *g;

	for (size_t i = 0; i < e->nr_groups; i++) {
		g = &e->groups[i];
		if (same(g->namespace, l->namespace) && same(g->pod, l->pod) && same(g->container, l->container))
			return g;
	}
	g = realloc(e->groups, (e->nr_groups + 1) * sizeof(*g));
	if (!g) {
		e->arena.failed = true;
		return NULL;
	}
	e->groups = g;
	g = &e->groups[e->nr_groups++];
	*g = (struct group){ .namespace = l->namespace, .pod = l->pod, .container = l->container };
	return g;
}

/* A data point's attributes: the function's, and one more (an event's name) when extra_key is set. */
static KeyValue **point_attrs(struct pb_arena *a, const struct series_labels *l, const char *extra_key,
			      const char *extra_value, size_t *n)
{
	KeyValue **attrs = pb_alloc(a, 5 * sizeof(*attrs));

	*n = 0;
	if (!attrs)
		return NULL;
	attrs[(*n)++] = kv(a, "code.function.name", l->function);
	attrs[(*n)++] = kv(a, "dlprof.library", l->lib);
	if (l->caller)
		attrs[(*n)++] = kv(a, "dlprof.caller", l->caller);
	if (l->sampled)
		attrs[(*n)++] = kv(a, "dlprof.sampled", "true");
	if (extra_key)
		attrs[(*n)++] = kv(a, extra_key, extra_value);
	return attrs;
}

static NumberDataPoint *number(struct encoder *e, const struct series_labels *l, const char *extra_key,
			       const char *extra_value, double value)
{
	NumberDataPoint *p = pb_alloc(&e->arena, sizeof(*p));

	if (!p)
		return NULL;
	opentelemetry__proto__metrics__v1__number_data_point__init(p);
	p->attributes = point_attrs(&e->arena, l, extra_key, extra_value, &p->n_attributes);
	p->start_time_unix_nano = e->o->start_unix_ns;
	p->time_unix_nano = e->o->now_unix_ns;
	p->value_case = OPENTELEMETRY__PROTO__METRICS__V1__NUMBER_DATA_POINT__VALUE_AS_DOUBLE;
	p->as_double = value;
	return p;
}

/* OTLP numbers bucket i of Prometheus' (native_hist.h) i - 1: its bucket j holds (base^j, base^(j+1)]. */
static ExpPoint *exp_point(struct encoder *e, const struct series_labels *l, const struct series_values *v,
			   const double *fine_cum)
{
	struct pb_arena *a = &e->arena;
	ExpPoint *p = pb_alloc(a, sizeof(*p));
	Opentelemetry__Proto__Metrics__V1__ExponentialHistogramDataPoint__Buckets *b = pb_alloc(a, sizeof(*b));

	if (!p || !b)
		return NULL;
	native_hist_from_cum(fine_cum, &e->nh);
	opentelemetry__proto__metrics__v1__exponential_histogram_data_point__init(p);
	opentelemetry__proto__metrics__v1__exponential_histogram_data_point__buckets__init(b);
	p->attributes = point_attrs(a, l, NULL, NULL, &p->n_attributes);
	p->start_time_unix_nano = e->o->start_unix_ns;
	p->time_unix_nano = e->o->now_unix_ns;
	p->count = e->nh.count;
	p->sum = v->duration_sum_s;
	p->scale = NATIVE_HIST_SCHEMA;
	p->zero_count = e->nh.zero_count;
	p->zero_threshold = 0;
	b->offset = e->nh.first - 1;
	b->n_bucket_counts = e->nh.n;
	b->bucket_counts = pb_alloc(a, (e->nh.n + 1) * sizeof(*b->bucket_counts));
	if (!b->bucket_counts)
		return NULL;
	memcpy(b->bucket_counts, e->nh.counts, e->nh.n * sizeof(*b->bucket_counts));
	p->positive = b;
	return p;
}

static void add_series(void *ctx, const struct series_labels *l, const struct series_values *v,
		       const double *fine_cum)
{
	struct encoder *e = ctx;
	struct group *g = group_of(e, l);

	if (!g)
		return;
	push(&e->arena, &g->points[M_CALLS], number(e, l, NULL, NULL, v->calls));
	if (!v->timed)
		return;
	push(&e->arena, &g->points[M_DURATION], exp_point(e, l, v, fine_cum));
	push(&e->arena, &g->points[M_CPU], number(e, l, NULL, NULL, v->oncpu_s));
	for (size_t k = 0; k < e->o->nr_events; k++)
		push(&e->arena, &g->points[M_EVENTS], number(e, l, "dlprof.event", e->o->events[k], v->events[k]));
}

static const struct {
	const char *name, *unit, *description;
} metric_info[NR_METRICS] = {
	[M_CALLS] = { "dlprof.calls", "{call}", "Calls of the function (entries; exact unless dlprof.sampled)" },
	[M_DURATION] = { "dlprof.call.duration", "s", "Wall time of the calls whose return was seen" },
	[M_CPU] = { "dlprof.cpu.time", "s", "Time on a CPU during the timed calls" },
	[M_EVENTS] = { "dlprof.events", "{event}", "Perf event counts during the timed calls, per thread" },
};

static Metric *metric(struct pb_arena *a, int which, const struct ptrs *points)
{
	Metric *m = pb_alloc(a, sizeof(*m));

	if (!m || !points->n)
		return NULL;
	opentelemetry__proto__metrics__v1__metric__init(m);
	m->name = (char *)metric_info[which].name;
	m->unit = (char *)metric_info[which].unit;
	m->description = (char *)metric_info[which].description;
	if (which == M_DURATION) {
		m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_EXPONENTIAL_HISTOGRAM;
		m->exponential_histogram = pb_alloc(a, sizeof(*m->exponential_histogram));
		if (!m->exponential_histogram)
			return NULL;
		opentelemetry__proto__metrics__v1__exponential_histogram__init(m->exponential_histogram);
		m->exponential_histogram->aggregation_temporality = CUMULATIVE;
		m->exponential_histogram->n_data_points = points->n;
		m->exponential_histogram->data_points = (ExpPoint **)points->v;
		return m;
	}
	m->data_case = OPENTELEMETRY__PROTO__METRICS__V1__METRIC__DATA_SUM;
	m->sum = pb_alloc(a, sizeof(*m->sum));
	if (!m->sum)
		return NULL;
	opentelemetry__proto__metrics__v1__sum__init(m->sum);
	m->sum->aggregation_temporality = CUMULATIVE;
	m->sum->is_monotonic = true;
	m->sum->n_data_points = points->n;
	m->sum->data_points = (NumberDataPoint **)points->v;
	return m;
}

/* A resource: the node's attributes, and a container's when g is not NULL. */
static ResourceMetrics *resource(struct encoder *e, const struct group *g, struct ptrs *metrics)
{
	struct pb_arena *a = &e->arena;
	ResourceMetrics *rm = pb_alloc(a, sizeof(*rm));
	Opentelemetry__Proto__Resource__V1__Resource *res = pb_alloc(a, sizeof(*res));
	Opentelemetry__Proto__Metrics__V1__ScopeMetrics *sm = pb_alloc(a, sizeof(*sm));
	Opentelemetry__Proto__Common__V1__InstrumentationScope *scope = pb_alloc(a, sizeof(*scope));
	struct ptrs attrs = {};

	if (!rm || !res || !sm || !scope)
		return NULL;
	opentelemetry__proto__metrics__v1__resource_metrics__init(rm);
	opentelemetry__proto__resource__v1__resource__init(res);
	opentelemetry__proto__metrics__v1__scope_metrics__init(sm);
	opentelemetry__proto__common__v1__instrumentation_scope__init(scope);
	push(a, &attrs, kv(a, "service.name", "dlprof-bpf"));
	push(a, &attrs, kv(a, "service.version", e->o->service_version));
	push(a, &attrs, kv(a, "host.name", e->o->host_name));
	push(a, &attrs, kv(a, "k8s.node.name", e->o->node_name));
	if (g) {
		push(a, &attrs, kv(a, "k8s.namespace.name", g->namespace));
		push(a, &attrs, kv(a, "k8s.pod.name", g->pod));
		push(a, &attrs, kv(a, "container.id", g->container));
	}
	res->n_attributes = attrs.n;
	res->attributes = (KeyValue **)attrs.v;
	scope->name = "dlprof-bpf";
	scope->version = (char *)e->o->service_version;
	sm->scope = scope;
	sm->n_metrics = metrics->n;
	sm->metrics = (Metric **)metrics->v;
	rm->resource = res;
	rm->n_scope_metrics = 1;
	rm->scope_metrics = pb_alloc(a, sizeof(*rm->scope_metrics));
	if (!rm->scope_metrics)
		return NULL;
	rm->scope_metrics[0] = sm;
	return rm;
}

/* The node's own resource: what the push lost. */
static ResourceMetrics *agent_resource(struct encoder *e)
{
	static const struct series_labels none = { .function = "", .lib = "" };
	struct pb_arena *a = &e->arena;
	struct ptrs points = {}, metrics = {};
	Metric *m;
	NumberDataPoint *p = number(e, &none, NULL, NULL, (double)e->o->dropped);

	if (!p)
		return NULL;
	p->n_attributes = 0;
	push(a, &points, p);
	m = metric(a, M_CALLS, &points);
	if (!m)
		return NULL;
	m->name = "dlprof.agent.otlp.dropped";
	m->unit = "{request}";
	m->description = "OTLP export requests dropped: the queue was full while the endpoint was down, or it refused them";
	push(a, &metrics, m);
	return resource(e, NULL, &metrics);
}

uint8_t *otlp_encode(const struct metrics_registry *r, const struct otlp_encode_opts *o, size_t *len)
{
	Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest req;
	struct encoder *e = calloc(1, sizeof(*e));
	struct ptrs rms = {};
	uint8_t *out = NULL;

	if (!e)
		return NULL;
	e->o = o;
	metrics_registry__each(r, add_series, e);
	for (size_t i = 0; i < e->nr_groups; i++) {
		struct ptrs metrics = {};

		for (int k = 0; k < NR_METRICS; k++)
			push(&e->arena, &metrics, metric(&e->arena, k, &e->groups[i].points[k]));
		push(&e->arena, &rms, resource(e, &e->groups[i], &metrics));
	}
	push(&e->arena, &rms, agent_resource(e));
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__init(&req);
	req.n_resource_metrics = rms.n;
	req.resource_metrics = (ResourceMetrics **)rms.v;
	if (!e->arena.failed) {
		*len = opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__get_packed_size(&req);
		out = malloc(*len ? *len : 1);
		if (out)
			opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__pack(&req, out);
	}
	pb_arena_clear(&e->arena);
	free(e->groups);
	free(e);
	return out;
}
