/*
 * test_save_target.c -- rbf_save respects what is at its path:
 *
 *   - a directory, a FIFO, a socket or a device there is refused (RBF_EIO,
 *     errno EISDIR for a directory, EEXIST for the rest) and left exactly as
 *     it was, with no temporary file left behind;
 *   - a symlink to a regular file is followed: the file it points to is
 *     replaced (its temporary file made in the file's own directory), the
 *     link stays the same link; a dangling link, or one to a directory or a
 *     FIFO, is refused and left alone;
 *   - an existing file keeps its permissions; a new file gets 0666 minus the
 *     umask, as fopen would make it.
 *
 * Runs as any user.  The device case uses a character device node made in
 * the test directory with mknod (root), or /dev/full itself when mknod is
 * not permitted: as a normal user /dev is not writable, so nothing can be
 * harmed; as root /dev/full is tried only after the private node passed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "filter_util.h"
#include "io_util.h"

static char tmpdir[4096];

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[8300];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/rbf-test-save.XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    remove_tree(tmpdir);
    return 0;
}

static const char *path_in(const char *name)
{
    static char buf[2][4300];
    static int which;
    which ^= 1;
    snprintf(buf[which], sizeof buf[which], "%s/%s", tmpdir, name);
    return buf[which];
}

/* The file at p holds exactly f's saved image. */
static void assert_holds(const char *p, const rbf *f)
{
    rbf *g = NULL;
    assert_int_equal(rbf_load(p, &g), RBF_OK);
    uint64_t la, lb;
    uint8_t *a = tu_saved(f, &la), *b = tu_saved(g, &lb);
    assert_true(la == lb);
    assert_memory_equal(a, b, la);
    free(a);
    free(b);
    rbf_free(g);
}

/* rbf_save refuses p with RBF_EIO and errno `err`, and p is unchanged. */
static void assert_refused(const rbf *f, const char *p, int err)
{
    struct stat before, after;
    assert_int_equal(lstat(p, &before), 0);
    errno = 0;
    assert_int_equal(rbf_save(f, p), RBF_EIO);
    assert_int_equal(errno, err);
    assert_int_equal(lstat(p, &after), 0);
    assert_int_equal(after.st_mode, before.st_mode);
    assert_true(after.st_ino == before.st_ino && after.st_dev == before.st_dev);
    assert_true(after.st_rdev == before.st_rdev);
    assert_int_equal(count_tmp(tmpdir), 0);
}

static void test_directory_fifo_socket_refused(void **state)
{
    (void)state;
    rbf *f = small_filter(1);
    const char *d = path_in("adir");
    assert_int_equal(mkdir(d, 0700), 0);
    assert_refused(f, d, EISDIR);

    const char *fifo = path_in("fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_refused(f, fifo, EEXIST);

    const char *sock = path_in("sock");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(sock) >= sizeof sa.sun_path)
        fail_msg("socket path too long: %s", sock);
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_refused(f, sock, EEXIST);
    close(s);
    rbf_free(f);
}

static void test_device_refused(void **state)
{
    (void)state;
    rbf *f = small_filter(2);
    const char *dev = path_in("full");
    if (mknod(dev, S_IFCHR | 0666, makedev(1, 7)) == 0) {
        assert_refused(f, dev, EEXIST);
        print_message("device: a private node (1,7), then /dev/full\n");
    } else {
        print_message("device: /dev/full (mknod not permitted: %s)\n", strerror(errno));
    }
    /* the case once broken: as root, saving to /dev/full made it a regular file */
    struct stat before, after;
    assert_int_equal(stat("/dev/full", &before), 0);
    assert_true(S_ISCHR(before.st_mode));
    errno = 0;
    assert_int_equal(rbf_save(f, "/dev/full"), RBF_EIO);
    assert_int_equal(errno, EEXIST);
    assert_int_equal(stat("/dev/full", &after), 0);
    assert_true(S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev &&
                after.st_ino == before.st_ino);
    rbf_free(f);
}

