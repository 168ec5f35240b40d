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
enum { HX_V_COMPUTE = 0, HX_V_ONCHIP = 1, HX_V_DDR = 2, HX_V_STREAM = 3, HX_NV_VARIANTS };
enum { HX_V_RELEASE_AT_COMPLETION = 0, HX_V_RELEASE_AT_ENTRY_END = 1 };
enum { HX_G_A = 0, HX_G_B, HX_G_C, HX_G_D, HX_NGROUPS, HX_G_ALONE = HX_NGROUPS };
enum { HX_INJECT_NONE = 0, HX_INJECT_V_OUT_M_OUT, HX_INJECT_D_DST_V_SCRATCH };
#define HX_MAX_WORKLOADS   3
#define HX_MAX_LABELS      16
#define HX_MAX_VWORKERS    8
#define HX_MAX_ANTAGONISTS 8
/* --checkpoints: most progress blocks per task (per V worker) */
#define HX_MAX_CKPT        64
#define HX_CKPT_DEFAULT    32
/* Threads that can be placed: the host, the three engines, the extra vector
 * workers vec1..vec7 (vecN at HX_ENG_VWORKER(N)), then the bandwidth
 * antagonists bw0..bw7 (bwN at HX_ENG_BW(N)). */
enum {
    HX_ENG_HOST = 0,
    HX_ENG_VEC,
    HX_ENG_MX,
    HX_ENG_DMA,
    HX_NENG_NAMED,
    HX_ENG_BW0 = HX_NENG_NAMED + HX_MAX_VWORKERS - 1,
    HX_NENG_ALL = HX_ENG_BW0 + HX_MAX_ANTAGONISTS
};
#define HX_ENG_VWORKER(n) (HX_NENG_NAMED + (n) - 1)
#define HX_ENG_BW(n)      (HX_ENG_BW0 + (n))
/* The host GEMM's default k-block (--m-tile): today's blocking. */
#define HX_M_TILE_DEFAULT 256

typedef struct hx_config {
    const char *out_path;
    const char *npy_dir;
    int nworkloads;
    uint32_t workloads[HX_MAX_WORKLOADS]; /* task masks */
    int precision;
    int m, n, k;
    int m_tile, m_tile_set; /* GEMM k-block depth; set: given on the command line */
    int v_variant, v_rows, v_cols, v_passes, v_workers;
    int v_shape_set; /* --v-shape given: the variant's default shape is not applied */
    int d_rows, d_row_bytes, d_src_stride, d_desc_rows;
    int d_repeat;            /* windows streamed from DDR through the scratch window */
    int d_buffers;           /* 1, or 2: windows alternate between two scratch windows */
    int v_release;           /* HX_V_RELEASE_*: when the fused entry frees V's scratch */
    int window;              /* group D: at most this many of the entry's tasks in flight; 0 = all */
    int antagonists;         /* bandwidth antagonist threads bw0.. */
    size_t antagonist_bytes; /* buffer each one streams */
    size_t scratch_bytes;
    int warmup, rounds;
    uint64_t seed;
    hx_wait_policy wait;
    int affinity[HX_NENG_ALL]; /* -1 = float */
    const char *affinity_spec; /* as given: spread, none or the pairs */
    int spread;                /* --affinity spread */
    int host_pin_refused;      /* set by main: spread's host pin was refused by the platform */
    int calibrate;
    double calib_us[HX_NTASKS];
    int early_completion;
    int check_at_publish;
    int checkpoints; /* progress blocks per task (per V worker); 0: none, the tasks run unblocked */
    uint32_t groups; /* mask over HX_G_* */
    int inject;
    int64_t preempt_at_trial; /* test hook: a release request arrives during this trial (-1: none) */
    int nlabels;
    const char *label_key[HX_MAX_LABELS], *label_val[HX_MAX_LABELS];
} hx_config;

extern const char *const hx_task_names[HX_NTASKS];
extern const char *const hx_group_names[HX_NGROUPS + 1];
extern const char *const hx_engine_names[HX_NENG_NAMED];
const char *hx_workload_name(uint32_t mask);
extern const char *const hx_v_variant_names[HX_NV_VARIANTS];
/* Name of placeable thread e (index into hx_config.affinity); buf holds vecN or bwN. */
const char *hx_placed_name(int e, char *buf, size_t len);

/* Parses argv into cfg; returns 0 on success, 1 when --help or -h was given
 * (parsing stops there; main prints the usage and exits 0), or -1 with
 * a message in err. */
int hx_parse_args(int argc, char **argv, hx_config *cfg, char *err, size_t errlen);
void hx_usage(FILE *f);
/* args.c: V's element size in bytes (fp32: 4, i16: 2). */
size_t hx_elem_bytes_v(const hx_config *cfg);
#endif
