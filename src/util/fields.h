/*
 * fields.h -- split a record into fields, as awk does, and parse the
 * address of a Redis server.  Used by `rbf dedup` (--field, --redis).
 * Plain functions on bytes: no allocation, no I/O.
 */
#ifndef RBF_FIELDS_H
#define RBF_FIELDS_H

#include <stddef.h>
#include <stdint.h>

/* The separator of rbf_field: a byte 0..255, or RBF_FIELD_BLANKS for awk's
 * default splitting (runs of spaces, tabs and newlines separate fields;
 * leading and trailing ones are ignored).  A single space is awk's
 * default too (awk -F ' '). */
#define RBF_FIELD_BLANKS (-1)

/* Field n (counting from 1) of rec[0..len): returns 1 and sets *key, *klen
 * to it (inside rec; it may be empty, as in "a,,b" field 2), or 0 when the
 * record has fewer than n fields (then *key = rec + len, *klen = 0: awk's
 * empty $n).  n == 0 is the whole record. */
int rbf_field(const char *rec, size_t len, uint64_t n, int sep, const char **key, size_t *klen);

/* A parsed redis://[user[:password]@]host:port[/db] or unix:///path. */
typedef struct rbf_redis_url {
    int is_unix;   /* 1: path is a Unix socket */
    char host[256];
    int port;
    char path[1024];
    char user[256];
    char password[256];
    int has_user, has_password;
    int db; /* 0 when not given */
} rbf_redis_url;

/* Parse s.  Percent escapes (%XX) are decoded in user, password and path.
 * Returns 0, or -1 with *why set to a static message. */
int rbf_redis_url_parse(const char *s, rbf_redis_url *u, const char **why);

#endif
