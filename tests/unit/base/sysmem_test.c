/* base/sysmem.h: cgroup limit files read as a number or as no limit, and
 * the memory of this machine found, no more than its RAM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/sysmem.h"

static void test_parse_limit(void **state)
{
    (void)state;
    assert_true(sysmem_parse_limit("536870912\n") == 536870912ULL);
    assert_true(sysmem_parse_limit("536870912") == 536870912ULL);
    assert_true(sysmem_parse_limit("9223372036854771712\n") == 9223372036854771712ULL);
    assert_true(sysmem_parse_limit("max\n") == 0);
    assert_true(sysmem_parse_limit("") == 0);
    assert_true(sysmem_parse_limit(NULL) == 0);
    assert_true(sysmem_parse_limit("-1\n") == 0);
    assert_true(sysmem_parse_limit("12ab\n") == 0);
    assert_true(sysmem_parse_limit("99999999999999999999999\n") == 0); /* overflows */
}

static void test_limit_at_most_ram(void **state)
{
    (void)state;
    uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t got = sysmem_limit_bytes();
    assert_true(got > 0);
    assert_true(got <= ram);
}

int main(void)
{
    cmocka_set_message_output(CM_OUTPUT_TAP);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_limit),
        cmocka_unit_test(test_limit_at_most_ram),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
