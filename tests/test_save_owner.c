/*
 * test_save_owner.c -- rbf_save over a file owned by another user keeps the
 * file's owner, group and mode when the saver may set them, that is as
 * root (include/rbf.h, docs/file-format.md).  Only root can make a file
 * another user owns, so as any other user this program says SKIPPED and
 * exits 77, which CTest reports as skipped (the CI runs as root).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filter_util.h"

static void test_owner_group_mode_kept(void **state)
{
    (void)state;
    char dir[4096];
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/rbf-test-owner.XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(dir));
    char p[4200];
    snprintf(p, sizeof p, "%s/f.rbf", dir);
    rbf_config c = tu_config(1000, 3, 300, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 9);
    rbf *f = NULL;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    assert_int_equal(rbf_save(f, p), RBF_OK);
    /* another owner and group, and a mode the umask would not give */
    const uid_t uid = 65534;
    const gid_t gid = 12345;
    assert_int_equal(chown(p, uid, gid), 0);
    assert_int_equal(chmod(p, 0604), 0);
    rbf_insert(f, "x", 1);
    assert_int_equal(rbf_save(f, p), RBF_OK);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_uid, uid);
    assert_int_equal(st.st_gid, gid);
    assert_int_equal(st.st_mode & 07777, 0604);
    rbf *g = NULL;
    assert_int_equal(rbf_load(p, &g), RBF_OK);
    assert_int_equal(rbf_contains(g, "x", 1), 1);
    rbf_free(g);
    rbf_free(f);
    unlink(p);
    rmdir(dir);
}

int main(void)
{
    if (geteuid() != 0) {
        printf("SKIPPED: needs root (only root can give a file to another user)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owner_group_mode_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
