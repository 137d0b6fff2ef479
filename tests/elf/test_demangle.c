/* SPDX-License-Identifier: GPL-2.0-only */
/* demangle(): C++ and Rust names to what people read; everything else left alone. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "elf/demangle.h"

static void expect(const char *sym, const char *want)
{
	char *got = demangle(sym);

	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_cxx(void **state)
{
	(void)state;
	expect("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc",
	       "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::append(char const*)");
	expect("_ZN3dlx5raiseEi", "dlx::raise(int)");
	expect("_ZSt20__throw_out_of_rangePKc", "std::__throw_out_of_range(char const*)");
}

static void test_cxx_versioned(void **state)
{
	(void)state;
	expect("_ZNSs4_Rep10_M_destroyERKSaIcE@GLIBCXX_3.4",
	       "std::string::_Rep::_M_destroy(std::allocator<char> const&)@GLIBCXX_3.4");
	expect("memcpy@GLIBC_2.2.5", NULL);
}

static void test_rust(void **state)
{
	(void)state;
	/* Legacy: the hash goes, as rustc's own backtraces print it. */
	expect("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	/* v0. */
	expect("_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example");
	expect("_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar");
}

static void test_left_alone(void **state)
{
	(void)state;
	expect("deflate", NULL);
	expect("main", NULL);
	expect("_start", NULL);
	expect("", NULL);
	expect("_Z", NULL);
	expect("_ZN3dlx", NULL);
	expect("_RNv", NULL);
	expect("_Z\xff\x01garbage", NULL);
	expect("@", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_cxx_versioned),
		cmocka_unit_test(test_rust),
		cmocka_unit_test(test_left_alone),
	};

	return cmocka_run_group_tests_name("demangle", tests, NULL, NULL);
}
