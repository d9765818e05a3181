/*
 * test_fields.c -- the util module's awk field splitter and Redis URL
 * parser (src/util/fields.c), on known answers: awk's fields for each
 * record (checked by hand against `awk '{print $N}'` and `awk -F,`), and
 * the parts of valid and invalid URLs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fields.h"

/* field n of rec as a string ("<missing>" when absent) */
static const char *field(const char *rec, uint64_t n, int sep)
{
    static char buf[256];
    const char *k;
    size_t kl;
    if (!rbf_field(rec, strlen(rec), n, sep, &k, &kl))
        return kl == 0 ? "<missing>" : "<bad>";
    memcpy(buf, k, kl);
    buf[kl] = '\0';
    return buf;
}

static void test_blanks(void **state)
{
    (void)state;
    assert_string_equal(field("  a b\t\tc ", 1, RBF_FIELD_BLANKS), "a");
    assert_string_equal(field("  a b\t\tc ", 2, RBF_FIELD_BLANKS), "b");
    assert_string_equal(field("  a b\t\tc ", 3, RBF_FIELD_BLANKS), "c");
    assert_string_equal(field("  a b\t\tc ", 4, RBF_FIELD_BLANKS), "<missing>");
    assert_string_equal(field("", 1, RBF_FIELD_BLANKS), "<missing>");
    assert_string_equal(field(" \t ", 1, RBF_FIELD_BLANKS), "<missing>");
    assert_string_equal(field("x", 1, ' '), "x"); /* ' ' is awk's default */
    assert_string_equal(field("a  b", 2, ' '), "b");
    assert_string_equal(field("a\r b", 1, RBF_FIELD_BLANKS), "a\r"); /* CR is data */
    assert_string_equal(field("whole line", 0, RBF_FIELD_BLANKS), "whole line");
}

static void test_separator(void **state)
{
    (void)state;
    assert_string_equal(field("a,,b", 1, ','), "a");
    assert_string_equal(field("a,,b", 2, ','), ""); /* present and empty */
    assert_string_equal(field("a,,b", 3, ','), "b");
    assert_string_equal(field("a,,b", 4, ','), "<missing>");
    assert_string_equal(field(",", 2, ','), "");
    assert_string_equal(field(",", 3, ','), "<missing>");
    assert_string_equal(field("", 1, ','), "<missing>"); /* awk: NF = 0 */
    assert_string_equal(field(" a , b", 2, ','), " b");
    assert_string_equal(field("a\tb", 2, '\t'), "b");
    /* a NUL separator */
    const char rec[] = {'x', '\0', 'y'};
    const char *k;
    size_t kl;
    assert_int_equal(rbf_field(rec, 3, 2, '\0', &k, &kl), 1);
    assert_int_equal(kl, 1);
    assert_int_equal(k[0], 'y');
}

static void test_url_ok(void **state)
{
    (void)state;
    rbf_redis_url u;
    const char *why = NULL;
    assert_int_equal(rbf_redis_url_parse("redis://127.0.0.1:6379", &u, &why), 0);
    assert_string_equal(u.host, "127.0.0.1");
    assert_int_equal(u.port, 6379);
    assert_int_equal(u.db, 0);
    assert_false(u.has_user || u.has_password || u.is_unix);

    assert_int_equal(rbf_redis_url_parse("redis://ann:p%40ss:w@cache.lan:7000/5", &u, &why), 0);
    assert_string_equal(u.user, "ann");
    assert_string_equal(u.password, "p@ss:w");
    assert_string_equal(u.host, "cache.lan");
    assert_int_equal(u.port, 7000);
    assert_int_equal(u.db, 5);

    assert_int_equal(rbf_redis_url_parse("redis://:secret@h:1/", &u, &why), 0);
    assert_false(u.has_user);
    assert_true(u.has_password);
    assert_string_equal(u.password, "secret");
    assert_int_equal(u.db, 0);

    assert_int_equal(rbf_redis_url_parse("redis://[::1]:6380/2", &u, &why), 0);
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 6380);
    assert_int_equal(u.db, 2);

    assert_int_equal(rbf_redis_url_parse("unix:///run/redis/redis%20x.sock", &u, &why), 0);
    assert_true(u.is_unix);
    assert_string_equal(u.path, "/run/redis/redis x.sock");
}

static void test_url_bad(void **state)
{
    (void)state;
    static const char *bad[] = {
        "rediss://h:6380",     "http://h:6379",   "redis://h",         "redis://h:",
        "redis://h:0",         "redis://h:65536", "redis://h:12x",     "redis://:6379",
        "redis://h:1/x",       "unix://rel/path", "redis://u:%4@h:1",  "redis://u:%zz@h:1",
        "redis://[::1:6379",   "redis://[]:1",    "redis://u%00@h:1",  "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rbf_redis_url u;
        const char *why = NULL;
        if (rbf_redis_url_parse(bad[i], &u, &why) != -1 || !why)
            fail_msg("accepted: '%s'", bad[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blanks),
        cmocka_unit_test(test_separator),
        cmocka_unit_test(test_url_ok),
        cmocka_unit_test(test_url_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
