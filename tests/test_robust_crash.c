/*
 * test_robust_crash.c -- crash-safe saves (issue 8): a child process saves a
 * large filter over an existing file and is killed with SIGKILL at a random
 * moment, many times.  After every kill the target must load as either the
 * complete old filter or the complete new one, byte for byte.
 *
 * A killed save may leave its temporary file (`TARGET.tmp.XXXXXX`, see
 * docs/robustness.md): the test checks that each kill leaves at most one and
 * that a completed save leaves none, then removes it as an operator would.
 *
 * Kill times are spread uniformly over 0 .. 1.3 x the measured duration of
 * one save, so kills land before, during and after the write, the fsync and
 * the rename; the test requires both outcomes (old and new) to occur.
 * RBF_TEST_SHRINK (valgrind) makes the filter and the run smaller.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "filter_util.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int count_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

static void remove_entries(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !strstr(e->d_name, part))
            continue;
        char p[8300];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

static void remove_tmp(const char *dir)
{
    remove_entries(dir, ".tmp.");
}

static void remove_all(const char *dir)
{
    remove_entries(dir, "");
    rmdir(dir);
}

static rbf *filled(uint64_t bits, uint64_t seed, uint64_t n)
{
    rbf_config c = tu_config(bits, 4, bits / 4, 0, RBF_COLLIDING, RBF_NON_RETAINING, 2, seed);
    rbf *f = NULL;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    uint64_t rng = seed;
    for (uint64_t i = 0; i < n; i++)
        rbf_insert_hash(f, tu_next(&rng));
    return f;
}

static void test_killed_saves_leave_old_or_new(void **state)
{
    (void)state;
    const int shrink = getenv("RBF_TEST_SHRINK") != NULL;
    const uint64_t bits = shrink ? (1u << 20) : (1u << 26); /* 8 MiB per file */
    const int rounds = shrink ? 12 : 100;

    char dir[4096];
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/rbf-test-crash.XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(dir));
    char target[4200];
    snprintf(target, sizeof target, "%s/filter.rbf", dir);

    /* two different filters, and their exact saved images */
    rbf *fa = filled(bits, 1, bits / 40), *fb = filled(bits, 2, bits / 20);
    uint64_t la, lb;
    uint8_t *ia = tu_saved(fa, &la), *ib = tu_saved(fb, &lb);
    assert_int_equal(la, lb);
    assert_true(memcmp(ia, ib, la) != 0);

    /* the starting file, and the duration of one save */
    double t0 = now_s();
    assert_int_equal(rbf_save(fa, target), RBF_OK);
    double save_s = now_s() - t0;
    int cur = 0; /* 0: the file holds fa, 1: fb */
    int saw_old = 0, saw_new = 0, leftovers = 0;
    uint64_t rng = 12345;

    for (int r = 0; r < rounds; r++) {
        int next = 1 - cur;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(rbf_save(next ? fb : fa, target) == RBF_OK ? 0 : 3);
        double wait_s = save_s * 1.3 * (double)tu_below(&rng, 1000) / 1000.0;
        struct timespec ts = {(time_t)wait_s, (long)((wait_s - (double)(time_t)wait_s) * 1e9)};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0));

        rbf *g = NULL;
        int rc = rbf_load(target, &g);
        if (rc != RBF_OK)
            print_error("round %d: target does not load: %s\n", r, rbf_strerror(rc));
        assert_int_equal(rc, RBF_OK);
        uint64_t lg;
        uint8_t *ig = tu_saved(g, &lg);
        assert_int_equal(lg, la);
        int is_old = memcmp(ig, cur ? ib : ia, la) == 0;
        int is_new = memcmp(ig, next ? ib : ia, la) == 0;
        assert_true(is_old || is_new);
        free(ig);
        rbf_free(g);
        if (is_new) {
            saw_new++;
            cur = next;
        } else {
            saw_old++;
        }

        /* a kill leaves at most one temporary file; a finished save none */
        int tmps = count_tmp(dir);
        assert_true(tmps <= 1);
        if (WIFEXITED(status))
            assert_int_equal(tmps, 0);
        leftovers += tmps;
        remove_tmp(dir); /* as an operator would; keeps the disk use small */
        /* re-measure now and then: the page cache warms up */
        if (r % 25 == 24) {
            t0 = now_s();
            assert_int_equal(rbf_save(cur ? fb : fa, target), RBF_OK);
            save_s = 0.5 * save_s + 0.5 * (now_s() - t0);
        }
    }
    print_message("%d kills: %d left the old filter, %d the new one; %d left a temporary file; "
                  "one save takes %.1f ms\n",
                  rounds, saw_old, saw_new, leftovers, 1e3 * save_s);
    assert_true(saw_old > 0);
    assert_true(saw_new > 0);
    free(ia);
    free(ib);
    rbf_free(fa);
    rbf_free(fb);
    remove_all(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_killed_saves_leave_old_or_new),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
