/* The byte buffer and the allocation helpers of base/buf.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"

static void test_buf_grows_and_formats(void **state)
{
    (void)state;
    struct buf b = BUF_INIT;
    assert_string_equal(buf_cstr(&b), "");
    for (int i = 0; i < 1000; i++)
        buf_printf(&b, "%d,", i);
    assert_true(b.len > 3000);
    assert_memory_equal(b.data, "0,1,2,", 6);
    assert_memory_equal(b.data + b.len - 4, "999,", 4);
    size_t len;
    char *s = buf_steal(&b, &len);
    assert_int_equal(len, strlen(s));
    assert_int_equal(b.len, 0);
    free(s);
    buf_destroy(&b);
}

/* Memory that held other bytes comes back zeroed, at every size (small
 * ones are recycled by the allocator at once, large ones may be). */
static void test_calloc_written_zeroes(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 24, 4096, 1u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        for (int round = 0; round < 4; round++) {
            unsigned char *dirty = xmalloc(sizes[k] * 8);
            memset(dirty, 0xa5, sizes[k] * 8);
            free(dirty);
            uint64_t *p = xcalloc_written(sizes[k], sizeof *p);
            for (size_t i = 0; i < sizes[k]; i++)
                assert_int_equal(p[i], 0);
            free(p);
        }
    }
    void *one = xcalloc_written(0, 8); /* zero elements: still a pointer to free */
    assert_non_null(one);
    free(one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_grows_and_formats),
        cmocka_unit_test(test_calloc_written_zeroes),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
