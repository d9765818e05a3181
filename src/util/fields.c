/*
 * fields.c -- awk-style field splitting and Redis URL parsing (fields.h).
 */
#include "fields.h"

#include <string.h>

static int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

int rbf_field(const char *rec, size_t len, uint64_t n, int sep, const char **key, size_t *klen)
{
    if (n == 0) {
        *key = rec;
        *klen = len;
        return 1;
    }
    const char *p = rec, *end = rec + len;
    if (sep == RBF_FIELD_BLANKS || sep == ' ') {
        for (uint64_t i = 1;; i++) {
            while (p < end && is_blank((unsigned char)*p))
                p++;
            if (p == end)
                break;
            const char *s = p;
            while (p < end && !is_blank((unsigned char)*p))
                p++;
            if (i == n) {
                *key = s;
                *klen = (size_t)(p - s);
                return 1;
            }
        }
    } else {
        /* Every separator byte ends a field; a record has one field more
         * than it has separators (awk: an empty record has none). */
        if (len > 0) {
            for (uint64_t i = 1;; i++) {
                const char *q = memchr(p, sep, (size_t)(end - p));
                if (i == n) {
                    *key = p;
                    *klen = (size_t)((q ? q : end) - p);
                    return 1;
                }
                if (!q)
                    break;
                p = q + 1;
            }
        }
    }
    *key = end;
    *klen = 0;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Copy s[0..n) into out (size cap), decoding %XX.  Returns 0 or -1. */
static int decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n)
                return -1;
            int h = hexval(s[i + 1]), l = hexval(s[i + 2]);
            if (h < 0 || l < 0)
                return -1;
            c = (char)(h * 16 + l);
            i += 2;
        }
        if (c == '\0' || o + 1 >= cap)
            return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

int rbf_redis_url_parse(const char *s, rbf_redis_url *u, const char **why)
{
    memset(u, 0, sizeof *u);
    if (!strncmp(s, "rediss://", 9)) {
        *why = "rediss:// (TLS) is not supported: use redis:// on a trusted network, or unix://";
        return -1;
    }
    if (!strncmp(s, "unix://", 7)) {
        const char *p = s + 7;
        if (*p != '/') {
            *why = "a unix:// URL needs an absolute path (unix:///path/to/redis.sock)";
            return -1;
        }
        if (decode(p, strlen(p), u->path, sizeof u->path) < 0) {
            *why = "bad socket path (too long, or a bad %XX escape)";
            return -1;
        }
        u->is_unix = 1;
        return 0;
    }
    if (strncmp(s, "redis://", 8)) {
        *why = "the URL must start with redis:// or unix://";
        return -1;
    }
    const char *p = s + 8;
    const char *slash = strchr(p, '/');
    const char *auth_end = NULL;
    for (const char *q = p; *q && (!slash || q < slash); q++)
        if (*q == '@')
            auth_end = q; /* the last '@' before the path */
    if (auth_end) {
        const char *colon = memchr(p, ':', (size_t)(auth_end - p));
        const char *ue = colon ? colon : auth_end;
        if (ue > p) {
            if (decode(p, (size_t)(ue - p), u->user, sizeof u->user) < 0) {
                *why = "bad user name (too long, or a bad %XX escape)";
                return -1;
            }
            u->has_user = 1;
        }
        if (colon) {
            if (decode(colon + 1, (size_t)(auth_end - colon - 1), u->password,
                       sizeof u->password) < 0) {
                *why = "bad password (too long, or a bad %XX escape)";
                return -1;
            }
            u->has_password = 1;
        }
        p = auth_end + 1;
    }
    const char *hend = slash ? slash : p + strlen(p);
    const char *colon;
    if (*p == '[') { /* [IPv6]:port */
        const char *rb = memchr(p, ']', (size_t)(hend - p));
        if (!rb) {
            *why = "unclosed '[' in the host";
            return -1;
        }
        if ((size_t)(rb - p - 1) >= sizeof u->host || rb == p + 1) {
            *why = "bad host";
            return -1;
        }
        memcpy(u->host, p + 1, (size_t)(rb - p - 1));
        colon = rb + 1 < hend && rb[1] == ':' ? rb + 1 : NULL;
        if (rb + 1 < hend && !colon) {
            *why = "bad host";
            return -1;
        }
    } else {
        colon = memchr(p, ':', (size_t)(hend - p));
        const char *he = colon ? colon : hend;
        if (he == p) {
            *why = "the URL has no host";
            return -1;
        }
        if ((size_t)(he - p) >= sizeof u->host) {
            *why = "host name too long";
            return -1;
        }
        memcpy(u->host, p, (size_t)(he - p));
    }
    if (!colon) {
        *why = "the URL has no port (redis://host:port)";
        return -1;
    }
    long port = 0;
    const char *q = colon + 1;
    if (q == hend) {
        *why = "the URL has no port (redis://host:port)";
        return -1;
    }
    for (; q < hend; q++) {
        if (*q < '0' || *q > '9' || port > 65535) {
            *why = "the port must be a number from 1 to 65535";
            return -1;
        }
        port = port * 10 + (*q - '0');
    }
    if (port < 1 || port > 65535) {
        *why = "the port must be a number from 1 to 65535";
        return -1;
    }
    u->port = (int)port;
    if (slash && slash[1]) {
        long db = 0;
        for (q = slash + 1; *q; q++) {
            if (*q < '0' || *q > '9' || db > 100000) {
                *why = "the database (/db) must be a number";
                return -1;
            }
            db = db * 10 + (*q - '0');
        }
        u->db = (int)db;
    }
    return 0;
}
