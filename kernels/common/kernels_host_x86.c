/* The host backend on x86-64: the widest kernel variant this CPU executes,
 * chosen once at run time (cpuid through __builtin_cpu_supports, which also
 * checks that the OS saves the vector state), so one binary is tuned on both
 * AVX2 and AVX-512 machines whatever machine built it.
 *
 * HXFUSE_HOST_ISA forces a variant: auto (default), avx512, avx2 or generic
 * (the vector-extension kernels alone).  A forced variant the CPU cannot
 * execute is refused before any work, naming what is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels_host.h"

static int has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma");
}
static int has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

/* The generic table with the variant's entries laid over it.  The row
 * alignment serves both GEMMs (tasks split rows with one value): the
 * variant's panel height when it replaces both, else a common multiple of
 * its height and the generic one. */
static void overlay(hx_kernels *t, const hx_kernels *v, const char *choice) {
    *t = hx_kernels_host_generic;
    t->name = v->name;
    t->choice = choice;
    t->gemm_f32_prep_bytes = v->gemm_f32_prep_bytes;
    t->gemm_f32_prepare = v->gemm_f32_prepare;
    t->gemm_f32_run = v->gemm_f32_run;
    t->gemm_f32_run_kc = v->gemm_f32_run_kc;
    t->gemm_f32_run_rows = v->gemm_f32_run_rows;
    t->vec_stream_f32 = v->vec_stream_f32;
    int a = v->gemm_rows_align, b = hx_kernels_host_generic.gemm_rows_align;
    t->gemm_rows_align = a / gcd(a, b) * b;
    if (v->gemm_u8i8_run_rows) { /* both GEMMs the variant's: its own panel height */
        t->gemm_u8i8_prep_bytes = v->gemm_u8i8_prep_bytes;
        t->gemm_u8i8_prepare = v->gemm_u8i8_prepare;
        t->gemm_u8i8_run = v->gemm_u8i8_run;
        t->gemm_u8i8_run_kc = v->gemm_u8i8_run_kc;
        t->gemm_u8i8_run_rows = v->gemm_u8i8_run_rows;
        t->gemm_rows_align = a;
    }
}

static _Noreturn void refuse(const char *want, const char *why) {
    fprintf(stderr, "error: HXFUSE_HOST_ISA=%s: %s (use auto, avx512, avx2 or generic)\n", want, why);
    exit(2);
}

const hx_kernels *hx_kernels_fast(void) {
    static hx_kernels table;
    static int ready;
    if (ready) return &table;
    const char *want = getenv("HXFUSE_HOST_ISA");
    if (!want || !*want || !strcmp(want, "auto")) {
        if (has_avx512()) overlay(&table, &hx_kernels_host_avx512, "auto");
        else if (has_avx2()) overlay(&table, &hx_kernels_host_avx2, "auto");
        else table = hx_kernels_host_generic, table.choice = "auto";
    } else if (!strcmp(want, "avx512")) {
        if (!has_avx512()) refuse(want, "this CPU lacks AVX-512 F/VL/BW/DQ or FMA");
        overlay(&table, &hx_kernels_host_avx512, "HXFUSE_HOST_ISA=avx512");
    } else if (!strcmp(want, "avx2")) {
        if (!has_avx2()) refuse(want, "this CPU lacks AVX2 or FMA");
        overlay(&table, &hx_kernels_host_avx2, "HXFUSE_HOST_ISA=avx2");
    } else if (!strcmp(want, "generic")) {
        table = hx_kernels_host_generic, table.choice = "HXFUSE_HOST_ISA=generic";
    } else {
        refuse(want, "unknown variant");
    }
    ready = 1;
    return &table;
}
