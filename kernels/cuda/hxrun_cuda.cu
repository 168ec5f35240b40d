/* hxrun-cuda: one sweep point of the A-D study on an NVIDIA GPU (docs/gpu.md).
 *
 * The same command line (where an option applies) and the same JSON Lines
 * schema as hxrun (docs/runner.md), so the pipeline's checks, aggregation,
 * timelines and tables read its output unchanged.  The engines are real:
 * M on the tensor cores, V on the SMs' vector pipes, D on the Tensor Memory
 * Accelerator (fused) or the copy engine (cudaMemcpy2DAsync, the existing
 * path of groups A and B).  Groups:
 *   A  each task its own kernel launch on one stream, the host waiting after each;
 *   B  one stream per task, launched together (or, --b-mode graph, one CUDA
 *      graph with a parallel branch per task), the host waiting for all;
 *   C  one fused launch whose blocks take the M, V or D role, with a barrier
 *      between roles (M, then D, then V: the fused entry's order on the host);
 *   D  the same fused kernel with the barrier off.
 * Device timestamps are %globaltimer, converted to the host's clock
 * (CLOCK_MONOTONIC) by an offset measured at start and end (meta.clock.alignment).
 *
 * UNTESTED ON A GPU: this file is compiled by nvcc in CI; its first run is
 * tests/gpu/device_check.sh on a GPU machine. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <array>
#include <string>
#include <vector>

extern "C" {
#include "cli.h"
#include "json.h"
#include "kernels.h"
#include "npy.h"
#include "platform.h"
#include "record.h"
#include "rng.h"
}
#include "roles.cuh"

#ifndef HX_PLATFORM_NAME
#define HX_PLATFORM_NAME "gpu"
#endif
#ifndef HX_COMPILER
#define HX_COMPILER "nvcc"
#endif
#ifndef HX_CFLAGS
#define HX_CFLAGS ""
#endif
#ifndef HX_GPU_B_DEFAULT
#define HX_GPU_B_DEFAULT "streams"
#endif

static const char *PROG = "hxrun-cuda";
static const char *TASK_NAMES[ROLE_N] = {"M", "V", "D"};
/* the host's fixed submit order (docs/runner.md, "Placement"): M, D, V */
static const int SUBMIT_ORDER[ROLE_N] = {ROLE_M, ROLE_D, ROLE_V};

static void die(int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", PROG);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(rc);
}

#define CU(call)                                                                                                       \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) die(1, "%s failed: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__);     \
    } while (0)

/* ------------------------------------------------------------ options ---- */

struct args {
    const char *out = nullptr, *npy_dir = nullptr;
    std::vector<std::string> workloads{"mvd"};
    int m = 256, n = 256, k = 256, bf16 = 0;
    std::string v_variant = "onchip";
    int v_rows = -1, v_cols = -1, v_passes = -1, v_workers = 1;
    std::string v_release = "at-completion";
    long long d_rows = 1024, d_row_bytes = 2048, d_src_stride = -1, d_desc_rows = 64, d_repeat = 1;
    long long scratch_bytes = 8388608;
    int warmup = 5, rounds = 30;
    unsigned long long seed = 1;
    hx_wait_strategy wait = HX_WAIT_SPIN_BLOCK;
    long long spin_ns = 20000;
    int early_completion = 1, checkpoints = 32, host_core = -1, device = 0;
    std::string affinity = "none", d_path = "copy-engine", b_mode = HX_GPU_B_DEFAULT;
    const char *b_mode_choice = "build default";
    uint32_t groups = 0xF;
    double calib_us[ROLE_N] = {0, 0, 0};
    int calibrated = 0;
    std::vector<std::pair<std::string, std::string>> labels;
};

static void usage(void) {
    printf("usage: %s --out FILE [options]  (docs/runner.md, docs/gpu.md)\n"
           "  --npy-dir DIR --workloads mv,md,mvd --precision fp32 --m-shape M,N,K --m-input fp16|bf16\n"
           "  --v-variant compute|onchip|ddr|stream --v-shape R,C --v-passes P --v-workers 1..8 (V's share\n"
           "  of the fused blocks in eighths) --v-release at-completion|at-entry-end --window all\n"
           "  --d-shape R,B --d-src-stride S --d-desc-rows N --d-repeat N --d-buffers 1 --d-path copy-engine|tma\n"
           "  --scratch-bytes N --warmup W --rounds N --seed S --wait spin|spin-block --spin-ns N\n"
           "  --affinity none|spread|host=C --calibrate M=us,V=us,D=us --early-completion on|off\n"
           "  --checkpoints K --groups A,B,C,D --b-mode streams|graph --device N --label K=V\n",
           PROG);
}

static long long parse_int(const char *opt, const char *s, long long lo, long long hi) {
    long long v;
    if (hx_parse_ll(s, 10, lo, hi, &v) != 0) die(2, "%s: '%s' is not an integer in [%lld, %lld]", opt, s, lo, hi);
    return v;
}

static std::vector<long long> parse_ints(const char *opt, const char *s, int count, long long lo, long long hi) {
    std::vector<long long> out;
    std::string t(s);
    size_t pos = 0;
    while (true) {
        size_t c = t.find(',', pos);
        std::string item = t.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
        out.push_back(parse_int(opt, item.c_str(), lo, hi));
        if (c == std::string::npos) break;
        pos = c + 1;
    }
    if ((int)out.size() != count) die(2, "%s: expected %d comma-separated integers, got '%s'", opt, count, s);
    return out;
}

static void not_here(const char *opt, const char *why) {
    die(2, "%s is not available on the gpu target: %s", opt, why);
}

static void parse_args(int argc, char **argv, args &a) {
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage();
            exit(0);
        }
        if (!strcmp(o, "--selftest")) not_here(o, "the first-day ladder is the Hexagon bring-up's");
        if (!strcmp(o, "--check-at-publish")) not_here(o, "the host cannot read device outputs inside a launch");
        if (i + 1 >= argc) die(2, "%s needs a value", o);
        const char *v = argv[++i];
        if (!strcmp(o, "--out")) a.out = v;
        else if (!strcmp(o, "--npy-dir")) a.npy_dir = v;
        else if (!strcmp(o, "--workloads")) {
            a.workloads.clear();
            std::string t(v);
            size_t pos = 0;
            while (pos <= t.size()) {
                size_t c = t.find(',', pos);
                std::string w = t.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
                if (!w.empty()) {
                    if (w != "mv" && w != "md" && w != "mvd")
                        die(2, "--workloads: unknown workload '%s' (mv, md, mvd)", w.c_str());
                    a.workloads.push_back(w);
                }
                if (c == std::string::npos) break;
                pos = c + 1;
            }
            if (a.workloads.empty()) die(2, "--workloads: no workload given");
        } else if (!strcmp(o, "--precision")) {
            if (!strcmp(v, "u8i8"))
                not_here("--precision u8i8",
                         "M runs fp16/bf16 operands with fp32 accumulation on the tensor cores (--precision fp32)");
            if (strcmp(v, "fp32")) die(2, "--precision: '%s' is not fp32 or u8i8", v);
        } else if (!strcmp(o, "--m-input")) {
            if (!strcmp(v, "fp16")) a.bf16 = 0;
            else if (!strcmp(v, "bf16")) a.bf16 = 1;
            else die(2, "--m-input: '%s' is not fp16 or bf16", v);
        } else if (!strcmp(o, "--m-shape")) {
            auto s = parse_ints(o, v, 3, 1, 8192);
            a.m = (int)s[0], a.n = (int)s[1], a.k = (int)s[2];
        } else if (!strcmp(o, "--m-tile")) not_here(o, "the tensor-core GEMM's k-step is fixed at 16 (wmma m16n16k16)");
        else if (!strcmp(o, "--v-variant")) {
            if (strcmp(v, "compute") && strcmp(v, "onchip") && strcmp(v, "ddr") && strcmp(v, "stream"))
                die(2, "--v-variant: '%s' is not compute, onchip, ddr or stream", v);
            a.v_variant = v;
        } else if (!strcmp(o, "--v-shape")) {
            auto s = parse_ints(o, v, 2, 1, 65536);
            a.v_rows = (int)s[0], a.v_cols = (int)s[1];
        } else if (!strcmp(o, "--v-passes")) a.v_passes = (int)parse_int(o, v, 1, 4096);
        else if (!strcmp(o, "--v-workers")) a.v_workers = (int)parse_int(o, v, 1, 8);
        else if (!strcmp(o, "--v-release")) {
            if (strcmp(v, "at-completion") && strcmp(v, "at-entry-end"))
                die(2, "--v-release: '%s' is not at-completion or at-entry-end", v);
            a.v_release = v;
        } else if (!strcmp(o, "--window")) {
            if (strcmp(v, "all") && strcmp(v, "3"))
                not_here("--window 1 or 2", "the fused kernel launches every role at once (only all)");
        } else if (!strcmp(o, "--d-shape")) {
            auto s = parse_ints(o, v, 2, 1, 1 << 24);
            a.d_rows = s[0], a.d_row_bytes = s[1];
        } else if (!strcmp(o, "--d-src-stride")) a.d_src_stride = parse_int(o, v, 1, 1 << 26);
        else if (!strcmp(o, "--d-desc-rows")) a.d_desc_rows = parse_int(o, v, 1, 1 << 24);
        else if (!strcmp(o, "--d-repeat")) a.d_repeat = parse_int(o, v, 1, 1 << 20);
        else if (!strcmp(o, "--d-buffers")) {
            if (parse_int(o, v, 1, 2) != 1) not_here("--d-buffers 2", "D's destination is one buffer in device memory");
        } else if (!strcmp(o, "--d-path")) {
            if (strcmp(v, "copy-engine") && strcmp(v, "tma")) die(2, "--d-path: '%s' is not copy-engine or tma", v);
            a.d_path = v;
        } else if (!strcmp(o, "--scratch-bytes")) a.scratch_bytes = parse_int(o, v, 0, 1LL << 34);
        else if (!strcmp(o, "--warmup")) a.warmup = (int)parse_int(o, v, 0, 1000000);
        else if (!strcmp(o, "--rounds")) a.rounds = (int)parse_int(o, v, 1, 10000000);
        else if (!strcmp(o, "--seed")) {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 10);
            if (errno || *end || !*v || *v == '-') die(2, "--seed: '%s' is not an unsigned 64-bit integer", v);
            a.seed = s;
        } else if (!strcmp(o, "--wait")) {
            if (hx_parse_wait(v, &a.wait) != 0) die(2, "--wait: '%s' is not spin or spin-block", v);
        } else if (!strcmp(o, "--spin-ns")) a.spin_ns = parse_int(o, v, 0, 1000000000);
        else if (!strcmp(o, "--early-completion")) {
            if (!strcmp(v, "on")) a.early_completion = 1;
            else if (!strcmp(v, "off")) a.early_completion = 0;
            else die(2, "--early-completion: '%s' is not on or off", v);
        } else if (!strcmp(o, "--checkpoints")) a.checkpoints = (int)parse_int(o, v, 0, HX_CP_MAX);
        else if (!strcmp(o, "--groups")) {
            if (hx_parse_groups(v, &a.groups) != 0) die(2, "--groups: '%s' is not a list of A, B, C, D", v);
        } else if (!strcmp(o, "--b-mode")) {
            if (strcmp(v, "streams") && strcmp(v, "graph")) die(2, "--b-mode: '%s' is not streams or graph", v);
            a.b_mode = v, a.b_mode_choice = "--b-mode";
        } else if (!strcmp(o, "--device")) a.device = (int)parse_int(o, v, 0, 1023);
        else if (!strcmp(o, "--affinity")) {
            a.affinity = v;
            if (!strcmp(v, "none")) a.host_core = -1;
            else if (!strcmp(v, "spread")) a.host_core = -2; /* resolved to the first allowed core */
            else {
                std::string t(v);
                size_t pos = 0;
                while (pos <= t.size()) {
                    size_t c = t.find(',', pos);
                    std::string pair = t.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
                    size_t eq = pair.find('=');
                    if (eq == std::string::npos) die(2, "--affinity: '%s' is not engine=core", pair.c_str());
                    std::string eng = pair.substr(0, eq);
                    if (eng != "host")
                        die(2,
                            "--affinity: no engine thread '%s' on the gpu target (the engines are the GPU's; only "
                            "host=C applies)",
                            eng.c_str());
                    a.host_core =
                        (int)parse_int("--affinity host", pair.substr(eq + 1).c_str(), 0, hx_online_cores() - 1);
                    if (c == std::string::npos) break;
                    pos = c + 1;
                }
            }
        } else if (!strcmp(o, "--calibrate")) {
            std::string t(v);
            size_t pos = 0;
            while (pos <= t.size()) {
                size_t c = t.find(',', pos);
                std::string pair = t.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
                size_t eq = pair.find('=');
                int r = eq == 1 ? (pair[0] == 'M'   ? ROLE_M
                                   : pair[0] == 'V' ? ROLE_V
                                   : pair[0] == 'D' ? ROLE_D
                                                    : -1)
                                : -1;
                if (r < 0) die(2, "--calibrate: '%s' is not M=us, V=us or D=us", pair.c_str());
                char *end;
                double us = strtod(pair.c_str() + 2, &end);
                if (*end || !(us > 0) || us > 1e7)
                    die(2, "--calibrate: '%s' is not a positive number of microseconds", pair.c_str());
                a.calib_us[r] = us, a.calibrated = 1;
                if (c == std::string::npos) break;
                pos = c + 1;
            }
        } else if (!strcmp(o, "--label")) {
            const char *eq = strchr(v, '=');
            if (!eq) die(2, "--label: '%s' is not K=V", v);
            a.labels.push_back({std::string(v, eq - v), std::string(eq + 1)});
        } else if (!strcmp(o, "--antagonist")) {
            if (parse_int(o, v, 0, 8) != 0)
                not_here("--antagonist", "no bandwidth antagonist threads (the memory is the GPU's)");
        } else if (!strcmp(o, "--antagonist-bytes")) parse_int(o, v, 1 << 20, 1 << 30);
        else if (!strcmp(o, "--inject-conflict"))
            not_here(o, "there is no scratch arena or range check on the gpu target");
        else if (!strcmp(o, "--preempt-at-trial")) not_here(o, "no NPU resource manager on a GPU");
        else die(2, "unknown option %s (--help lists them)", o);
    }
    if (!a.out) die(2, "--out is required");
    /* per-variant defaults, as hxrun's (docs/runner.md) */
    int big = a.v_variant == "ddr" || a.v_variant == "stream";
    if (a.v_rows < 0)
        a.v_rows = a.v_variant == "compute" ? 64
                   : big                    ? 4096
                                            : 512,
        a.v_cols = a.v_variant == "compute" ? 256
                   : big                    ? 4096
                                            : 1024;
    if (a.v_passes < 0) a.v_passes = a.v_variant == "compute" ? 32 : 1;
    if (a.d_src_stride < 0) a.d_src_stride = 2 * a.d_row_bytes;
    if (a.d_src_stride < a.d_row_bytes)
        die(2, "--d-src-stride %lld is less than the row bytes %lld", a.d_src_stride, a.d_row_bytes);
    if (a.d_rows % a.d_desc_rows && a.d_desc_rows > a.d_rows) a.d_desc_rows = a.d_rows;
    if (const char *env = getenv("HXFUSE_GPU_B")) {
        if (strcmp(env, "streams") && strcmp(env, "graph")) die(2, "HXFUSE_GPU_B='%s' is not streams or graph", env);
        if (strcmp(a.b_mode_choice, "--b-mode")) a.b_mode = env, a.b_mode_choice = "HXFUSE_GPU_B";
    }
}

