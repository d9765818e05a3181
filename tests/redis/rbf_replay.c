/*
 * rbf_replay -- the library's answers for the Redis module's cross-check.
 *
 *   rbf_replay [--blocked] BITS HASHES SIGMA MESSAGES PHASES HASHING RECYCLE SEED [IMAGE]
 *
 * --blocked: the blocked layout (RBF_LAYOUT_BLOCKED); the flat one otherwise.
 * HASHING 0 colliding / 1 non-colliding, RECYCLE 0 non-retaining / 1
 * retaining, SIGMA or MESSAGES 0 for off.  Reads operations from stdin, one
 * per line: "A item" (rbf_insert), "E item" (rbf_contains), "R"
 * (rbf_recycle); the item is the rest of the line.  Prints one character per
 * A/E operation ('0' or '1'), a newline, then "stats bits bits_set
 * frozen_bits_set cycles cycle_messages inserts reported_new".  With IMAGE,
 * writes the final filter's rbf_save_buffer image there.
 */
#include <rbf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int blocked = argc > 1 && strcmp(argv[1], "--blocked") == 0;
    if (blocked) {
        argv++;
        argc--;
    }
    if (argc != 9 && argc != 10) {
        fprintf(stderr, "usage: rbf_replay [--blocked] BITS HASHES SIGMA MESSAGES PHASES HASHING RECYCLE SEED [IMAGE]\n");
        return 2;
    }
    rbf_config c;
    rbf_config_init(&c);
    c.layout = blocked ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
    c.bits = strtoull(argv[1], NULL, 10);
    c.hashes = (unsigned)strtoul(argv[2], NULL, 10);
    c.sigma = strtoull(argv[3], NULL, 10);
    c.messages = strtoull(argv[4], NULL, 10);
    c.phases = (unsigned)strtoul(argv[5], NULL, 10);
    c.hashing = strtoul(argv[6], NULL, 10) ? RBF_NON_COLLIDING : RBF_COLLIDING;
    c.recycle = strtoul(argv[7], NULL, 10) ? RBF_RETAINING : RBF_NON_RETAINING;
    c.seed = strtoull(argv[8], NULL, 10);
    rbf *f = NULL;
    int rc = rbf_new(&c, &f);
    if (rc != RBF_OK) {
        fprintf(stderr, "rbf_replay: %s\n", rbf_strerror(rc));
        return 1;
    }
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n')
            line[--n] = '\0';
        if (n == 0)
            continue;
        const char *item = n >= 2 ? line + 2 : "";
        size_t len = n >= 2 ? n - 2 : 0;
        if (line[0] == 'A')
            putchar('0' + rbf_insert(f, item, len));
        else if (line[0] == 'E')
            putchar('0' + rbf_contains(f, item, len));
        else if (line[0] == 'R')
            rbf_recycle(f);
    }
    rbf_stats s;
    rbf_get_stats(f, &s);
    printf("\nstats %llu %llu %llu %llu %llu %llu %llu\n", (unsigned long long)s.bits,
           (unsigned long long)s.bits_set, (unsigned long long)s.frozen_bits_set,
           (unsigned long long)s.cycles, (unsigned long long)s.cycle_messages,
           (unsigned long long)s.inserts, (unsigned long long)s.reported_new);
    if (argc == 10) {
        uint64_t size = 0;
        rbf_save_size(f, &size);
        void *buf = malloc((size_t)size);
        FILE *out = fopen(argv[9], "wb");
        if (!buf || !out || rbf_save_buffer(f, buf, (size_t)size) != RBF_OK ||
            fwrite(buf, 1, (size_t)size, out) != size || fclose(out) != 0) {
            fprintf(stderr, "rbf_replay: cannot write %s\n", argv[9]);
            return 1;
        }
        free(buf);
    }
    rbf_free(f);
    return 0;
}
