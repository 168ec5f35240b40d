/* GENERATED from hxfuse/runner/cli.py by `python3 -m hxfuse.runner.cli_c`
 * (kernels/Makefile reruns it): do not edit; edit the table and regenerate.
 * hxrun's options: bounds, defaults and named values (hxfuse/runner/cli_c.py
 * says what each name means). */
#ifndef HX_OPTIONS_H
#define HX_OPTIONS_H

/* --workloads */
#define HX_OPT_WORKLOADS_CHOICES  {"mv", "md", "mvd"}
#define HX_OPT_WORKLOADS_NCHOICES 3

/* --precision */
#define HX_OPT_PRECISION_CHOICES       {"fp32", "u8i8"}
#define HX_OPT_PRECISION_NCHOICES      2
#define HX_OPT_PRECISION_DEFAULT_INDEX 0

/* --m-shape */
#define HX_OPT_M_SHAPE_LO        1
#define HX_OPT_M_SHAPE_HI        8192
#define HX_OPT_M_SHAPE_RANGE     "[1, 8192]"
#define HX_OPT_M_SHAPE_DEFAULT_0 256
#define HX_OPT_M_SHAPE_DEFAULT_1 256
#define HX_OPT_M_SHAPE_DEFAULT_2 256

/* --v-variant */
#define HX_OPT_V_VARIANT_CHOICES       {"compute", "onchip", "ddr", "stream"}
#define HX_OPT_V_VARIANT_NCHOICES      4
#define HX_OPT_V_VARIANT_DEFAULT_INDEX 1

/* --v-workers */
#define HX_OPT_V_WORKERS_LO      1
#define HX_OPT_V_WORKERS_HI      8
#define HX_OPT_V_WORKERS_RANGE   "[1, 8]"
#define HX_OPT_V_WORKERS_DEFAULT 1

/* --d-shape */
#define HX_OPT_D_SHAPE_LO        1
#define HX_OPT_D_SHAPE_HI        16777216
#define HX_OPT_D_SHAPE_RANGE     "[1, 16777216]"
#define HX_OPT_D_SHAPE_DEFAULT_0 1024
#define HX_OPT_D_SHAPE_DEFAULT_1 2048

/* --d-desc-rows */
#define HX_OPT_D_DESC_ROWS_LO      1
#define HX_OPT_D_DESC_ROWS_HI      16777216
#define HX_OPT_D_DESC_ROWS_RANGE   "[1, 16777216]"
#define HX_OPT_D_DESC_ROWS_DEFAULT 64

/* --d-repeat */
#define HX_OPT_D_REPEAT_LO      1
#define HX_OPT_D_REPEAT_HI      1048576
#define HX_OPT_D_REPEAT_RANGE   "[1, 1048576]"
#define HX_OPT_D_REPEAT_DEFAULT 1

/* --scratch-bytes */
#define HX_OPT_SCRATCH_BYTES_LO      0
#define HX_OPT_SCRATCH_BYTES_HI      17179869184LL
#define HX_OPT_SCRATCH_BYTES_RANGE   "[0, 17179869184]"
#define HX_OPT_SCRATCH_BYTES_DEFAULT 8388608

/* --warmup */
#define HX_OPT_WARMUP_LO      0
#define HX_OPT_WARMUP_HI      1000000
#define HX_OPT_WARMUP_RANGE   "[0, 1000000]"
#define HX_OPT_WARMUP_DEFAULT 5

/* --rounds */
#define HX_OPT_ROUNDS_LO      1
#define HX_OPT_ROUNDS_HI      10000000
#define HX_OPT_ROUNDS_RANGE   "[1, 10000000]"
#define HX_OPT_ROUNDS_DEFAULT 30

/* --seed */
#define HX_OPT_SEED_LO      0
#define HX_OPT_SEED_HI      18446744073709551615ULL
#define HX_OPT_SEED_RANGE   "[0, 18446744073709551615]"
#define HX_OPT_SEED_DEFAULT 1

/* --affinity */
#define HX_OPT_AFFINITY_CHOICES       {"spread", "none"}
#define HX_OPT_AFFINITY_NCHOICES      2
#define HX_OPT_AFFINITY_DEFAULT_INDEX 1

/* --wait */
#define HX_OPT_WAIT_CHOICES       {"spin", "spin-block"}
#define HX_OPT_WAIT_NCHOICES      2
#define HX_OPT_WAIT_DEFAULT_INDEX 1

