/*
 * dedup_remote.h -- the shared filter of `rbf dedup --redis`: the lines'
 * keys go in pipelined RBF.MADD batches to the rbf Redis module
 * (docs/redis.md), and each line is written or not by the server's answer,
 * in input order.  hiredis is used here and nowhere else.
 */
#ifndef RBF_DEDUP_REMOTE_H
#define RBF_DEDUP_REMOTE_H

#include <stddef.h>
#include <stdint.h>

typedef struct dedup_remote dedup_remote;

typedef struct dedup_remote_opts {
    const char *url;   /* redis://[user[:password]@]host:port[/db] or unix:///path */
    const char *key;   /* the filter's key */
    uint64_t bytes;    /* --memory */
    double eps;        /* --fp */
    unsigned phases;   /* --phases */
    int layout;        /* -1: not given (choose_layout decides), 0 flat, 1 blocked */
    int have_seed;
    uint64_t seed;
    int on_error_pass; /* --on-error pass */
    int repeated;      /* --repeated: write the lines the server calls seen */
    /* Decides the layout of a new filter when --layout is not given:
     * returns 0 flat, 1 blocked, -1 on failure (reported). */
    int (*choose_layout)(void *ctx);
    void *ctx;
} dedup_remote_opts;

/* Writes one line; returns 0, or -1 when output must stop. */
typedef int (*dedup_emit_fn)(void *ctx, const char *line, size_t len);

/* Connect, authenticate, select the database, and create the filter at the
 * key (a planned RBF.RESERVE) or use the one there, warning when its
 * configuration differs from the options.  Returns 0, 1 after a runtime
 * failure (reported), 2 after a usage error (reported). */
int dedup_remote_open(const dedup_remote_opts *o, dedup_remote **out);

/* Queue n lines: keys[i] (klens[i] bytes) is sent unless pass[i], which
 * writes the line without asking.  The lines are copied.  Lines whose
 * answers arrive are handed to emit in input order.  Returns 0, -1 when
 * emit says output must stop, -2 after a failure (reported). */
int dedup_remote_submit(dedup_remote *d, size_t n, const void *const *keys, const size_t *klens,
                        const char *const *lines, const size_t *llens, const uint8_t *pass,
                        dedup_emit_fn emit, void *ctx);

/* Wait for every answer outstanding and emit its lines.  Same returns. */
int dedup_remote_drain(dedup_remote *d, dedup_emit_fn emit, void *ctx);

/* Lines whose batches were sent and never answered (after a failure). */
uint64_t dedup_remote_lost(const dedup_remote *d);

/* Print the server's RBF.INFO for the key on stderr, "name: value" per line. */
void dedup_remote_print_info(dedup_remote *d);

void dedup_remote_close(dedup_remote *d);

#endif