/* ---------------------------------------------------------- GPU info ---- */

struct gpu_info {
    cudaDeviceProp prop;
    int driver = 0, runtime = 0, sm_clock_khz = -1, mem_clock_khz = -1;
    char driver_version[96] = "unknown";
    int nvml = 0;
    unsigned int sm_mhz_start = 0, sm_mhz_end = 0, sm_mhz_max = 0, mem_mhz = 0, app_sm_mhz = 0;
};

/* NVML (libnvidia-ml.so.1, part of the driver) for the clocks the run saw;
 * loaded at run time so that building needs no driver.  Signatures from
 * nvml.h (NVIDIA Management Library API reference). */
typedef int (*nvml_init_t)(void);
typedef int (*nvml_handle_t)(unsigned int, void **);
typedef int (*nvml_clock_t)(void *, int, unsigned int *);
typedef int (*nvml_driver_t)(char *, unsigned int);
static struct {
    void *lib, *dev;
    nvml_clock_t clock, max_clock, app_clock;
} g_nvml;

static void nvml_open(gpu_info &g, int device) {
    g_nvml.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!g_nvml.lib) return;
    auto init = (nvml_init_t)dlsym(g_nvml.lib, "nvmlInit_v2");
    auto handle = (nvml_handle_t)dlsym(g_nvml.lib, "nvmlDeviceGetHandleByIndex_v2");
    auto drv = (nvml_driver_t)dlsym(g_nvml.lib, "nvmlSystemGetDriverVersion");
    g_nvml.clock = (nvml_clock_t)dlsym(g_nvml.lib, "nvmlDeviceGetClockInfo");
    g_nvml.max_clock = (nvml_clock_t)dlsym(g_nvml.lib, "nvmlDeviceGetMaxClockInfo");
    g_nvml.app_clock = (nvml_clock_t)dlsym(g_nvml.lib, "nvmlDeviceGetApplicationsClock");
    if (!init || !handle || !g_nvml.clock || init() != 0 || handle((unsigned)device, &g_nvml.dev) != 0) return;
    g.nvml = 1;
    if (drv) drv(g.driver_version, sizeof g.driver_version);
    /* NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 */
    g_nvml.clock(g_nvml.dev, 1, &g.sm_mhz_start);
    g_nvml.clock(g_nvml.dev, 2, &g.mem_mhz);
    if (g_nvml.max_clock) g_nvml.max_clock(g_nvml.dev, 1, &g.sm_mhz_max);
    if (g_nvml.app_clock) g_nvml.app_clock(g_nvml.dev, 1, &g.app_sm_mhz);
}

static unsigned int nvml_sm_mhz(void) {
    unsigned int v = 0;
    if (g_nvml.dev && g_nvml.clock) g_nvml.clock(g_nvml.dev, 1, &v);
    return v;
}

/* --------------------------------------------------------- clocks ---- */

struct alignment {
    long long offset_ns = 0; /* device globaltimer - host CLOCK_MONOTONIC */
    long long rtt_ns = 0;    /* the tightest exchange's round trip: the offset's uncertainty is half of it */
    int pings = 0;
};

static volatile unsigned int *g_req;
static volatile unsigned long long *g_reply;

static alignment align_clocks(int pings) {
    alignment best;
    best.rtt_ns = -1;
    *g_req = 0;
    g_reply[1] = 0;
    hx_echo_kernel<<<1, 1>>>((volatile unsigned int *)g_req, (volatile unsigned long long *)g_reply, pings);
    CU(cudaGetLastError());
    for (int i = 1; i <= pings; i++) {
        uint64_t t0 = hx_now_ns();
        *g_req = (unsigned)i;
        while (g_reply[1] != (unsigned long long)i) {
            if (hx_now_ns() - t0 > 5000000000ull) die(1, "clock alignment: the GPU did not answer within 5 s");
        }
        uint64_t t1 = hx_now_ns();
        long long rtt = (long long)(t1 - t0);
        if (best.rtt_ns < 0 || rtt < best.rtt_ns) {
            best.rtt_ns = rtt;
            best.offset_ns = (long long)g_reply[0] - (long long)(t0 + (t1 - t0) / 2);
        }
    }
    CU(cudaDeviceSynchronize());
    best.pings = pings;
    return best;
}

/* ------------------------------------------------------------ state ---- */

struct role_plan {
    int solo_blocks = 0, fused_blocks = 0, units = 0;
};

struct state {
    args a;
    gpu_info g;
    uint64_t epoch = 0;
    alignment al;
    int slots = 0, blocks_per_sm = 0, tma = 0;
    /* buffers */
    int mp = 0, np = 0, kp = 0;
    std::vector<float> hA, hB, hX;
    std::vector<unsigned char> hSrc;
    hx_mtask mt{};
    hx_vtask vt{};
    hx_dtask dt{};
    size_t bytes_c = 0, bytes_y = 0, bytes_row = 0, bytes_dst = 0;
    /* records and control */
    hx_block_rec *rec[ROLE_N] = {nullptr, nullptr, nullptr};
    hx_block_rec *rec_host = nullptr;
    unsigned int *done = nullptr;                 /* ROLE_N counters */
    volatile unsigned long long *flags = nullptr; /* mapped: ROLE_N completion flags */
    unsigned long long *flags_dev = nullptr;
    unsigned long long *stamps = nullptr; /* copy-engine D: begin, end */
    unsigned long long stamps_host[2];
    cudaStream_t s[ROLE_N], s_main;
    cudaEvent_t ev[ROLE_N], ev_main;
    role_plan plan[ROLE_N];
    cudaGraphExec_t graph[2][8]; /* [empty][task mask] */
    int graph_ready[2][8] = {{0}};
    std::vector<int> cores;
    FILE *f = nullptr;
    uint64_t trial_seq = 0;
};

