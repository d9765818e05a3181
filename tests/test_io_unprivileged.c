/*
 * test_io_unprivileged.c -- what file permissions do to rbf_load and
 * rbf_save.  Permissions do not bind root, and CI runs the suite as root:
 * so when started as root this program first drops to the user `nobody`
 * (group `nogroup` or nobody's own, no supplementary groups; the same as
 * `setpriv --reuid=nobody --regid=nogroup --clear-groups`) and runs every
 * check as that user.  If it cannot (no such user), it says SKIPPED and
 * exits 77, which CTest reports as skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filter_util.h"
#include "io_util.h"

static char tmpdir[4096];

static const char *path_in(const char *name)
{
    static char buf[4300];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static void test_unreadable_file(void **state)
{
    (void)state;
    assert_true(geteuid() != 0);
    rbf *f = small_filter(1);
    const char *p = path_in("secret.rbf");
    assert_int_equal(rbf_save(f, p), RBF_OK);
    assert_int_equal(chmod(p, 0), 0);
    rbf *g = (rbf *)&g;
    errno = 0;
    assert_int_equal(rbf_load(p, &g), RBF_EIO);
    assert_int_equal(errno, EACCES);
    assert_null(g);
    assert_int_equal(unlink(p), 0);
    rbf_free(f);
}

static void test_unwritable_directory(void **state)
{
    (void)state;
    assert_true(geteuid() != 0);
    rbf *f = small_filter(2), *old = small_filter(3);
    char dir[4400];
    snprintf(dir, sizeof dir, "%s", path_in("ro"));
    assert_int_equal(mkdir(dir, 0700), 0);
    char existing[4500], fresh[4500];
    snprintf(existing, sizeof existing, "%s/old.rbf", dir);
    snprintf(fresh, sizeof fresh, "%s/new.rbf", dir);
    assert_int_equal(rbf_save(old, existing), RBF_OK);
    assert_int_equal(chmod(dir, 0500), 0);
    /* a new file, and over an existing one: EACCES, nothing changes */
    errno = 0;
    assert_int_equal(rbf_save(f, fresh), RBF_EIO);
    assert_int_equal(errno, EACCES);
    assert_int_equal(access(fresh, F_OK), -1);
    errno = 0;
    assert_int_equal(rbf_save(f, existing), RBF_EIO);
    assert_int_equal(errno, EACCES);
    rbf *g = NULL;
    assert_int_equal(rbf_load(existing, &g), RBF_OK);
    rbf_stats a, b;
    rbf_get_stats(g, &a);
    rbf_get_stats(old, &b);
    assert_memory_equal(&a, &b, sizeof a);
    rbf_free(g);
    assert_int_equal(count_tmp(dir), 0);
    assert_int_equal(chmod(dir, 0700), 0);
    unlink(existing);
    rmdir(dir);
    rbf_free(f);
    rbf_free(old);
}

/* As root, become `nobody`; returns 0, or -1 (with a reason) if not possible. */
static int drop_root(const char **why)
{
    struct passwd *pw = getpwnam("nobody");
    if (!pw) {
        *why = "there is no user 'nobody' to run as";
        return -1;
    }
    struct group *gr = getgrnam("nogroup");
    gid_t gid = gr ? gr->gr_gid : pw->pw_gid;
    if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(pw->pw_uid) != 0) {
        *why = "cannot change to the user 'nobody'";
        return -1;
    }
    if (geteuid() == 0 || setuid(0) == 0) {
        *why = "still root after dropping privileges";
        return -1;
    }
    return 0;
}

int main(void)
{
    if (geteuid() == 0) {
        const char *why = NULL;
        if (drop_root(&why) != 0) {
            printf("SKIPPED: running as root, and %s\n", why);
            return 77;
        }
        printf("running as root: dropped to uid %u gid %u\n", (unsigned)getuid(),
               (unsigned)getgid());
    }
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/rbf-test-perm.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) {
        printf("SKIPPED: cannot make a directory under %s as uid %u: %s\n",
               t && *t ? t : "/tmp", (unsigned)getuid(), strerror(errno));
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unreadable_file),
        cmocka_unit_test(test_unwritable_directory),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(tmpdir);
    return rc;
}
