/*
 * fast_port.c -- the per-k fast paths (fast_tmpl.h) in portable C: the
 * fast path of every processor that has no faster one (ARM64, s390x, x86-64
 * without AVX2, or with RBF_NO_AVX2 set).
 */
#define FT(name) rbf__fport_##name
#define FT_TARGET
#include "fast_tmpl.h"