static long long rel(const state &st, uint64_t host_ns) { return (long long)(host_ns - st.epoch); }
static long long dev_rel(const state &st, unsigned long long gt) {
    return (long long)gt - st.al.offset_ns - (long long)st.epoch;
}

static void fill_inputs(state &st) {
    args &a = st.a;
    uint64_t rs = a.seed * 0x9E3779B97F4A7C15ull + 1;
    /* M's operands are multiples of 1/8 in [-1, 1]: exact in fp16 and bf16,
     * so the device sees the very values the .npy files hold and the check's
     * fp32 tolerance applies to the accumulation alone */
    st.hA.resize((size_t)a.m * a.k), st.hB.resize((size_t)a.k * a.n);
    for (auto &x : st.hA) x = (float)((int)(hx_splitmix64(&rs) % 17) - 8) / 8.0f;
    for (auto &x : st.hB) x = (float)((int)(hx_splitmix64(&rs) % 17) - 8) / 8.0f;
    st.hX.resize((size_t)a.v_rows * a.v_cols);
    for (auto &x : st.hX) x = (float)((double)(hx_splitmix64(&rs) >> 11) * 0x1.0p-53 * 8.0 - 4.0);
    st.hSrc.resize((size_t)(a.d_rows * a.d_repeat) * (size_t)a.d_src_stride);
    for (size_t i = 0; i < st.hSrc.size(); i += 8) {
        uint64_t w = hx_splitmix64(&rs);
        memcpy(&st.hSrc[i], &w, st.hSrc.size() - i < 8 ? st.hSrc.size() - i : 8);
    }
}

static void *dmalloc(size_t n) {
    void *p = nullptr;
    CU(cudaMalloc(&p, n ? n : 16));
    return p;
}

static void setup(state &st) {
    args &a = st.a;
    /* the driver first: without it the runtime's own message ("driver
     * version is insufficient") would name the wrong thing */
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!drv) drv = dlopen("libcuda.so.1", RTLD_NOW);
    if (!drv)
        die(1, "no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded: %s); the gpu target needs one",
            dlerror());
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        die(1, "no usable NVIDIA GPU: cudaGetDeviceCount: %s (is the driver loaded? nvidia-smi)",
            cudaGetErrorString(e));
    if (a.device >= count) die(2, "--device %d: this machine has %d GPU(s)", a.device, count);
    CU(cudaSetDevice(a.device));
    CU(cudaGetDeviceProperties(&st.g.prop, a.device));
    CU(cudaDriverGetVersion(&st.g.driver));
    CU(cudaRuntimeGetVersion(&st.g.runtime));
    cudaDeviceGetAttribute(&st.g.sm_clock_khz, cudaDevAttrClockRate, a.device);
    cudaDeviceGetAttribute(&st.g.mem_clock_khz, cudaDevAttrMemoryClockRate, a.device);
    nvml_open(st.g, a.device);
    st.tma = st.g.prop.major >= 9 && a.d_row_bytes % 16 == 0 && a.d_src_stride % 16 == 0;
    CU(cudaFuncSetAttribute(hx_fused_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, HX_STAGE_BYTES));
    CU(cudaFuncSetAttribute(hx_solo_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, HX_STAGE_BYTES));
    int occ = 0;
    CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, hx_fused_kernel, HX_THREADS, HX_STAGE_BYTES));
    if (occ < 1) die(1, "the fused kernel fits no block on an SM (occupancy 0)");
    st.blocks_per_sm = occ < 2 ? occ : 2;
    st.slots = st.g.prop.multiProcessorCount * st.blocks_per_sm;

    fill_inputs(st);
    st.mp = (a.m + 15) / 16 * 16, st.np = (a.n + 15) / 16 * 16, st.kp = (a.k + 15) / 16 * 16;
    /* padded operands, converted once (the prepared layout, outside timing) */
    std::vector<unsigned short> pa((size_t)st.mp * st.kp, 0), pb((size_t)st.kp * st.np, 0);
    for (int i = 0; i < a.m; i++)
        for (int j = 0; j < a.k; j++) {
            float x = st.hA[(size_t)i * a.k + j];
            if (a.bf16) {
                __nv_bfloat16 h = __float2bfloat16(x);
                memcpy(&pa[(size_t)i * st.kp + j], &h, 2);
            } else {
                __half h = __float2half(x);
                memcpy(&pa[(size_t)i * st.kp + j], &h, 2);
            }
        }
    for (int i = 0; i < a.k; i++)
        for (int j = 0; j < a.n; j++) {
            float x = st.hB[(size_t)i * a.n + j];
            if (a.bf16) {
                __nv_bfloat16 h = __float2bfloat16(x);
                memcpy(&pb[(size_t)i * st.np + j], &h, 2);
            } else {
                __half h = __float2half(x);
                memcpy(&pb[(size_t)i * st.np + j], &h, 2);
            }
        }
    void *dA = dmalloc(pa.size() * 2), *dB = dmalloc(pb.size() * 2);
    CU(cudaMemcpy(dA, pa.data(), pa.size() * 2, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(dB, pb.data(), pb.size() * 2, cudaMemcpyHostToDevice));
    st.bytes_c = (size_t)st.mp * st.np * 4;
    st.mt = {dA, dB, (float *)dmalloc(st.bytes_c), st.mp, st.np, st.kp, a.bf16};

    st.bytes_y = (size_t)a.v_rows * a.v_cols * 4, st.bytes_row = (size_t)a.v_rows * 4;
    float *dX = (float *)dmalloc(st.bytes_y);
    CU(cudaMemcpy(dX, st.hX.data(), st.bytes_y, cudaMemcpyHostToDevice));
    st.vt = {dX,
             (float *)dmalloc(st.bytes_y),
             (float *)dmalloc(st.bytes_row),
             (float *)dmalloc(st.bytes_row),
             a.v_rows,
             a.v_cols,
             a.v_passes,
             a.v_variant == "stream"};

    unsigned char *dSrc = (unsigned char *)dmalloc(st.hSrc.size());
    CU(cudaMemcpy(dSrc, st.hSrc.data(), st.hSrc.size(), cudaMemcpyHostToDevice));
    st.bytes_dst = (size_t)a.d_rows * (size_t)a.d_row_bytes;
    st.dt = {dSrc,           (unsigned char *)dmalloc(st.bytes_dst),
             a.d_rows,       a.d_row_bytes,
             a.d_src_stride, a.d_desc_rows,
             a.d_repeat,     st.tma};

    /* blocks per role: the whole grid alone (capped by the work), and the
     * fused split: V gets v_workers eighths, D an eighth, M the rest */
    st.plan[ROLE_M].units = (st.mp / 16) * (st.np / 16);
    st.plan[ROLE_V].units = a.v_rows;
    st.plan[ROLE_D].units = (int)((a.d_rows + a.d_desc_rows - 1) / a.d_desc_rows);
    int m_rounds = (st.plan[ROLE_M].units + HX_WARPS - 1) / HX_WARPS;
    int cap[ROLE_N] = {m_rounds, st.plan[ROLE_V].units, st.plan[ROLE_D].units};
    for (int r = 0; r < ROLE_N; r++) {
        st.plan[r].solo_blocks = a.calibrated ? 1 : (cap[r] < st.slots ? cap[r] : st.slots);
    }
    int nV = st.slots * a.v_workers / 8, nD = st.slots / 8;
    if (nV < 1) nV = 1;
    if (nD < 1) nD = 1;
    if (nV + nD >= st.slots) nV = st.slots - nD - 1;
    if (nV < 1) die(1, "%d block slots cannot hold the three roles", st.slots);
    int want[ROLE_N] = {st.slots - nV - nD, nV, nD};
    for (int r = 0; r < ROLE_N; r++) {
        int b = a.calibrated ? 1 : (want[r] < cap[r] ? want[r] : cap[r]);
        st.plan[r].fused_blocks = b < 1 ? 1 : b;
    }
    int most = 0;
    for (int r = 0; r < ROLE_N; r++) {
        int b = st.plan[r].solo_blocks > st.plan[r].fused_blocks ? st.plan[r].solo_blocks : st.plan[r].fused_blocks;
        st.rec[r] = (hx_block_rec *)dmalloc(sizeof(hx_block_rec) * b);
        most = b > most ? b : most;
    }
    st.rec_host = (hx_block_rec *)malloc(sizeof(hx_block_rec) * (size_t)most);
    st.done = (unsigned int *)dmalloc(sizeof(unsigned int) * ROLE_N);
    CU(cudaHostAlloc((void **)&st.flags, sizeof(unsigned long long) * ROLE_N, cudaHostAllocMapped));
    CU(cudaHostGetDevicePointer((void **)&st.flags_dev, (void *)st.flags, 0));
    st.stamps = (unsigned long long *)dmalloc(sizeof(unsigned long long) * 2);
    unsigned int *req;
    unsigned long long *reply;
    CU(cudaHostAlloc((void **)&req, sizeof(unsigned int), cudaHostAllocMapped));
    CU(cudaHostAlloc((void **)&reply, 2 * sizeof(unsigned long long), cudaHostAllocMapped));
    unsigned int *req_dev;
    unsigned long long *reply_dev;
    CU(cudaHostGetDevicePointer((void **)&req_dev, req, 0));
    CU(cudaHostGetDevicePointer((void **)&reply_dev, reply, 0));
    /* mapped memory is the same address on both sides under UVA (every
     * 64-bit platform CUDA supports); the kernel gets the device pointer */
    g_req = req, g_reply = reply;
    if ((void *)req_dev != (void *)req || (void *)reply_dev != (void *)reply)
        die(1, "mapped host memory has different host and device addresses (no unified addressing)");
    unsigned flags = cudaEventDisableTiming | (a.wait == HX_WAIT_SPIN_BLOCK ? cudaEventBlockingSync : 0);
    for (int r = 0; r < ROLE_N; r++) {
        CU(cudaStreamCreateWithFlags(&st.s[r], cudaStreamNonBlocking));
        CU(cudaEventCreateWithFlags(&st.ev[r], flags));
    }
    CU(cudaStreamCreateWithFlags(&st.s_main, cudaStreamNonBlocking));
    CU(cudaEventCreateWithFlags(&st.ev_main, flags));
}

/* ------------------------------------------------------------ trials ---- */

struct task_obs {
    int present = 0;
    long long launch = 0, host_seen = 0;
    int blocks = 0, copy_engine = 0;
    std::vector<hx_block_rec> recs;
    uint64_t checksum = 0;
    int have_checksum = 0;
};