/* --spin-ns */
#define HX_OPT_SPIN_NS_LO      0
#define HX_OPT_SPIN_NS_HI      1000000000
#define HX_OPT_SPIN_NS_RANGE   "[0, 1000000000]"
#define HX_OPT_SPIN_NS_DEFAULT 20000

/* --early-completion */
#define HX_OPT_EARLY_COMPLETION_CHOICES  {"on", "off"}
#define HX_OPT_EARLY_COMPLETION_NCHOICES 2
#define HX_OPT_EARLY_COMPLETION_DEFAULT  1

/* --groups */
#define HX_OPT_GROUPS_CHOICES  {"A", "B", "C", "D"}
#define HX_OPT_GROUPS_NCHOICES 4

/* --m-tile */
#define HX_OPT_M_TILE_LO       8
#define HX_OPT_M_TILE_HI       8192
#define HX_OPT_M_TILE_RANGE    "[8, 8192]"
#define HX_OPT_M_TILE_MULTIPLE 8

/* --d-buffers */
#define HX_OPT_D_BUFFERS_LO      1
#define HX_OPT_D_BUFFERS_HI      2
#define HX_OPT_D_BUFFERS_RANGE   "[1, 2]"
#define HX_OPT_D_BUFFERS_DEFAULT 1

/* --v-release */
#define HX_OPT_V_RELEASE_CHOICES       {"at-completion", "at-entry-end"}
#define HX_OPT_V_RELEASE_NCHOICES      2
#define HX_OPT_V_RELEASE_DEFAULT_INDEX 0

/* --window */
#define HX_OPT_WINDOW_LO            1
#define HX_OPT_WINDOW_HI            3
#define HX_OPT_WINDOW_RANGE         "[1, 3]"
#define HX_OPT_WINDOW_CHOICES       {"all"}
#define HX_OPT_WINDOW_NCHOICES      1
#define HX_OPT_WINDOW_DEFAULT_INDEX 0

/* --antagonist */
#define HX_OPT_ANTAGONIST_LO      0
#define HX_OPT_ANTAGONIST_HI      8
#define HX_OPT_ANTAGONIST_RANGE   "[0, 8]"
#define HX_OPT_ANTAGONIST_DEFAULT 0

/* --antagonist-bytes */
#define HX_OPT_ANTAGONIST_BYTES_LO      1048576
#define HX_OPT_ANTAGONIST_BYTES_HI      1073741824
#define HX_OPT_ANTAGONIST_BYTES_RANGE   "[1048576, 1073741824]"
#define HX_OPT_ANTAGONIST_BYTES_DEFAULT 67108864

/* --v-shape */
#define HX_OPT_V_SHAPE_LO    1
#define HX_OPT_V_SHAPE_HI    65536
#define HX_OPT_V_SHAPE_RANGE "[1, 65536]"

/* --v-passes */
#define HX_OPT_V_PASSES_LO    1
#define HX_OPT_V_PASSES_HI    4096
#define HX_OPT_V_PASSES_RANGE "[1, 4096]"

/* --d-src-stride */
#define HX_OPT_D_SRC_STRIDE_LO    1
#define HX_OPT_D_SRC_STRIDE_HI    67108864
#define HX_OPT_D_SRC_STRIDE_RANGE "[1, 67108864]"

/* --checkpoints */
#define HX_OPT_CHECKPOINTS_LO      0
#define HX_OPT_CHECKPOINTS_HI      64
#define HX_OPT_CHECKPOINTS_RANGE   "[0, 64]"
#define HX_OPT_CHECKPOINTS_DEFAULT 32

/* --check-at-publish */
#define HX_OPT_CHECK_AT_PUBLISH_DEFAULT 0

/* --inject-conflict */
#define HX_OPT_INJECT_CONFLICT_CHOICES  {"V-out-aliases-M-out", "D-dst-aliases-V-scratch"}
#define HX_OPT_INJECT_CONFLICT_NCHOICES 2

/* --preempt-at-trial */
#define HX_OPT_PREEMPT_AT_TRIAL_LO    0
#define HX_OPT_PREEMPT_AT_TRIAL_HI    2000000000
#define HX_OPT_PREEMPT_AT_TRIAL_RANGE "[0, 2000000000]"
#endif
