/*
 * test_robust_crash.c -- crash-safe saves: a child process saves a
 * filter over an existing file and is killed with SIGKILL; the target must
 * then load as either the complete old filter or the complete new one, byte
 * for byte.
 *
 * The kills are synchronised, not timed, so the test cannot race: the child sets the save
 * path's test hook (rbf__save_hook, src/filter/filter_internal.h), which
 * stops the child with SIGSTOP at one chosen step of the save (the
 * temporary file created, partly written, written, fsync'ed, renamed, the
 * directory fsync'ed).  The parent waits until the child is stopped there
 * (waitpid WUNTRACED), kills it, and knows which file must be at the path:
 * the old one before the rename, the new one after.  Every step is covered,
 * in both directions, whatever the load of the machine.
 *
 * A killed save may leave its temporary file (`TARGET.tmp.XXXXXX`, see
 * docs/robustness.md): the test checks that a kill before the rename leaves
 * exactly one and a kill after it none, then removes it as an operator
 * would.
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
#include <unistd.h>

#include "filter/filter_internal.h"
#include "filter_util.h"
#include "io_util.h"

/* Size of the (single) temporary file in dir, or -1 if there is none. */
static long long tmp_size(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    long long size = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strstr(e->d_name, ".tmp."))
            continue;
        char p[8300];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        assert_int_equal(stat(p, &st), 0);
        size = (long long)st.st_size;
    }
    closedir(d);
    return size;
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

/* The step at which the child stops itself. */
static int stop_at = -1;

static void stop_hook(int step)
{
    if (step == stop_at)
        raise(SIGSTOP);
}

static const char *const step_name[RBF__SAVE_STEPS] = {
    "created", "partly written", "written", "fsync'ed", "renamed", "directory fsync'ed",
};

static void test_killed_saves_leave_old_or_new(void **state)
{
    (void)state;
    /* 4 Mi bits per phase: the body is far larger than a stdio buffer, so a
     * kill at "partly written" leaves a strict prefix. */
    const uint64_t bits = 1u << 23;

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

    assert_int_equal(rbf_save(fa, target), RBF_OK);
    int cur = 0; /* 0: the file holds fa, 1: fb */
    int saw_old = 0, saw_new = 0;

    /* every step, twice (a -> b and b -> a), then a save that is not
     * stopped at all (stop_at = RBF__SAVE_STEPS) */
    for (int round = 0; round <= 2 * RBF__SAVE_STEPS; round++) {
        const int step = round / 2;
        const int next = 1 - cur;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            stop_at = step;
            rbf__save_hook = stop_hook;
            _exit(rbf_save(next ? fb : fa, target) == RBF_OK ? 0 : 3);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
        if (step < RBF__SAVE_STEPS) {
            /* stopped exactly at the step: kill it there */
            assert_true(WIFSTOPPED(status));
            assert_int_equal(WSTOPSIG(status), SIGSTOP);
            assert_int_equal(kill(pid, SIGKILL), 0);
            assert_int_equal(waitpid(pid, &status, 0), pid);
            assert_true(WIFSIGNALED(status));
            assert_int_equal(WTERMSIG(status), SIGKILL);
        } else {
            assert_true(WIFEXITED(status));
            assert_int_equal(WEXITSTATUS(status), 0);
        }

        /* before the rename the old file is there, from it on the new one */
        const int want_new = step >= RBF__SAVE_RENAMED;
        rbf *g = NULL;
        int rc = rbf_load(target, &g);
        if (rc != RBF_OK)
            print_error("killed at '%s': target does not load: %s\n",
                        step < RBF__SAVE_STEPS ? step_name[step] : "(not killed)",
                        rbf_strerror(rc));
        assert_int_equal(rc, RBF_OK);
        uint64_t lg;
        uint8_t *ig = tu_saved(g, &lg);
        assert_int_equal(lg, la);
        const uint8_t *expect = (want_new ? next : cur) ? ib : ia;
        if (memcmp(ig, expect, la) != 0)
            print_error("killed at '%s': the target is not the complete %s filter\n",
                        step < RBF__SAVE_STEPS ? step_name[step] : "(not killed)",
                        want_new ? "new" : "old");
        assert_memory_equal(ig, expect, la);
        free(ig);
        rbf_free(g);
        if (want_new) {
            saw_new++;
            cur = next;
        } else {
            saw_old++;
        }

        /* a kill before the rename leaves its temporary file, after it none;
         * at "created" and "partly written" it is shorter than a save */
        assert_int_equal(count_tmp(dir), want_new ? 0 : 1);
        if (step == RBF__SAVE_CREATED)
            assert_true(tmp_size(dir) == 0);
        else if (step == RBF__SAVE_PARTIAL)
            assert_true(tmp_size(dir) < (long long)la);
        else if (!want_new)
            assert_true(tmp_size(dir) == (long long)la);
        remove_tmp(dir); /* as an operator would */
    }
    print_message("%d kills at %d steps: %d left the old filter, %d the new one\n",
                  2 * RBF__SAVE_STEPS, RBF__SAVE_STEPS, saw_old, saw_new);
    assert_int_equal(saw_old, 2 * RBF__SAVE_RENAMED);
    assert_int_equal(saw_new, 2 * (RBF__SAVE_STEPS - RBF__SAVE_RENAMED) + 1);
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