struct trial_obs {
    std::string workload, group;
    int round = 0, seq = 0, warmup = 0, empty = 0;
    long long submit_begin = 0, submit_end = 0, wait_begin = 0, wait_end = 0, submit_ns = 0, wait_ns = 0;
    std::vector<long long> submits;
    int requests = 0, host_cpu = -1;
    task_obs t[ROLE_N];
    struct wait_rec {
        const char *who, *on;
        long long begin, end;
    };
    std::vector<wait_rec> waits;
    int fused = 0;
    long long scratch_peak = 0;
    int64_t nivcsw0 = 0, nivcsw1 = 0, busy0 = 0, busy1 = 0, self0 = 0, self1 = 0;
    uint64_t span0 = 0, span1 = 0;
};

static hx_role_ctl make_ctl(state &st, int role, int empty, int fused, int barrier, unsigned mask) {
    hx_role_ctl c{};
    c.rec = st.rec[role];
    c.done = st.done + role;
    c.flag = fused ? st.flags_dev + role : nullptr;
    c.flag_value = st.trial_seq;
    c.calib_ns = (unsigned long long)(st.a.calib_us[role] * 1000.0);
    if (st.a.calibrated && !c.calib_ns) c.calib_ns = 1000; /* a task not named: 1 us */
    c.empty = empty;
    c.checkpoints = st.a.checkpoints;
    if (barrier) {
        /* C: M, then D, then V (absent roles skipped) */
        int prev = -1;
        if (role == ROLE_D && (mask & 1)) prev = ROLE_M;
        if (role == ROLE_V) prev = (mask & 4) ? ROLE_D : (mask & 1) ? ROLE_M : -1;
        if (prev >= 0) c.wait_done = st.done + prev, c.wait_for = (unsigned)st.plan[prev].fused_blocks;
    }
    return c;
}

static unsigned task_mask(const std::string &wl) {
    if (wl == "M") return 1;
    if (wl == "V") return 2;
    if (wl == "D") return 4;
    return 1u | (wl.find('v') != std::string::npos ? 2u : 0u) | (wl.find('d') != std::string::npos ? 4u : 0u);
}

static int d_copy_engine(const state &st) { return st.a.d_path == "copy-engine" && !st.a.calibrated; }

/* Launch one task alone on stream s (groups A, B, alone). */
static void launch_solo(state &st, int role, int empty, cudaStream_t s) {
    if (role == ROLE_D && d_copy_engine(st)) {
        hx_stamp_kernel<<<1, 1, 0, s>>>(st.stamps);
        if (!empty) {
            for (long long w = 0; w < st.a.d_repeat; w++)
                CU(cudaMemcpy2DAsync(st.dt.dst, (size_t)st.dt.row_bytes,
                                     st.dt.src + (size_t)(w * st.dt.rows) * (size_t)st.dt.src_stride,
                                     (size_t)st.dt.src_stride, (size_t)st.dt.row_bytes, (size_t)st.dt.rows,
                                     cudaMemcpyDeviceToDevice, s));
        }
        hx_stamp_kernel<<<1, 1, 0, s>>>(st.stamps + 1);
        return;
    }
    hx_role_ctl c = make_ctl(st, role, empty, 0, 0, 7);
    size_t smem = role == ROLE_D ? HX_STAGE_BYTES : 0;
    hx_solo_kernel<<<st.plan[role].solo_blocks, HX_THREADS, smem, s>>>(role, st.mt, st.vt, st.dt, c);
    CU(cudaGetLastError());
}

static void host_wait_event(state &st, cudaEvent_t ev) {
    uint64_t t0 = hx_now_ns();
    while (true) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) die(1, "waiting for the GPU: %s", cudaGetErrorString(e));
        if (st.a.wait == HX_WAIT_SPIN_BLOCK && hx_now_ns() - t0 > (uint64_t)st.a.spin_ns) {
            CU(cudaEventSynchronize(ev));
            return;
        }
    }
}

