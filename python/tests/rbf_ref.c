/*
 * rbf_ref -- the C library's answers, for the Python tests (python/tests).
 *
 * Reads commands from stdin, one per line; items are in hex (any bytes):
 *   N BITS HASHES SIGMA MESSAGES PHASES HASHING RECYCLE LAYOUT SEED
 *                 a new filter (SIGMA or MESSAGES 0 for off; HASHING 0/1
 *                 colliding/non-colliding, RECYCLE 0/1 non-retaining/
 *                 retaining, LAYOUT 0/1 flat/blocked)
 *   O PATH        load the filter saved at PATH (rbf_load)
 *   A HEX         rbf_insert: prints 0 or 1
 *   E HEX         rbf_contains: prints 0 or 1
 *   R             rbf_recycle
 *   T             prints the counters: bits bits_set frozen_bits_set cycles
 *                 cycle_messages inserts reported_new
 *   D PATH        writes the rbf_save_buffer image to PATH
 *   S PATH        rbf_save to PATH
 * Each printed answer is one line.  Exit 1 on an error (on stderr).
 */
#include <rbf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unhex(const char *s, unsigned char *out, size_t *n)
{
    size_t len = strlen(s);
    if (len % 2)
        return -1;
    for (size_t i = 0; i < len / 2; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (unsigned char)v;
    }
    *n = len / 2;
    return 0;
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "rbf_ref: %s: %s\n", what, rbf_strerror(rc));
    return 1;
}

int main(void)
{
    static char line[1 << 20];
    static unsigned char item[1 << 19];
    rbf *f = NULL;
    int rc;
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0)
            continue;
        const char *arg = n > 2 ? line + 2 : "";
        switch (line[0]) {
        case 'N': {
            rbf_config c;
            rbf_config_init(&c);
            unsigned long long bits, sigma, messages, seed;
            unsigned hashes, phases, hashing, recycle, layout;
            if (sscanf(arg, "%llu %u %llu %llu %u %u %u %u %llu", &bits, &hashes, &sigma, &messages,
                       &phases, &hashing, &recycle, &layout, &seed) != 9)
                return fail("N: bad arguments", RBF_EINVAL);
            c.bits = bits;
            c.hashes = hashes;
            c.sigma = sigma;
            c.messages = messages;
            c.phases = phases;
            c.hashing = hashing ? RBF_NON_COLLIDING : RBF_COLLIDING;
            c.recycle = recycle ? RBF_RETAINING : RBF_NON_RETAINING;
            c.layout = layout ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
            c.seed = seed;
            rbf_free(f);
            f = NULL;
            if ((rc = rbf_new(&c, &f)))
                return fail("rbf_new", rc);
            break;
        }
        case 'O':
            rbf_free(f);
            f = NULL;
            if ((rc = rbf_load(arg, &f)))
                return fail("rbf_load", rc);
            break;
        case 'A':
        case 'E': {
            size_t len;
            if (!f || unhex(arg, item, &len))
                return fail("A/E: no filter or bad hex", RBF_EINVAL);
            rc = line[0] == 'A' ? rbf_insert(f, item, len) : rbf_contains(f, item, len);
            if (rc < 0)
                return fail("insert/contains", rc);
            printf("%d\n", rc);
            break;
        }
        case 'R':
            if (!f || (rc = rbf_recycle(f)))
                return fail("rbf_recycle", f ? rc : RBF_EINVAL);
            break;
        case 'T': {
            rbf_stats s;
            if (!f)
                return fail("T: no filter", RBF_EINVAL);
            rbf_get_stats(f, &s);
            printf("%llu %llu %llu %llu %llu %llu %llu\n", (unsigned long long)s.bits,
                   (unsigned long long)s.bits_set, (unsigned long long)s.frozen_bits_set,
                   (unsigned long long)s.cycles, (unsigned long long)s.cycle_messages,
                   (unsigned long long)s.inserts, (unsigned long long)s.reported_new);
            break;
        }
        case 'D': {
            uint64_t size;
            if (!f || (rc = rbf_save_size(f, &size)))
                return fail("rbf_save_size", f ? rc : RBF_EINVAL);
            void *buf = malloc((size_t)size);
            if (!buf || (rc = rbf_save_buffer(f, buf, (size_t)size)))
                return fail("rbf_save_buffer", buf ? rc : RBF_ENOMEM);
            FILE *o = fopen(arg, "wb");
            if (!o || fwrite(buf, 1, (size_t)size, o) != size || fclose(o))
                return fail("D: write", RBF_EIO);
            free(buf);
            break;
        }
        case 'S':
            if (!f || (rc = rbf_save(f, arg)))
                return fail("rbf_save", f ? rc : RBF_EINVAL);
            break;
        default:
            return fail("unknown command", RBF_EINVAL);
        }
    }
    fflush(stdout);
    rbf_free(f);
    return 0;
}
