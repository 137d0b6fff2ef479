// SPDX-License-Identifier: GPL-2.0-only
/* The protobuf exposition, decoded back with protobuf-c: families, labels, classic and native buckets. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/agent_pb.h"
#include "agent/prom_proto.h"

#define MAX_FAMILIES 8

struct decoded {
	Io__Prometheus__Client__MetricFamily *fam[MAX_FAMILIES];
	size_t n;
};

/* The delimited stream, message by message: a varint length, then the MetricFamily. */
static void decode(const char *data, size_t len, struct decoded *d)
{
	const uint8_t *p = (const uint8_t *)data, *end = p + len;

	d->n = 0;
	while (p < end) {
		size_t sz = 0;
		int shift = 0;

		do {
			sz |= (size_t)(*p & 0x7f) << shift;
			shift += 7;
		} while (*p++ & 0x80);
		assert_true(p + sz <= end);
		assert_true(d->n < MAX_FAMILIES);
		d->fam[d->n] = io__prometheus__client__metric_family__unpack(NULL, sz, p);
		assert_non_null(d->fam[d->n]);
		d->n++;
		p += sz;
	}
}

static void decoded_free(struct decoded *d)
{
	for (size_t i = 0; i < d->n; i++)
		io__prometheus__client__metric_family__free_unpacked(d->fam[i], NULL);
}

static const char *label_of(const Io__Prometheus__Client__Metric *m, const char *name)
{
	for (size_t i = 0; i < m->n_label; i++)
		if (!strcmp(m->label[i]->name, name))
			return m->label[i]->value;
	return NULL;
}

/* The calls prom_text routes here: a counter and a gauge family, labels with no value left out. */
static void test_counter_and_gauge_through_prom_buf(void **state)
{
	struct prom_buf b = { .proto = prom_proto__new() };
	struct prom_label l[] = { { "lib", "libz.so.1" }, { "function", "deflate" }, { "pod", NULL } };
	struct decoded d;
	size_t len;
	char *data;

	(void)state;
	prom_family(&b, "dlprof_calls_total", "counter", "Calls");
	prom_sample(&b, "dlprof_calls_total", l, 3, NULL, NULL, 200);
	prom_sample(&b, "dlprof_calls_total", l, 3, "event", "page-faults", 7);
	prom_family(&b, "dlprof_agent_up", "gauge", "Up");
	prom_sample(&b, "dlprof_agent_up", NULL, 0, NULL, NULL, 1);
	assert_int_equal(b.len, 0);
	data = prom_proto__take(b.proto, &len);
	assert_non_null(data);
	decode(data, len, &d);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.fam[0]->name, "dlprof_calls_total");
	assert_string_equal(d.fam[0]->help, "Calls");
	assert_int_equal(d.fam[0]->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
	assert_int_equal(d.fam[0]->n_metric, 2);
	assert_int_equal(d.fam[0]->metric[0]->n_label, 2);
	assert_string_equal(label_of(d.fam[0]->metric[0], "function"), "deflate");
	assert_null(label_of(d.fam[0]->metric[0], "pod"));
	assert_true(d.fam[0]->metric[0]->counter->value == 200);
	assert_string_equal(label_of(d.fam[0]->metric[1], "event"), "page-faults");
	assert_int_equal(d.fam[1]->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE);
	assert_true(d.fam[1]->metric[0]->gauge->value == 1);
	decoded_free(&d);
	free(data);
	prom_proto__free(b.proto);
	prom_buf_free(&b);
}

/* Bucket counts as the scraper rebuilds them from spans and deltas. */
static size_t rebuild(const Io__Prometheus__Client__Histogram *h, int32_t *idx, int64_t *cnt, size_t max)
{
	int32_t i = 0;
	int64_t c = 0;
	size_t n = 0, d = 0;

	for (size_t s = 0; s < h->n_positive_span; s++) {
		i += h->positive_span[s]->offset;
		for (uint32_t k = 0; k < h->positive_span[s]->length; k++, i++) {
			c += h->positive_delta[d++];
			assert_true(n < max);
			idx[n] = i;
			cnt[n++] = c;
		}
	}
	assert_int_equal(d, h->n_positive_delta);
	return n;
}

static void test_histogram_classic_and_native(void **state)
{
	static struct native_hist nh = { .count = 20, .zero_count = 2, .first = -200, .n = 9,
					 .counts = { 3, 4, 0, 1, 0, 0, 0, 0, 10 } };
	static const double upper[] = { 1e-6, 1e-3 }, cum[] = { 5, 8 };
	struct prom_proto *p = prom_proto__new();
	struct prom_label l[] = { { "function", "f" } };
	Io__Prometheus__Client__Histogram *h;
	int32_t idx[16];
	int64_t cnt[16];
	struct decoded d;
	size_t len, n;
	char *data;

	(void)state;
	prom_proto__family(p, "dlprof_call_duration_seconds", "histogram", "Wall time");
	prom_proto__histogram(p, l, 1, &(struct prom_hist){ .count = 20, .sum = 1.5, .nr_bounds = 2,
							    .upper_s = upper, .cum = cum, .native = &nh });
	data = prom_proto__take(p, &len);
	decode(data, len, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.fam[0]->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
	h = d.fam[0]->metric[0]->histogram;
	assert_int_equal(h->sample_count, 20);
	assert_true(h->sample_sum == 1.5);
	assert_int_equal(h->n_bucket, 2);
	assert_true(h->bucket[1]->upper_bound == 1e-3);
	assert_int_equal(h->bucket[1]->cumulative_count, 8);
	assert_true(h->has_schema && h->schema == 4);
	assert_true(h->has_zero_threshold && h->zero_threshold == 0);
	assert_int_equal(h->zero_count, 2);
	/* Two spans: the run of four empty buckets is skipped, the single empty one kept. */
	assert_int_equal(h->n_positive_span, 2);
	n = rebuild(h, idx, cnt, 16);
	assert_int_equal(n, 5);
	assert_int_equal(idx[0], -200);
	assert_int_equal(cnt[0], 3);
	assert_int_equal(idx[2], -198);
	assert_int_equal(cnt[2], 0);
	assert_int_equal(idx[3], -197);
	assert_int_equal(cnt[3], 1);
	assert_int_equal(idx[4], -192);
	assert_int_equal(cnt[4], 10);
	decoded_free(&d);
	free(data);
	prom_proto__free(p);
}

static void test_accept_header(void **state)
{
	(void)state;
	assert_true(prom_proto_accepted("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
					"encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.1"));
	assert_false(prom_proto_accepted("text/plain;version=0.0.4;q=0.3,*/*;q=0.1"));
	assert_false(prom_proto_accepted("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
					 "encoding=text"));
	assert_false(prom_proto_accepted(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_and_gauge_through_prom_buf),
		cmocka_unit_test(test_histogram_classic_and_native),
		cmocka_unit_test(test_accept_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