static cudaGraphExec_t b_graph(state &st, unsigned mask, int empty) {
    if (st.graph_ready[empty][mask]) return st.graph[empty][mask];
    /* a fork-join graph: one branch per task, each ending in an event record
     * node (cudaEventRecordExternal) that the host polls as B's per-task
     * completion; captured once, outside the timed region */
    cudaEvent_t fork, join[ROLE_N];
    CU(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    for (int r = 0; r < ROLE_N; r++) CU(cudaEventCreateWithFlags(&join[r], cudaEventDisableTiming));
    cudaGraph_t g;
    CU(cudaStreamBeginCapture(st.s_main, cudaStreamCaptureModeThreadLocal));
    CU(cudaEventRecord(fork, st.s_main));
    for (int i = 0; i < ROLE_N; i++) {
        int r = SUBMIT_ORDER[i];
        if (!(mask & (1u << r))) continue;
        CU(cudaStreamWaitEvent(st.s[r], fork, 0));
        launch_solo(st, r, empty, st.s[r]);
        /* an event record node the host polls (external), and a plain
         * record for the join: a wait on an external record is no capture
         * dependency (CUDA Programming Guide, "Stream Capture") */
        CU(cudaEventRecordWithFlags(st.ev[r], st.s[r], cudaEventRecordExternal));
        CU(cudaEventRecord(join[r], st.s[r]));
        CU(cudaStreamWaitEvent(st.s_main, join[r], 0));
    }
    CU(cudaStreamEndCapture(st.s_main, &g));
    CU(cudaGraphInstantiate(&st.graph[empty][mask], g, 0));
    CU(cudaGraphDestroy(g));
    st.graph_ready[empty][mask] = 1;
    return st.graph[empty][mask];
}

static void collect(state &st, trial_obs &o, unsigned mask, int fused) {
    for (int r = 0; r < ROLE_N; r++) {
        if (!(mask & (1u << r))) continue;
        task_obs &t = o.t[r];
        t.present = 1;
        if (r == ROLE_D && !fused && d_copy_engine(st)) {
            CU(cudaMemcpy(st.stamps_host, st.stamps, sizeof st.stamps_host, cudaMemcpyDeviceToHost));
            t.copy_engine = 1, t.blocks = 1;
            hx_block_rec b{};
            b.launch = b.begin = st.stamps_host[0], b.end = st.stamps_host[1];
            b.units = o.empty ? 0 : 1;
            if (!o.empty && st.a.checkpoints > 0) {
                b.ncp = 2, b.cp[0] = b.begin, b.cp[1] = b.end, b.work[0] = 0.f, b.work[1] = 1.f;
            }
            t.recs.assign(1, b);
            continue;
        }
        t.blocks = fused ? st.plan[r].fused_blocks : st.plan[r].solo_blocks;
        t.recs.resize((size_t)t.blocks);
        CU(cudaMemcpy(t.recs.data(), st.rec[r], sizeof(hx_block_rec) * (size_t)t.blocks, cudaMemcpyDeviceToHost));
    }
}

static uint64_t task_checksum(std::initializer_list<std::pair<const void *, size_t>> outs) {
    uint64_t h = 0, j = 0;
    for (auto &o : outs) h += hx_checksum(o.first, o.second) * (2 * j++ + 1);
    return h;
}

struct host_out {
    std::vector<float> c, y, rs, rm;
    std::vector<unsigned char> dst;
};

static void read_outputs(state &st, host_out &h, unsigned mask) {
    const args &a = st.a;
    if (mask & 1) {
        h.c.resize((size_t)a.m * a.n);
        CU(cudaMemcpy2D(h.c.data(), (size_t)a.n * 4, st.mt.c, (size_t)st.np * 4, (size_t)a.n * 4, (size_t)a.m,
                        cudaMemcpyDeviceToHost));
    }
    if (mask & 2) {
        h.y.resize((size_t)a.v_rows * a.v_cols), h.rs.resize(a.v_rows), h.rm.resize(a.v_rows);
        CU(cudaMemcpy(h.y.data(), st.vt.y, st.bytes_y, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(h.rs.data(), st.vt.rowsum, st.bytes_row, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(h.rm.data(), st.vt.rowmax, st.bytes_row, cudaMemcpyDeviceToHost));
    }
    if (mask & 4) {
        h.dst.resize(st.bytes_dst);
        CU(cudaMemcpy(h.dst.data(), st.dt.dst, st.bytes_dst, cudaMemcpyDeviceToHost));
    }
}

static void output_checksums(state &st, const host_out &h, unsigned mask, uint64_t out[ROLE_N]) {
    (void)st;
    if (mask & 1) out[ROLE_M] = task_checksum({{h.c.data(), h.c.size() * 4}});
    if (mask & 2)
        out[ROLE_V] = task_checksum(
            {{h.y.data(), h.y.size() * 4}, {h.rs.data(), h.rs.size() * 4}, {h.rm.data(), h.rm.size() * 4}});
    if (mask & 4) out[ROLE_D] = task_checksum({{h.dst.data(), h.dst.size()}});
}

/* Every output set to a pattern no task writes, so a stale result fails
 * its checksum (outside the timed interval). */
static void poison(state &st) {
    CU(cudaMemset(st.mt.c, 0xA5, st.bytes_c));
    CU(cudaMemset(st.vt.y, 0xA5, st.bytes_y));
    CU(cudaMemset(st.vt.rowsum, 0xA5, st.bytes_row));
    CU(cudaMemset(st.vt.rowmax, 0xA5, st.bytes_row));
    CU(cudaMemset(st.dt.dst, 0xA5, st.bytes_dst));
}

static void run_trial(state &st, trial_obs &o) {
    const args &a = st.a;
    unsigned mask = task_mask(o.workload);
    const char *g = o.group.c_str();
    st.trial_seq++;
    /* B's graph is captured and instantiated once, before any timing */
    cudaGraphExec_t ge = nullptr;
    if (!strcmp(g, "B") && a.b_mode == "graph") ge = b_graph(st, mask, o.empty);
    poison(st);
    CU(cudaMemset(st.done, 0, sizeof(unsigned int) * ROLE_N));
    for (int r = 0; r < ROLE_N; r++) st.flags[r] = 0;
    CU(cudaDeviceSynchronize());
    o.nivcsw0 = hx_process_involuntary_switches();
    o.self0 = hx_process_cpu_ns();
    o.busy0 = hx_cores_busy_ns(st.cores.data(), (int)st.cores.size());
    o.span0 = hx_now_ns();
    o.host_cpu = hx_current_cpu();
    if (!strcmp(g, "A") || !strcmp(g, "alone")) {
        for (int i = 0; i < ROLE_N; i++) {
            int r = SUBMIT_ORDER[i];
            if (!(mask & (1u << r))) continue;
            uint64_t s0 = hx_now_ns();
            launch_solo(st, r, o.empty, st.s_main);
            CU(cudaEventRecord(st.ev[r], st.s_main));
            uint64_t s1 = hx_now_ns();
            host_wait_event(st, st.ev[r]);
            uint64_t w1 = hx_now_ns();
            if (!o.requests) o.submit_begin = rel(st, s0), o.wait_begin = rel(st, s1);
            o.submit_end = rel(st, s1), o.wait_end = rel(st, w1);
            o.submits.push_back((long long)(s1 - s0));
            o.submit_ns += (long long)(s1 - s0), o.wait_ns += (long long)(w1 - s1);
            o.t[r].launch = rel(st, s0), o.t[r].host_seen = rel(st, w1);
            o.waits.push_back({"host", TASK_NAMES[r], rel(st, s1), rel(st, w1)});
            o.requests++;
            o.scratch_peak =
                r == ROLE_D && !d_copy_engine(st) ? (long long)st.plan[r].solo_blocks * HX_STAGE_BYTES : o.scratch_peak;
        }
    } else if (!strcmp(g, "B")) {
        uint64_t s0 = hx_now_ns(), s1;
        if (a.b_mode == "graph") {
            CU(cudaGraphLaunch(ge, st.s_main));
            s1 = hx_now_ns();
            for (int r = 0; r < ROLE_N; r++)
                if (mask & (1u << r)) o.t[r].launch = rel(st, s0);
            o.submits.push_back((long long)(s1 - s0));
            o.requests = 1;
        } else {
            uint64_t p = s0;
            for (int i = 0; i < ROLE_N; i++) {
                int r = SUBMIT_ORDER[i];
                if (!(mask & (1u << r))) continue;
                launch_solo(st, r, o.empty, st.s[r]);
                CU(cudaEventRecord(st.ev[r], st.s[r]));
                uint64_t q = hx_now_ns();
                o.t[r].launch = rel(st, p);
                o.submits.push_back((long long)(q - p));
                p = q;
                o.requests++;
            }
            s1 = p;
        }
        /* the host polls every task's event and notes when it sees each */
        unsigned pending = mask;
        uint64_t w0 = hx_now_ns();
        while (pending) {
            for (int r = 0; r < ROLE_N; r++) {
                if (!(pending & (1u << r))) continue;
                cudaError_t e = cudaEventQuery(st.ev[r]);
                if (e == cudaSuccess) {
                    o.t[r].host_seen = rel(st, hx_now_ns());
                    pending &= ~(1u << r);
                } else if (e != cudaErrorNotReady) {
                    die(1, "waiting for group B: %s", cudaGetErrorString(e));
                }
            }
            if (pending && a.wait == HX_WAIT_SPIN_BLOCK && hx_now_ns() - w0 > (uint64_t)a.spin_ns) {
                for (int r = 0; r < ROLE_N; r++)
                    if (pending & (1u << r)) {
                        CU(cudaEventSynchronize(st.ev[r]));
                        o.t[r].host_seen = rel(st, hx_now_ns());
                        pending &= ~(1u << r);
                        break;
                    }
            }
        }
        if (a.b_mode == "graph") CU(cudaStreamSynchronize(st.s_main));
        uint64_t w1 = hx_now_ns();
        o.submit_begin = rel(st, s0), o.submit_end = rel(st, s1), o.wait_begin = rel(st, s1), o.wait_end = rel(st, w1);
        o.submit_ns = (long long)(s1 - s0), o.wait_ns = (long long)(w1 - w0);
        o.waits.push_back({"host", "all", rel(st, w0), rel(st, w1)});
        o.scratch_peak = (mask & 4) && !d_copy_engine(st) ? (long long)st.plan[ROLE_D].solo_blocks * HX_STAGE_BYTES : 0;
    } else {
        /* C and D: one fused launch, cooperative so that every block is
         * resident at once (C's barrier spins on the previous role's
         * counter; a non-resident producer would deadlock it) */
        int barrier = !strcmp(g, "C");
        hx_fused_args fa{};
        int grid = 0;
        for (int r = 0; r < ROLE_N; r++) {
            fa.nb[r] = (mask & (1u << r)) ? st.plan[r].fused_blocks : 0;
            fa.ctl[r] = make_ctl(st, r, o.empty, 1, barrier, mask);
            grid += fa.nb[r];
        }
        void *params[] = {(void *)&st.mt, (void *)&st.vt, (void *)&st.dt, (void *)&fa};
        uint64_t s0 = hx_now_ns();
        CU(cudaLaunchCooperativeKernel((const void *)hx_fused_kernel, dim3(grid), dim3(HX_THREADS), params,
                                       HX_STAGE_BYTES, st.s_main));
        CU(cudaEventRecord(st.ev_main, st.s_main));
        uint64_t s1 = hx_now_ns();
        if (a.early_completion) {
            /* the early-completion interface: each role's last block writes
             * its flag to host memory; the host sees each task end while the
             * launch may still run */
            unsigned pending = mask;
            while (pending) {
                for (int r = 0; r < ROLE_N; r++)
                    if ((pending & (1u << r)) && st.flags[r] == st.trial_seq) {
                        o.t[r].host_seen = rel(st, hx_now_ns());
                        pending &= ~(1u << r);
                    }
                if (pending && hx_now_ns() - s1 > 10000000000ull) {
                    cudaError_t e = cudaEventQuery(st.ev_main);
                    die(1, "group %s: a task's completion flag did not arrive within 10 s (%s)", g,
                        e == cudaSuccess ? "the launch ended without it" : cudaGetErrorString(e));
                }
            }
        }
        host_wait_event(st, st.ev_main);
        uint64_t w1 = hx_now_ns();
        if (!a.early_completion)
            for (int r = 0; r < ROLE_N; r++)
                if (mask & (1u << r)) o.t[r].host_seen = rel(st, w1);
        o.submit_begin = rel(st, s0), o.submit_end = rel(st, s1), o.wait_begin = rel(st, s1), o.wait_end = rel(st, w1);
        o.submit_ns = (long long)(s1 - s0), o.wait_ns = (long long)(w1 - s1);
        o.submits.push_back(o.submit_ns);
        o.requests = 1;
        o.fused = 1;
        o.waits.push_back({"host", "req", rel(st, s1), rel(st, w1)});
        o.scratch_peak = (long long)grid * HX_STAGE_BYTES;
    }
    o.span1 = hx_now_ns();
    o.busy1 = hx_cores_busy_ns(st.cores.data(), (int)st.cores.size());
    o.self1 = hx_process_cpu_ns();
    o.nivcsw1 = hx_process_involuntary_switches();
    CU(cudaDeviceSynchronize());
    CU(cudaGetLastError());
    collect(st, o, mask, o.fused);
    if (o.fused) {
        for (int r = 0; r < ROLE_N; r++) {
            if (!o.t[r].present) continue;
            unsigned long long lo = ~0ull;
            for (auto &b : o.t[r].recs) lo = b.launch < lo ? b.launch : lo;
            o.t[r].launch = dev_rel(st, lo);
        }
        if (!strcmp(g, "C")) {
            /* the device's barrier waits: a role's blocks from their start to
             * their begin (who "vec": the fused entry, as on the host) */
            static const char *ON[ROLE_N] = {"eM", "eV", "eD"};
            for (int r = ROLE_D; r >= ROLE_V; r--) {
                if (!o.t[r].present) continue;
                int prev = r == ROLE_D ? ROLE_M : (o.t[ROLE_D].present ? ROLE_D : ROLE_M);
                if (!o.t[prev].present) continue;
                unsigned long long lo = ~0ull, hi = 0;
                for (auto &b : o.t[r].recs) lo = b.launch < lo ? b.launch : lo, hi = b.begin > hi ? b.begin : hi;
                o.waits.insert(o.waits.begin(), {"vec", ON[prev], dev_rel(st, lo), dev_rel(st, hi)});
            }
        }
    }
    if (!o.empty && !a.calibrated) {
        host_out h;
        read_outputs(st, h, mask);
        uint64_t cs[ROLE_N] = {0, 0, 0};
        output_checksums(st, h, mask, cs);
        for (int r = 0; r < ROLE_N; r++)
            if (mask & (1u << r)) o.t[r].checksum = cs[r], o.t[r].have_checksum = 1;
    }
}

/* ----------------------------------------------------------- records ---- */

static const char *engine_of(const state &st, int role, const task_obs &t) {
    (void)st;
    if (role == ROLE_M) return "tensor";
    if (role == ROLE_V) return "sm";
    return t.copy_engine ? "copy" : "tma";
}

static void write_trial(state &st, const trial_obs &o, const uint64_t verified[ROLE_N], int *ok) {
    hx_json j;
    hx_json_begin(&j, st.f);
    hx_json_str(&j, "record", "trial");
    hx_json_i64(&j, "round", o.round);
    hx_json_i64(&j, "seq", o.seq);
    hx_json_bool(&j, "warmup", o.warmup);
    hx_json_str(&j, "workload", o.workload.c_str());
    hx_json_str(&j, "group", o.group.c_str());
    hx_json_bool(&j, "empty", o.empty);
    hx_json_obj(&j, "host");
    hx_json_i64(&j, "submit_begin", o.submit_begin);
    hx_json_i64(&j, "submit_end", o.submit_end);
    hx_json_i64(&j, "wait_begin", o.wait_begin);
    hx_json_i64(&j, "wait_end", o.wait_end);
    hx_json_i64(&j, "submit_ns", o.submit_ns);
    hx_json_i64(&j, "wait_ns", o.wait_ns);
    hx_json_i64(&j, "requests", o.requests);
    hx_json_arr(&j, "submits");
    for (long long s : o.submits) hx_json_i64(&j, NULL, s);
    hx_json_close(&j, ']');
    if (o.host_cpu >= 0) hx_json_i64(&j, "cpu", o.host_cpu);
    else hx_json_null(&j, "cpu");
    hx_json_close(&j, '}');
    unsigned long long e0 = ~0ull, e1 = 0;
    if (o.fused) {
        hx_json_obj(&j, "device");
        for (int r = 0; r < ROLE_N; r++)
            for (auto &b : o.t[r].recs) e0 = b.launch < e0 ? b.launch : e0, e1 = b.end > e1 ? b.end : e1;
        hx_json_i64(&j, "entry_begin", dev_rel(st, e0));
        hx_json_i64(&j, "entry_end", dev_rel(st, e1));
        hx_json_close(&j, '}');
    } else {
        hx_json_null(&j, "device");
    }
    int all_ok = 1;
    hx_json_arr(&j, "tasks");
    for (int r = 0; r < ROLE_N; r++) {
        const task_obs &t = o.t[r];
        if (!t.present) continue;
        const char *eng = engine_of(st, r, t);
        unsigned long long b0 = ~0ull, b1 = 0;
        for (auto &b : t.recs) b0 = b.begin < b0 ? b.begin : b0, b1 = b.end > b1 ? b.end : b1;
        hx_json_obj(&j, NULL);
        hx_json_str(&j, "task", TASK_NAMES[r]);
        hx_json_str(&j, "engine", eng);
        hx_json_i64(&j, "launch", t.launch);
        hx_json_i64(&j, "begin", dev_rel(st, b0));
        hx_json_i64(&j, "end", dev_rel(st, b1));
        hx_json_i64(&j, "host_seen", t.host_seen);
        /* no per-thread CPU time on a GPU: null, never a 0 that reads as idle */
        hx_json_null(&j, "cpu_ns");
        hx_json_null(&j, "cpu_begin");
        hx_json_null(&j, "cpu_end");
        hx_json_null(&j, "involuntary_switches");
        hx_json_i64(&j, "blocks", (int64_t)t.recs.size());
        hx_json_arr(&j, "workers");
        for (size_t i = 0; i < t.recs.size(); i++) {
            const hx_block_rec &b = t.recs[i];
            char name[48];
            snprintf(name, sizeof name, "%s.b%zu", eng, i);
            hx_json_obj(&j, NULL);
            hx_json_str(&j, "engine", name);
            hx_json_i64(&j, "begin", dev_rel(st, b.begin));
            hx_json_i64(&j, "end", dev_rel(st, b.end));
            hx_json_null(&j, "cpu_ns");
            hx_json_null(&j, "cpu_begin");
            hx_json_null(&j, "cpu_end");
            if (t.copy_engine) hx_json_null(&j, "sm");
            else hx_json_i64(&j, "sm", b.smid);
            hx_json_arr(&j, "checkpoints");
            unsigned n = b.ncp <= HX_CP_MAX + 1 ? b.ncp : HX_CP_MAX + 1;
            for (unsigned c = 0; c < n; c++) hx_json_i64(&j, NULL, dev_rel(st, b.cp[c]));
            hx_json_close(&j, ']');
            hx_json_arr(&j, "checkpoint_work");
            for (unsigned c = 0; c < n; c++) hx_json_f64(&j, NULL, (double)b.work[c]);
            hx_json_close(&j, ']');
            hx_json_close(&j, '}');
        }
        hx_json_close(&j, ']');
        if (t.have_checksum) {
            hx_json_hex64(&j, "checksum", t.checksum);
            if (t.checksum != verified[r]) all_ok = 0;
        } else {
            hx_json_null(&j, "checksum");
        }
        hx_json_close(&j, '}');
    }
    hx_json_close(&j, ']');
    hx_json_arr(&j, "waits");
    for (auto &w : o.waits) {
        hx_json_obj(&j, NULL);
        hx_json_str(&j, "who", w.who);
        hx_json_str(&j, "on", w.on);
        hx_json_i64(&j, "begin", w.begin);
        hx_json_i64(&j, "end", w.end);
        hx_json_close(&j, '}');
    }
    hx_json_close(&j, ']');
    hx_json_i64(&j, "scratch_peak_bytes", o.scratch_peak);
    hx_json_i64(&j, "makespan_ns", o.wait_end - o.submit_begin);
    hx_json_obj(&j, "interference");
    if (o.nivcsw0 >= 0 && o.nivcsw1 >= 0) hx_json_i64(&j, "involuntary_switches", o.nivcsw1 - o.nivcsw0);
    else hx_json_null(&j, "involuntary_switches");
    if (o.busy0 >= 0 && o.busy1 >= 0) {
        int64_t busy = o.busy1 - o.busy0, self = o.self1 - o.self0;
        hx_json_i64(&j, "cores_busy_ns", busy);
        hx_json_i64(&j, "self_cpu_ns", self);
        hx_json_i64(&j, "other_cpu_ns", busy > self ? busy - self : 0);
    } else {
        hx_json_null(&j, "cores_busy_ns");
        hx_json_i64(&j, "self_cpu_ns", o.self1 - o.self0);
        hx_json_null(&j, "other_cpu_ns");
    }
    hx_json_i64(&j, "span_ns", (int64_t)(o.span1 - o.span0));
    hx_json_close(&j, '}');
    hx_json_bool(&j, "checksums_ok", all_ok);
    hx_json_bool(&j, "preempted", 0);
    hx_json_end(&j);
    *ok = all_ok;
}

static void write_alignment(hx_json *j, const char *key, const alignment &al) {
    hx_json_obj(j, key);
    hx_json_str(j, "method",
                "mapped-memory echo: host writes a sequence number, a one-thread kernel answers with "
                "%globaltimer; offset = device - host midpoint of the tightest of the exchanges");
    hx_json_i64(j, "offset_ns", al.offset_ns);
    hx_json_i64(j, "rtt_ns", al.rtt_ns);
    hx_json_i64(j, "uncertainty_ns", al.rtt_ns / 2);
    hx_json_i64(j, "pings", al.pings);
    hx_json_close(j, '}');
}

static void write_meta(state &st, unsigned long long timer_step) {
    const args &a = st.a;
    const gpu_info &g = st.g;
    hx_json j;
    hx_json_begin(&j, st.f);
    hx_json_str(&j, "record", "meta");
    hx_json_i64(&j, "schema_version", 2);
    hx_json_str(&j, "target", HX_PLATFORM_NAME);
    hx_json_bool(&j, "emulated", 0);
    char kern[64];
    snprintf(kern, sizeof kern, "cuda-wmma-%s", a.bf16 ? "bf16" : "fp16");
    hx_json_str(&j, "kernels", kern);
    hx_json_str(&j, "compiler", HX_COMPILER);
    hx_json_str(&j, "compiler_version", HX_COMPILER);
    hx_json_str(&j, "cflags", HX_CFLAGS);
    char buf[256];
    hx_cpu_model(buf, sizeof buf);
    hx_json_str(&j, "cpu_model", buf);
    hx_json_i64(&j, "online_cores", hx_online_cores());
    hx_cpu_governor(buf, sizeof buf);
    hx_json_str(&j, "cpu_governor", buf);
    hx_record_before(&j);
    hx_json_arr(&j, "engines");
    for (const char *e : {"host", "tensor", "sm", "tma", "copy"}) hx_json_str(&j, NULL, e);
    hx_json_close(&j, ']');
    hx_json_obj(&j, "gpu");
    hx_json_str(&j, "name", g.prop.name);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", g.prop.major, g.prop.minor);
    hx_json_str(&j, "compute_capability", cc);
    hx_json_i64(&j, "sms", g.prop.multiProcessorCount);
    hx_json_i64(&j, "memory_bytes", (int64_t)g.prop.totalGlobalMem);
    hx_json_i64(&j, "l2_bytes", g.prop.l2CacheSize);
    hx_json_str(&j, "driver_version", g.driver_version);
    hx_json_i64(&j, "cuda_driver_api", g.driver);
    hx_json_i64(&j, "cuda_runtime", g.runtime);
    hx_json_i64(&j, "sm_clock_khz_attr", g.sm_clock_khz);
    hx_json_i64(&j, "mem_clock_khz_attr", g.mem_clock_khz);
    if (g.nvml) {
        hx_json_i64(&j, "sm_clock_mhz_start", g.sm_mhz_start);
        hx_json_i64(&j, "sm_clock_mhz_max", g.sm_mhz_max);
        hx_json_i64(&j, "mem_clock_mhz", g.mem_mhz);
        hx_json_i64(&j, "app_sm_clock_mhz", g.app_sm_mhz);
    } else {
        hx_json_null(&j, "sm_clock_mhz_start");
    }
    hx_json_i64(&j, "block_slots", st.slots);
    hx_json_i64(&j, "blocks_per_sm", st.blocks_per_sm);
    hx_json_i64(&j, "threads_per_block", HX_THREADS);
    hx_json_i64(&j, "stage_bytes", HX_STAGE_BYTES);
    hx_json_str(&j, "b_mode", a.b_mode.c_str());
    hx_json_str(&j, "b_mode_choice", a.b_mode_choice);
    hx_json_str(&j, "d_path_solo", d_copy_engine(st) ? "copy-engine (cudaMemcpy2DAsync)" : "tma kernel");
    hx_json_str(&j, "d_path_fused",
                st.tma ? "cp.async.bulk (TMA) through shared memory"
                       : "ld/st copy (rows not 16-byte multiples, or pre-Hopper)");
    hx_json_obj(&j, "blocks");
    for (int r = 0; r < ROLE_N; r++) {
        hx_json_obj(&j, TASK_NAMES[r]);
        hx_json_i64(&j, "solo", st.plan[r].solo_blocks);
        hx_json_i64(&j, "fused", st.plan[r].fused_blocks);
        hx_json_i64(&j, "units", st.plan[r].units);
        hx_json_close(&j, '}');
    }
    hx_json_close(&j, '}');
    hx_json_close(&j, '}');
    hx_json_obj(&j, "group_mapping");
    hx_json_str(&j, "A",
                "each task its own kernel launch (D: cudaMemcpy2DAsync on the copy engine unless --d-path tma) "
                "on one stream, the host waiting for each before the next (fixed order M, D, V)");
    hx_json_str(&j, "B",
                a.b_mode == "graph"
                    ? "one CUDA graph with a parallel branch per task (fork-join, captured once), one launch; "
                      "the host polls each branch's event record node"
                    : "one CUDA stream per task, launched together (M, D, V); the host polls each stream's event");
    hx_json_str(&j, "C",
                "one fused cooperative launch whose blocks take the M, V or D role (horizontal fusion); a "
                "barrier between roles: D's blocks wait for M's, V's for D's");
    hx_json_str(&j, "D", "the same fused launch with the barrier off: the roles run concurrently on their blocks");
    hx_json_close(&j, '}');
    int used = 0;
    unsigned any = 0;
    for (auto &w : a.workloads) any |= task_mask(w);
    for (int r = 0; r < ROLE_N; r++) used += (any >> r) & 1;
    hx_json_i64(&j, "device_engines_used", used);
    hx_json_obj(&j, "affinity");
    hx_json_i64(&j, "host", a.host_core >= 0 ? a.host_core : -1);
    hx_json_close(&j, '}');
    hx_json_bool(&j, "engines_exceed_cores", 0);
    hx_json_obj(&j, "clock");
    hx_json_str(&j, "source",
                "%globaltimer (device), clock_gettime(CLOCK_MONOTONIC) (host); device times converted "
                "to the host clock by clock.alignment");
    hx_json_i64(&j, "resolution_ns", (int64_t)timer_step);
    hx_json_i64(&j, "host_resolution_ns", (int64_t)hx_clock_resolution_ns());
    uint64_t t0 = hx_now_ns(), t1 = hx_now_ns();
    hx_json_i64(&j, "read_overhead_ns", (int64_t)(t1 - t0));
    hx_json_null(&j, "core_cycles_per_us");
    write_alignment(&j, "alignment", st.al);
    hx_json_close(&j, '}');
    hx_json_obj(&j, "interference");
    hx_json_arr(&j, "cores");
    for (int c : st.cores) hx_json_i64(&j, NULL, c);
    hx_json_close(&j, ']');
    hx_json_str(&j, "busy_source", hx_cores_busy_source());
    hx_json_i64(&j, "busy_resolution_ns", (int64_t)hx_cores_busy_resolution_ns());
    hx_json_str(&j, "switches_source", "getrusage ru_nivcsw");
    hx_json_str(&j, "scope", "the host thread's cores only: the GPU's own contention is not read");
    hx_json_close(&j, '}');
    hx_json_u64(&j, "epoch", st.epoch);
    hx_json_obj(&j, "args");
    hx_json_str(&j, "affinity", a.affinity.c_str());
    hx_json_i64(&j, "antagonist", 0);
    hx_json_i64(&j, "antagonist_bytes", 67108864);
    hx_json_str(&j, "b_mode", a.b_mode.c_str());
    hx_json_bool(&j, "check_at_publish", 0);
    hx_json_i64(&j, "checkpoints", a.checkpoints);
    hx_json_i64(&j, "d_buffers", 1);
    hx_json_i64(&j, "d_desc_rows", a.d_desc_rows);
    hx_json_str(&j, "d_path", a.d_path.c_str());
    hx_json_i64(&j, "d_repeat", a.d_repeat);
    hx_json_i64(&j, "d_row_bytes", a.d_row_bytes);
    hx_json_i64(&j, "d_rows", a.d_rows);
    hx_json_i64(&j, "d_src_stride", a.d_src_stride);
    hx_json_i64(&j, "device", a.device);
    hx_json_bool(&j, "early_completion", a.early_completion);
    hx_json_arr(&j, "groups");
    for (int gi = 0; gi < 4; gi++)
        if (a.groups & (1u << gi)) {
            char s[2] = {(char)('A' + gi), 0};
            hx_json_str(&j, NULL, s);
        }
    hx_json_close(&j, ']');
    hx_json_i64(&j, "k", a.k);
    hx_json_i64(&j, "m", a.m);
    hx_json_str(&j, "m_input", a.bf16 ? "bf16" : "fp16");
    hx_json_i64(&j, "m_tile", 16);
    hx_json_i64(&j, "n", a.n);
    hx_json_str(&j, "npy_dir", a.npy_dir);
    hx_json_str(&j, "out", a.out);
    hx_json_str(&j, "precision", "fp32");
    hx_json_i64(&j, "rounds", a.rounds);
    hx_json_i64(&j, "scratch_bytes", a.scratch_bytes);
    hx_json_u64(&j, "seed", a.seed);
    hx_json_i64(&j, "spin_ns", a.spin_ns);
    hx_json_i64(&j, "v_cols", a.v_cols);
    hx_json_i64(&j, "v_passes", a.v_passes);
    hx_json_str(&j, "v_release", a.v_release.c_str());
    hx_json_i64(&j, "v_rows", a.v_rows);
    hx_json_str(&j, "v_variant", a.v_variant.c_str());
    hx_json_i64(&j, "v_workers", a.v_workers);
    hx_json_str(&j, "wait", a.wait == HX_WAIT_SPIN ? "spin" : "spin-block");
    hx_json_i64(&j, "warmup", a.warmup);
    hx_json_str(&j, "window", "all");
    hx_json_arr(&j, "workloads");
    for (auto &w : a.workloads) hx_json_str(&j, NULL, w.c_str());
    hx_json_close(&j, ']');
    hx_json_close(&j, '}');
    hx_json_arr(&j, "workloads");
    for (auto &w : a.workloads) hx_json_str(&j, NULL, w.c_str());
    hx_json_close(&j, ']');
    hx_json_obj(&j, "tasks");
    hx_json_obj(&j, "M");
    hx_json_str(&j, "precision", "fp32");
    hx_json_str(&j, "operands", a.bf16 ? "bf16" : "fp16");
    hx_json_str(&j, "accumulate", "fp32");
    hx_json_i64(&j, "m", a.m);
    hx_json_i64(&j, "n", a.n);
    hx_json_i64(&j, "k", a.k);
    hx_json_i64(&j, "flops", 2LL * a.m * a.n * a.k);
    hx_json_i64(&j, "bytes_in", 2LL * ((long long)a.m * a.k + (long long)a.k * a.n));
    hx_json_i64(&j, "prep_bytes", 2LL * ((long long)st.mp * st.kp + (long long)st.kp * st.np));
    hx_json_i64(&j, "bytes_out", 4LL * a.m * a.n);
    hx_json_i64(&j, "prep_ns", 0);
    hx_json_i64(&j, "tile_k", 16);
    hx_json_close(&j, '}');
    hx_json_obj(&j, "V");
    hx_json_str(&j, "precision", "fp32");
    hx_json_str(&j, "activation", a.v_variant == "stream" ? "hardswish" : "silu");
    hx_json_str(&j, "variant", a.v_variant.c_str());
    hx_json_i64(&j, "rows", a.v_rows);
    hx_json_i64(&j, "cols", a.v_cols);
    hx_json_i64(&j, "passes", a.v_passes);
    hx_json_i64(&j, "workers", a.v_workers);
    hx_json_i64(&j, "bytes_in", (int64_t)st.bytes_y);
    hx_json_i64(&j, "bytes_out", (int64_t)(st.bytes_y + 2 * st.bytes_row));
    hx_json_bool(&j, "in_scratch", 0);
    if (a.v_variant == "stream") hx_json_str(&j, "kernel", "cuda-sm");
    hx_json_close(&j, '}');
    hx_json_obj(&j, "D");
    hx_json_i64(&j, "rows", a.d_rows);
    hx_json_i64(&j, "row_bytes", a.d_row_bytes);
    hx_json_i64(&j, "src_stride", a.d_src_stride);
    hx_json_i64(&j, "dst_stride", a.d_row_bytes);
    hx_json_i64(&j, "descriptors", ((a.d_rows + a.d_desc_rows - 1) / a.d_desc_rows) * a.d_repeat);
    hx_json_i64(&j, "repeat", a.d_repeat);
    hx_json_i64(&j, "window_bytes", (int64_t)st.bytes_dst);
    hx_json_i64(&j, "buffers", 1);
    hx_json_i64(&j, "bytes", (int64_t)st.bytes_dst * a.d_repeat);
    hx_json_close(&j, '}');
    hx_json_close(&j, '}');
    hx_json_obj(&j, "scratch");
    hx_json_i64(&j, "capacity", a.scratch_bytes);
    hx_json_bool(&j, "on_chip", 1);
    hx_json_obj(&j, "reserved");
    hx_json_i64(&j, "D", HX_STAGE_BYTES);
    hx_json_close(&j, '}');
    hx_json_obj(&j, "slots");
    hx_json_i64(&j, "D", HX_STAGE_BYTES);
    hx_json_close(&j, '}');
    hx_json_i64(&j, "total", HX_STAGE_BYTES);
    hx_json_str(
        &j, "meaning",
        "shared memory per block (D's TMA staging); scratch_peak_bytes: blocks x stage of the launches in flight");
    hx_json_close(&j, '}');
    if (a.calibrated) {
        hx_json_obj(&j, "calibration");
        for (int r = 0; r < ROLE_N; r++)
            if (a.calib_us[r] > 0) hx_json_f64(&j, TASK_NAMES[r], a.calib_us[r]);
        hx_json_close(&j, '}');
    } else {
        hx_json_null(&j, "calibration");
    }
    hx_json_str(&j, "wait", a.wait == HX_WAIT_SPIN ? "spin" : "spin-block");
    hx_json_i64(&j, "spin_ns", a.spin_ns);
    hx_json_bool(&j, "early_completion", a.early_completion);
    hx_json_str(&j, "v_release", a.v_release.c_str());
    hx_json_str(&j, "window", "all");
    hx_json_i64(&j, "checkpoints", a.checkpoints);
    hx_json_null(&j, "antagonist");
    hx_json_obj(&j, "labels");
    for (auto &l : a.labels) hx_json_str(&j, l.first.c_str(), l.second.c_str());
    hx_json_close(&j, '}');
    hx_json_arr(&j, "warnings");
    if (a.calibrated)
        hx_json_str(&j, NULL, "calibration run: tasks are busy-waits on the device clock, outputs are not checked");
    hx_json_str(&j, NULL, "gpu target: untested on a GPU until tests/gpu/device_check.sh has run on one");
    hx_json_close(&j, ']');
    hx_json_arr(&j, "warning_codes");
    if (a.calibrated) hx_json_str(&j, NULL, "calibration");
    hx_json_str(&j, NULL, "gpu_untested");
    hx_json_close(&j, ']');
    hx_json_end(&j);
}

static int write_npy(const char *dir, const char *wl, const char *name, const char *dtype, int ndim,
                     const size_t *shape, const void *data, size_t bytes) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s.npy", dir, wl, name);
    return hx_npy_write(path, dtype, ndim, shape, data, bytes);
}

/* The verify record of one workload (its checksums, and its .npy files
 * when they were written). */
static void write_verify(state &st, const std::string &wl, unsigned mask, const uint64_t out[ROLE_N], int files) {
    const args &a = st.a;
    hx_json j;
    hx_json_begin(&j, st.f);
    hx_json_str(&j, "record", "verify");
    hx_json_str(&j, "workload", wl.c_str());
    hx_json_str(&j, "group", "D");
    hx_json_obj(&j, "checksums");
    for (int r = 0; r < ROLE_N; r++) {
        if (!(mask & (1u << r))) continue;
        if (a.calibrated) hx_json_null(&j, TASK_NAMES[r]);
        else hx_json_hex64(&j, TASK_NAMES[r], out[r]);
    }
    hx_json_close(&j, '}');
    if (files) {
        hx_json_obj(&j, "files");
        static const char *names[ROLE_N][4] = {
            {"M_A", "M_B", "M_C", 0}, {"V_X", "V_Y", "V_rowsum", "V_rowmax"}, {"D_src", "D_dst", 0, 0}};
        for (int r : {ROLE_M, ROLE_V, ROLE_D}) {
            if (!(mask & (1u << r))) continue;
            for (int i = 0; i < 4 && names[r][i]; i++) {
                char rel_path[256];
                snprintf(rel_path, sizeof rel_path, "%s/%s.npy", wl.c_str(), names[r][i]);
                hx_json_str(&j, names[r][i], rel_path);
            }
        }
        hx_json_close(&j, '}');
    }
    hx_json_end(&j);
}

/* The verification round of one workload: group D once, its outputs
 * checksummed (every later trial must reproduce them) and, with --npy-dir,
 * written with their inputs for the numpy check. */
static void verify(state &st, const std::string &wl, uint64_t out[ROLE_N]) {
    const args &a = st.a;
    unsigned mask = task_mask(wl);
    trial_obs o;
    o.workload = wl, o.group = "D";
    run_trial(st, o);
    host_out h;
    if (!a.calibrated) read_outputs(st, h, mask);
    output_checksums(st, h, mask, out);
    int files = a.npy_dir && !a.calibrated;
    if (files) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", a.npy_dir, wl.c_str());
        if (!hx_is_directory(a.npy_dir) && hx_make_dir(a.npy_dir) != 0 && !hx_is_directory(a.npy_dir))
            die(1, "cannot create %s", a.npy_dir);
        if (!hx_is_directory(dir) && hx_make_dir(dir) != 0 && !hx_is_directory(dir)) die(1, "cannot create %s", dir);
        int bad = 0;
        if (mask & 1) {
            size_t sa[2] = {(size_t)a.m, (size_t)a.k}, sb[2] = {(size_t)a.k, (size_t)a.n},
                   sc[2] = {(size_t)a.m, (size_t)a.n};
            bad |= write_npy(a.npy_dir, wl.c_str(), "M_A", "<f4", 2, sa, st.hA.data(), st.hA.size() * 4);
            bad |= write_npy(a.npy_dir, wl.c_str(), "M_B", "<f4", 2, sb, st.hB.data(), st.hB.size() * 4);
            bad |= write_npy(a.npy_dir, wl.c_str(), "M_C", "<f4", 2, sc, h.c.data(), h.c.size() * 4);
        }
        if (mask & 2) {
            size_t sx[2] = {(size_t)a.v_rows, (size_t)a.v_cols}, sr[1] = {(size_t)a.v_rows};
            bad |= write_npy(a.npy_dir, wl.c_str(), "V_X", "<f4", 2, sx, st.hX.data(), st.hX.size() * 4);
            bad |= write_npy(a.npy_dir, wl.c_str(), "V_Y", "<f4", 2, sx, h.y.data(), h.y.size() * 4);
            bad |= write_npy(a.npy_dir, wl.c_str(), "V_rowsum", "<f4", 1, sr, h.rs.data(), h.rs.size() * 4);
            bad |= write_npy(a.npy_dir, wl.c_str(), "V_rowmax", "<f4", 1, sr, h.rm.data(), h.rm.size() * 4);
        }
        if (mask & 4) {
            /* the last source window (the one the destination must hold) */
            size_t ss[2] = {(size_t)a.d_rows, (size_t)a.d_src_stride},
                   sd[2] = {(size_t)a.d_rows, (size_t)a.d_row_bytes};
            const unsigned char *last = st.hSrc.data() + (size_t)((a.d_repeat - 1) * a.d_rows) * (size_t)a.d_src_stride;
            bad |= write_npy(a.npy_dir, wl.c_str(), "D_src", "|u1", 2, ss, last, ss[0] * ss[1]);
            bad |= write_npy(a.npy_dir, wl.c_str(), "D_dst", "|u1", 2, sd, h.dst.data(), h.dst.size());
        }
        if (bad) die(1, "cannot write the .npy files under %s", dir);
    }
    write_verify(st, wl, mask, out, files);
}

/* The end record: counts, the digest of everything before it, the
 * clock alignment again (its drift over the run) and the SM clock. */
static void write_end(state &st, long long trials, long long mismatches, long long outliers,
                      const long long outliers_by[5], long long handover, uint64_t t_start, const alignment &al_end,
                      unsigned int sm_end) {
    const args &a = st.a;
    hx_json j;
    hx_record_end_begin(&j, st.f, mismatches ? "checksum_mismatch" : "ok");
    hx_json_i64(&j, "trials", trials);
    hx_json_i64(&j, "checksum_mismatches", mismatches);
    hx_json_i64(&j, "submit_outliers", outliers);
    hx_json_obj(&j, "submit_outliers_by_group");
    for (int gi = 0; gi < 4; gi++)
        if (a.groups & (1u << gi)) {
            char s[2] = {(char)('A' + gi), 0};
            hx_json_i64(&j, s, outliers_by[gi]);
        }
    hx_json_i64(&j, "alone", outliers_by[4]);
    hx_json_close(&j, '}');
    hx_json_i64(&j, "b_handover_outliers", handover);
    hx_json_i64(&j, "submit_outlier_ns", 200000);
    hx_json_i64(&j, "wall_ns", (int64_t)(hx_now_ns() - t_start));
    hx_json_null(&j, "preemption");
    hx_json_null(&j, "clock_drift");
    hx_record_after(&j);
    hx_json_obj(&j, "gpu");
    write_alignment(&j, "alignment_end", al_end);
    hx_json_i64(&j, "alignment_drift_ns", al_end.offset_ns - st.al.offset_ns);
    if (st.g.nvml) hx_json_i64(&j, "sm_clock_mhz_end", sm_end);
    else hx_json_null(&j, "sm_clock_mhz_end");
    hx_json_close(&j, '}');
    hx_json_obj(&j, "resources");
    hx_json_str(&j, "platform", "cuda");
    for (const char *k : {"power_votes", "vtcm", "hmx", "udma", "hvx"}) hx_json_null(&j, k);
    hx_json_bool(&j, "fallbacks_allowed", 0);
    hx_json_i64(&j, "fallbacks", 0);
    hx_json_close(&j, '}');
    hx_json_end(&j);
}

#ifndef HX_CUDA_NO_MAIN
int main(int argc, char **argv) {
    state st;
    parse_args(argc, argv, st.a);
    args &a = st.a;
    int cores[1024];
    int nc = hx_allowed_cores(cores, 1024);
    st.cores.assign(cores, cores + (nc > 0 ? nc : 0));
    if (a.host_core == -2) a.host_core = st.cores.empty() ? 0 : st.cores[0];
    setup(st); /* every CUDA failure from here exits 1 naming the call */
    /* pinned after the runtime started its own threads, which would
     * otherwise inherit the host thread's single core */
    if (a.host_core >= 0 && hx_pin_self(a.host_core) != 0)
        die(2, "--affinity: cannot pin the host thread to core %d", a.host_core);
    /* interference is read on the host thread's cores: its own when pinned
     * (as hxrun reads the cores its threads are pinned to) */
    if (a.host_core >= 0) st.cores.assign(1, a.host_core);
    hx_out out;
    if (hx_out_open(&out, PROG, a.out) != 0) return 1;
    st.f = out.f;
    unsigned long long *step_d, step = 0;
    CU(cudaMalloc(&step_d, sizeof step));
    hx_timer_step_kernel<<<1, 1>>>(step_d);
    CU(cudaMemcpy(&step, step_d, sizeof step, cudaMemcpyDeviceToHost));
    st.epoch = hx_now_ns();
    st.al = align_clocks(200);
    write_meta(st, step);
    uint64_t t_start = hx_now_ns();
    std::vector<std::array<uint64_t, ROLE_N>> verified(a.workloads.size());
    for (size_t w = 0; w < a.workloads.size(); w++) {
        uint64_t v[ROLE_N] = {0, 0, 0};
        verify(st, a.workloads[w], v);
        for (int r = 0; r < ROLE_N; r++) verified[w][r] = v[r];
    }
    /* the trials of one round: every workload x group, each also empty, and
     * every task alone (not empty), in a seeded shuffle per round */
    struct item {
        int wl; /* index into workloads, or -1 - role for alone */
        int group, empty;
    };
    std::vector<item> items;
    for (size_t w = 0; w < a.workloads.size(); w++)
        for (int gi = 0; gi < 4; gi++)
            if (a.groups & (1u << gi)) items.push_back({(int)w, gi, 0}), items.push_back({(int)w, gi, 1});
    unsigned any = 0;
    for (auto &w : a.workloads) any |= task_mask(w);
    for (int r : {ROLE_M, ROLE_V, ROLE_D})
        if (any & (1u << r)) items.push_back({-1 - r, 4, 0});
    uint64_t shuffle_state = a.seed ^ 0x5DEECE66Dull;
    long long trials = 0, mismatches = 0, outliers = 0, handover = 0;
    long long outliers_by[5] = {0, 0, 0, 0, 0};
    std::vector<int> order(items.size());
    for (int round = -a.warmup; round < a.rounds; round++) {
        for (size_t i = 0; i < order.size(); i++) order[i] = (int)i;
        hx_shuffle(order.data(), (int)order.size(), &shuffle_state);
        for (size_t s = 0; s < order.size(); s++) {
            const item &it = items[(size_t)order[s]];
            trial_obs o;
            o.round = round, o.seq = (int)s, o.warmup = round < 0, o.empty = it.empty;
            uint64_t ver[ROLE_N] = {0, 0, 0};
            if (it.wl >= 0) {
                o.workload = a.workloads[(size_t)it.wl];
                char gname[2] = {(char)('A' + it.group), 0};
                o.group = gname;
                for (int r = 0; r < ROLE_N; r++) ver[r] = verified[(size_t)it.wl][r];
            } else {
                int r = -1 - it.wl;
                o.workload = TASK_NAMES[r], o.group = "alone";
                for (size_t w = 0; w < a.workloads.size(); w++)
                    if (task_mask(a.workloads[w]) & (1u << r)) ver[r] = verified[w][r];
            }
            run_trial(st, o);
            int ok = 1;
            write_trial(st, o, ver, &ok);
            trials++;
            if (!ok) mismatches++;
            if (!o.warmup) {
                long long mx = 0;
                for (long long x : o.submits) mx = x > mx ? x : mx;
                if (mx > 200000) outliers++, outliers_by[it.group]++;
                if (o.group == "B") {
                    long long lo = 0, hi = 0;
                    int first = 1;
                    for (int r = 0; r < ROLE_N; r++)
                        if (o.t[r].present) {
                            if (first || o.t[r].launch < lo) lo = o.t[r].launch;
                            if (first || o.t[r].launch > hi) hi = o.t[r].launch;
                            first = 0;
                        }
                    if (hi - lo > 200000) handover++;
                }
            }
        }
    }
    alignment al_end = align_clocks(200);
    unsigned int sm_end = nvml_sm_mhz();
    write_end(st, trials, mismatches, outliers, outliers_by, handover, t_start, al_end, sm_end);
    int rc = hx_out_close(&out, mismatches ? 4 : 0, NULL);
    if (mismatches) fprintf(stderr, "%s: %lld trial(s) with a checksum mismatch\n", PROG, mismatches);
    return rc;
}
#endif
