// SPDX-License-Identifier: GPL-2.0-only
/* The OTLP request, decoded back with protobuf-c: resources per container, names, attributes, counts, buckets. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/agent_pb.h"
#include "agent/native_hist.h"
#include "agent/otlp_encode.h"

typedef Opentelemetry__Proto__Collector__Metrics__V1__ExportMetricsServiceRequest Request;
typedef Opentelemetry__Proto__Metrics__V1__ResourceMetrics ResourceMetrics;
typedef Opentelemetry__Proto__Metrics__V1__Metric Metric;

static const char *const events[] = { "page-faults" };

static const char *attr(Opentelemetry__Proto__Common__V1__KeyValue **kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kv[i]->key, key))
			return kv[i]->value->string_value;
	return NULL;
}

static const Metric *metric(const ResourceMetrics *rm, const char *name)
{
	for (size_t i = 0; i < rm->scope_metrics[0]->n_metrics; i++)
		if (!strcmp(rm->scope_metrics[0]->metrics[i]->name, name))
			return rm->scope_metrics[0]->metrics[i];
	return NULL;
}

static const ResourceMetrics *resource_of_pod(const Request *req, const char *pod)
{
	for (size_t i = 0; i < req->n_resource_metrics; i++) {
		const char *p = attr(req->resource_metrics[i]->resource->attributes,
				     req->resource_metrics[i]->resource->n_attributes, "k8s.pod.name");

		if ((!pod && !p) || (pod && p && !strcmp(p, pod)))
			return req->resource_metrics[i];
	}
	return NULL;
}

static __u64 hist[HIST_BUCKETS];

/* v's classic buckets, and hist the kernel's that the series' shape takes. */
static void set_hist(struct series_values *v, uint64_t ns, double calls)
{
	uint64_t cum[DURATION_BUCKETS];

	memset(hist, 0, sizeof(hist));
	hist[hist_bucket(ns)] = (__u64)calls;
	duration_buckets_fold(hist, cum);
	for (size_t b = 0; b < DURATION_BUCKETS; b++)
		v->duration_le[b] = (double)cum[b];
}

static void test_request_by_container(void **state)
{
	struct metrics_registry *r = metrics_registry__new(10, events, 1);
	static struct series_values v1 = { .calls = 100, .timed = true, .duration_sum_s = 0.25, .oncpu_s = 0.125,
					   .events = { 9 } };
	static struct series_values v2 = { .calls = 7 };
	long a = metrics_registry__series(r, &(struct series_labels){ .lib = "libz.so.1", .function = "deflate",
								      .namespace = "shop", .pod = "web-1",
								      .container = "c0ffee", .caller = "app:main" });
	long b = metrics_registry__series(r, &(struct series_labels){ .lib = "libz.so.1", .function = "crc32" });
	struct otlp_encode_opts o = { .start_unix_ns = 1000, .now_unix_ns = 2000, .service_version = "1.2",
				      .host_name = "node-a", .node_name = "node-a", .events = events, .nr_events = 1,
				      .dropped = 3 };
	const ResourceMetrics *web, *host, *agent = NULL;
	const Opentelemetry__Proto__Metrics__V1__ExponentialHistogramDataPoint *h;
	const Opentelemetry__Proto__Metrics__V1__NumberDataPoint *p;
	uint64_t sum = 0;
	Request *req;
	uint8_t *data;
	size_t len;

	(void)state;
	set_hist(&v1, 5000, 100);
	metrics_registry__set(r, a, &v1);
	assert_int_equal(metrics_registry__set_shape(r, a, hist), 0);
	metrics_registry__set(r, b, &v2);
	metrics_registry__settle(r);
	data = otlp_encode(r, &o, &len);
	assert_non_null(data);
	req = opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__unpack(NULL, len, data);
	assert_non_null(req);
	/* The pod's container, the host's series, the agent's own. */
	assert_int_equal(req->n_resource_metrics, 3);
	web = resource_of_pod(req, "web-1");
	assert_non_null(web);
	assert_string_equal(attr(web->resource->attributes, web->resource->n_attributes, "k8s.namespace.name"), "shop");
	assert_string_equal(attr(web->resource->attributes, web->resource->n_attributes, "container.id"), "c0ffee");
	assert_string_equal(attr(web->resource->attributes, web->resource->n_attributes, "k8s.node.name"), "node-a");
	assert_string_equal(attr(web->resource->attributes, web->resource->n_attributes, "service.name"), "dlprof-bpf");
	p = metric(web, "dlprof.calls")->sum->data_points[0];
	assert_true(metric(web, "dlprof.calls")->sum->is_monotonic);
	assert_int_equal(metric(web, "dlprof.calls")->sum->aggregation_temporality,
			 OPENTELEMETRY__PROTO__METRICS__V1__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE);
	assert_true(p->as_double == 100);
	assert_int_equal(p->start_time_unix_nano, 1000);
	assert_int_equal(p->time_unix_nano, 2000);
	assert_string_equal(attr(p->attributes, p->n_attributes, "code.function.name"), "deflate");
	assert_string_equal(attr(p->attributes, p->n_attributes, "dlprof.library"), "libz.so.1");
	assert_string_equal(attr(p->attributes, p->n_attributes, "dlprof.caller"), "app:main");
	h = metric(web, "dlprof.call.duration")->exponential_histogram->data_points[0];
	assert_int_equal(h->scale, 4);
	assert_int_equal(h->count, 100);
	assert_true(h->sum == 0.25);
	for (size_t k = 0; k < h->positive->n_bucket_counts; k++)
		sum += h->positive->bucket_counts[k];
	assert_int_equal(sum + h->zero_count, 100);
	/* 5 µs: OTLP's bucket j holds (2^(j/16), 2^((j+1)/16)] s. */
	assert_true(native_hist_upper_s(h->positive->offset) < 5000e-9 * 1.07);
	assert_true(native_hist_upper_s(h->positive->offset + (int32_t)h->positive->n_bucket_counts) > 5000e-9);
	p = metric(web, "dlprof.events")->sum->data_points[0];
	assert_string_equal(attr(p->attributes, p->n_attributes, "dlprof.event"), "page-faults");
	assert_string_equal(attr(p->attributes, p->n_attributes, "dlprof.caller"), "app:main");
	assert_true(p->as_double == 9);
	assert_true(metric(web, "dlprof.cpu.time")->sum->data_points[0]->as_double == 0.125);
	/* Entry-only functions: calls only. */
	for (size_t i = 0; i < req->n_resource_metrics; i++)
		if (metric(req->resource_metrics[i], "dlprof.agent.otlp.dropped"))
			agent = req->resource_metrics[i];
	assert_non_null(agent);
	assert_true(metric(agent, "dlprof.agent.otlp.dropped")->sum->data_points[0]->as_double == 3);
	host = NULL;
	for (size_t i = 0; i < req->n_resource_metrics; i++)
		if (req->resource_metrics[i] != agent && req->resource_metrics[i] != web)
			host = req->resource_metrics[i];
	assert_non_null(host);
	assert_null(attr(host->resource->attributes, host->resource->n_attributes, "k8s.pod.name"));
	assert_true(metric(host, "dlprof.calls")->sum->data_points[0]->as_double == 7);
	assert_null(metric(host, "dlprof.call.duration"));
	opentelemetry__proto__collector__metrics__v1__export_metrics_service_request__free_unpacked(req, NULL);
	free(data);
	metrics_registry__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_by_container),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
