/* Everything the command line decides (parsed and validated in args.c). */
#ifndef HX_CONFIG_H
#define HX_CONFIG_H
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "event.h"

enum { HX_M = 0, HX_V = 1, HX_D = 2, HX_NTASKS = 3 };
#define HX_BIT(t) (1u << (t))
enum { HX_FP32 = 0, HX_U8I8 = 1 };
enum { HX_V_COMPUTE = 0, HX_V_ONCHIP = 1, HX_V_DDR = 2 };
enum { HX_G_A = 0, HX_G_B, HX_G_C, HX_G_D, HX_NGROUPS, HX_G_ALONE = HX_NGROUPS };
enum { HX_INJECT_NONE = 0, HX_INJECT_V_OUT_M_OUT, HX_INJECT_D_DST_V_SCRATCH };
#define HX_MAX_WORKLOADS 3
#define HX_MAX_LABELS 16
#define HX_MAX_VWORKERS 8
/* Threads that can be placed: the host, the three engines, then the extra
 * vector workers vec1..vec7 (vecN at HX_ENG_VWORKER(N)). */
enum { HX_ENG_HOST = 0, HX_ENG_VEC, HX_ENG_MX, HX_ENG_DMA, HX_NENG_NAMED,
       HX_NENG_ALL = HX_NENG_NAMED + HX_MAX_VWORKERS - 1 };
#define HX_ENG_VWORKER(n) (HX_NENG_NAMED + (n) - 1)

typedef struct hx_config {
    const char *out_path;
    const char *npy_dir;
    int nworkloads;
    uint32_t workloads[HX_MAX_WORKLOADS]; /* task masks */
    int precision;
    int m, n, k;
    int v_variant, v_rows, v_cols, v_passes, v_workers;
    int d_rows, d_row_bytes, d_src_stride, d_desc_rows;
    int d_repeat; /* windows streamed from DDR through the scratch window */
    size_t scratch_bytes;
    int warmup, rounds;
    uint64_t seed;
    hx_wait_policy wait;
    int affinity[HX_NENG_ALL]; /* -1 = float */
    const char *affinity_spec;   /* as given: spread, none or the pairs */
    int spread;                  /* --affinity spread */
    int host_pin_refused;        /* set by main: spread's host pin was refused by the platform */
    int calibrate;
    double calib_us[HX_NTASKS];
    int early_completion;
    int check_at_publish;
    uint32_t groups; /* mask over HX_G_* */
    int inject;
    int nlabels;
    const char *label_key[HX_MAX_LABELS], *label_val[HX_MAX_LABELS];
} hx_config;

extern const char *const hx_task_names[HX_NTASKS];
extern const char *const hx_group_names[HX_NGROUPS + 1];
extern const char *const hx_engine_names[HX_NENG_NAMED];
const char *hx_workload_name(uint32_t mask);
/* Name of placeable thread e (index into hx_config.affinity); buf holds vecN. */
const char *hx_placed_name(int e, char *buf, size_t len);

/* Parses argv into cfg; returns 0, or -1 with a message in err. */
int hx_parse_args(int argc, char **argv, hx_config *cfg, char *err, size_t errlen);
void hx_usage(FILE *f);
#endif