static void test_symlinks(void **state)
{
    (void)state;
    rbf *old = small_filter(3), *f = small_filter(4);
    /* the target in a subdirectory, the link in the top directory */
    char sub[4400];
    snprintf(sub, sizeof sub, "%s", path_in("sub"));
    assert_int_equal(mkdir(sub, 0700), 0);
    char real[4500];
    snprintf(real, sizeof real, "%s/real.rbf", sub);
    assert_int_equal(rbf_save(old, real), RBF_OK);
    assert_int_equal(chmod(real, 0640), 0);
    struct stat rs;
    assert_int_equal(stat(real, &rs), 0);

    char link[4400];
    snprintf(link, sizeof link, "%s", path_in("link.rbf"));
    assert_int_equal(symlink("sub/real.rbf", link), 0);
    /* and a link to the link */
    char link2[4400];
    snprintf(link2, sizeof link2, "%s", path_in("link2.rbf"));
    assert_int_equal(symlink("link.rbf", link2), 0);

    assert_int_equal(rbf_save(f, link2), RBF_OK);
    struct stat ls;
    assert_int_equal(lstat(link, &ls), 0);
    assert_true(S_ISLNK(ls.st_mode));
    assert_int_equal(lstat(link2, &ls), 0);
    assert_true(S_ISLNK(ls.st_mode));
    char buf[64];
    ssize_t n = readlink(link, buf, sizeof buf - 1);
    assert_int_equal(n, (ssize_t)strlen("sub/real.rbf"));
    buf[n] = '\0';
    assert_string_equal(buf, "sub/real.rbf");
    assert_holds(real, f);
    assert_holds(link, f);
    struct stat rs2;
    assert_int_equal(stat(real, &rs2), 0);
    assert_int_equal(rs2.st_mode & 07777, 0640);
    assert_true(rs2.st_ino != rs.st_ino); /* replaced by rename, not rewritten in place */
    assert_int_equal(count_tmp(tmpdir), 0);
    assert_int_equal(count_tmp(sub), 0);

    /* a dangling link: refused (ENOENT), the link left alone, nothing made */
    const char *dangling = path_in("dangling.rbf");
    assert_int_equal(symlink("sub/missing.rbf", dangling), 0);
    assert_refused(f, dangling, ENOENT);
    char missing[4500];
    snprintf(missing, sizeof missing, "%s/missing.rbf", sub);
    assert_int_equal(access(missing, F_OK), -1);

    /* a link to a directory, and to a FIFO: refused */
    const char *ldir = path_in("ldir.rbf");
    assert_int_equal(symlink("sub", ldir), 0);
    assert_refused(f, ldir, EISDIR);
    char fifo[4500];
    snprintf(fifo, sizeof fifo, "%s/fifo", sub);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *lfifo = path_in("lfifo.rbf");
    assert_int_equal(symlink("sub/fifo", lfifo), 0);
    assert_refused(f, lfifo, EEXIST);
    struct stat fs;
    assert_int_equal(lstat(fifo, &fs), 0);
    assert_true(S_ISFIFO(fs.st_mode));
    assert_int_equal(count_tmp(sub), 0);
    rbf_free(old);
    rbf_free(f);
}

static void test_modes(void **state)
{
    (void)state;
    rbf *f = small_filter(5);
    /* new files: 0666 minus the umask */
    static const mode_t masks[] = {022, 077, 002};
    mode_t saved = umask(022);
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        umask(masks[i]);
        char name[32];
        snprintf(name, sizeof name, "new%zu.rbf", i);
        const char *p = path_in(name);
        assert_int_equal(rbf_save(f, p), RBF_OK);
        struct stat st;
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0666 & ~masks[i]);
        assert_holds(p, f);
    }
    umask(077);
    /* existing files keep theirs, whatever the umask */
    static const mode_t modes[] = {0644, 0640, 0604, 0444, 0666};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        const char *p = path_in("kept.rbf");
        unlink(p);
        rbf *old = small_filter(6);
        assert_int_equal(rbf_save(old, p), RBF_OK);
        assert_int_equal(chmod(p, modes[i]), 0);
        assert_int_equal(rbf_save(f, p), RBF_OK);
        struct stat st;
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, modes[i]);
        assert_true(S_ISREG(st.st_mode));
        if (modes[i] & 0400)
            assert_holds(p, f);
        rbf_free(old);
    }
    umask(saved);
    assert_int_equal(count_tmp(tmpdir), 0);
    rbf_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_directory_fifo_socket_refused),
        cmocka_unit_test(test_device_refused),
        cmocka_unit_test(test_symlinks),
        cmocka_unit_test(test_modes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
