// SPDX-License-Identifier: GPL-2.0-only
/* OTLP's endpoint and header conventions, and the push's queue against an endpoint that is down. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/otlp_push.h"

static void url_is(const char *base, const char *want)
{
	char buf[256];

	assert_int_equal(otlp_metrics_url(base, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_metrics_url(void **state)
{
	char small[16];

	(void)state;
	url_is("http://collector:4318", "http://collector:4318/v1/metrics");
	url_is("http://collector:4318/", "http://collector:4318/v1/metrics");
	url_is("https://gw.example/otlp", "https://gw.example/otlp/v1/metrics");
	url_is("http://collector:4318/v1/metrics", "http://collector:4318/v1/metrics");
	assert_int_equal(otlp_metrics_url("collector:4318", small, sizeof(small)), -EINVAL);
	assert_int_equal(otlp_metrics_url("http://a-long-host-name:4318", small, sizeof(small)), -ENAMETOOLONG);
}

static void test_header_lines(void **state)
{
	char *lines[4];

	(void)state;
	assert_int_equal(otlp_header_lines("api-key=s%3Dcret, x-tenant = team a", lines, 4), 2);
	assert_string_equal(lines[0], "api-key: s=cret");
	assert_string_equal(lines[1], "x-tenant: team a");
	free(lines[0]);
	free(lines[1]);
	assert_int_equal(otlp_header_lines(NULL, lines, 4), 0);
	assert_int_equal(otlp_header_lines("novalue", lines, 4), -EINVAL);
	assert_int_equal(otlp_header_lines("bad name=v", lines, 4), -EINVAL);
	assert_int_equal(otlp_header_lines("a=%0d%0aInjected: 1", lines, 4), -EINVAL);
	assert_int_equal(otlp_header_lines("a=1,b=2", lines, 1), -EINVAL);
}

/* Nothing listens: the oldest requests go once the queue is full, each counted; freeing stops at once. */
static void test_queue_drops_oldest_while_endpoint_down(void **state)
{
	char err[256];
	struct otlp_push *p = otlp_push__new(&(struct otlp_push_opts){ .url = "http://127.0.0.1:9/v1/metrics" },
					     err, sizeof(err));
	struct otlp_push_stats st;

	(void)state;
	assert_non_null(p);
	for (int i = 0; i < OTLP_QUEUE_MAX + 4; i++) {
		uint8_t *d = malloc(8);

		assert_non_null(d);
		memset(d, i, 8);
		otlp_push__enqueue(p, d, 8);
	}
	for (int waited_ms = 0; waited_ms < 5000; waited_ms += 10) {
		otlp_push__stats(p, &st);
		if (st.failures)
			break;
		usleep(10000);
	}
	assert_int_equal(st.sent, 0);
	assert_true(st.failures >= 1);
	/* One request in flight (dropped too once a retry finds the queue full), OTLP_QUEUE_MAX waiting. */
	assert_true(st.dropped >= 3 && st.dropped <= 5);
	otlp_push__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_url),
		cmocka_unit_test(test_header_lines),
		cmocka_unit_test(test_queue_drops_oldest_while_endpoint_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
