/* A test harness, not a runner: hxrun-cuda's record writers fed with
 * SYNTHETIC observations, so the JSON Lines schema can be tested on a
 * machine without a GPU (tests/gpu/test_gpu_records.py).  It calls no CUDA
 * function: the meta's GPU fields are made up and say so (gpu.name, the
 * label `synthetic`).  The timestamps are a plausible trial of each group:
 * A serial, B overlapping, C's roles one after another (M, D, V), D's
 * overlapping; blocks with checkpoints; the device clock 1 ms ahead of the
 * host's (the alignment offset the writers subtract).  The OUTPUTS are real:
 * computed on the CPU from the runner's own inputs (fill_inputs), checksummed
 * with the runner's code and, with --npy-dir, written for the numpy check, so
 * the pipeline's check passes on them (tests/gpu/test_gpu_pipeline.py).
 *
 * Usage: records_harness --out OUT [hxrun-cuda options...] */
#define HX_CUDA_NO_MAIN
#include "hxrun_cuda.cu"

static const long long OFFSET = 1000000; /* device - host, ns */

static hx_block_rec block(unsigned long long t0, unsigned long long t1, int empty, int k) {
    hx_block_rec b{};
    b.launch = t0, b.begin = t0 + 500, b.end = t1;
    b.units = empty ? 0 : (unsigned)k;
    if (!empty && k > 0) {
        b.ncp = (unsigned)k + 1;
        for (int i = 0; i <= k; i++) {
            b.cp[i] = b.begin + (b.end - b.begin) * (unsigned long long)i / (unsigned long long)k;
            b.work[i] = 0.5f * (float)i / (float)k; /* two blocks per task: each half */
        }
    }
    return b;
}

/* The task outputs on the CPU: C = A @ B (exact: the operands are multiples
 * of 1/8), V's activation passes with row sums and maxima, D's destination
 * holding the last source window. */
static void cpu_outputs(state &st, host_out &h) {
    const args &a = st.a;
    h.c.assign((size_t)a.m * a.n, 0.f);
    for (int i = 0; i < a.m; i++)
        for (int k = 0; k < a.k; k++) {
            float x = st.hA[(size_t)i * a.k + k];
            for (int j = 0; j < a.n; j++) h.c[(size_t)i * a.n + j] += x * st.hB[(size_t)k * a.n + j];
        }
    h.y.resize((size_t)a.v_rows * a.v_cols), h.rs.assign(a.v_rows, 0.f), h.rm.assign(a.v_rows, -INFINITY);
    for (int r = 0; r < a.v_rows; r++)
        for (int c = 0; c < a.v_cols; c++) {
            float v = st.hX[(size_t)r * a.v_cols + c];
            for (int p = 0; p < a.v_passes; p++)
                v = a.v_variant == "stream" ? (v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f)) * (1.0f / 6.0f)
                                            : v / (1.0f + expf(-v));
            h.y[(size_t)r * a.v_cols + c] = v;
            h.rs[r] += v;
            h.rm[r] = fmaxf(h.rm[r], v);
        }
    h.dst.resize(st.bytes_dst);
    const unsigned char *last = st.hSrc.data() + (size_t)((a.d_repeat - 1) * a.d_rows) * (size_t)a.d_src_stride;
    for (long long r = 0; r < a.d_rows; r++)
        memcpy(&h.dst[(size_t)r * a.d_row_bytes], last + (size_t)r * a.d_src_stride, (size_t)a.d_row_bytes);
}

static void write_cpu_npy(const state &st, const host_out &h, const std::string &wl, unsigned mask) {
    const args &a = st.a;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", a.npy_dir, wl.c_str());
    if (!hx_is_directory(a.npy_dir)) hx_make_dir(a.npy_dir);
    if (!hx_is_directory(dir)) hx_make_dir(dir);
    const char *w = wl.c_str();
    if (mask & 1) {
        size_t sa[2] = {(size_t)a.m, (size_t)a.k}, sb[2] = {(size_t)a.k, (size_t)a.n},
               sc[2] = {(size_t)a.m, (size_t)a.n};
        write_npy(a.npy_dir, w, "M_A", "<f4", 2, sa, st.hA.data(), st.hA.size() * 4);
        write_npy(a.npy_dir, w, "M_B", "<f4", 2, sb, st.hB.data(), st.hB.size() * 4);
        write_npy(a.npy_dir, w, "M_C", "<f4", 2, sc, h.c.data(), h.c.size() * 4);
    }
    if (mask & 2) {
        size_t sx[2] = {(size_t)a.v_rows, (size_t)a.v_cols}, sr[1] = {(size_t)a.v_rows};
        write_npy(a.npy_dir, w, "V_X", "<f4", 2, sx, st.hX.data(), st.hX.size() * 4);
        write_npy(a.npy_dir, w, "V_Y", "<f4", 2, sx, h.y.data(), h.y.size() * 4);
        write_npy(a.npy_dir, w, "V_rowsum", "<f4", 1, sr, h.rs.data(), h.rs.size() * 4);
        write_npy(a.npy_dir, w, "V_rowmax", "<f4", 1, sr, h.rm.data(), h.rm.size() * 4);
    }
    if (mask & 4) {
        size_t ss[2] = {(size_t)a.d_rows, (size_t)a.d_src_stride}, sd[2] = {(size_t)a.d_rows, (size_t)a.d_row_bytes};
        const unsigned char *last = st.hSrc.data() + (size_t)((a.d_repeat - 1) * a.d_rows) * (size_t)a.d_src_stride;
        write_npy(a.npy_dir, w, "D_src", "|u1", 2, ss, last, ss[0] * ss[1]);
        write_npy(a.npy_dir, w, "D_dst", "|u1", 2, sd, h.dst.data(), h.dst.size());
    }
}

int main(int argc, char **argv) {
    state st;
    parse_args(argc, argv, st.a);
    args &a = st.a;
    a.labels.push_back({"synthetic", "records_harness: no GPU, made-up observations"});
    snprintf(st.g.prop.name, sizeof st.g.prop.name, "synthetic (records_harness, no GPU)");
    st.g.prop.major = 9, st.g.prop.minor = 0, st.g.prop.multiProcessorCount = 4;
    st.slots = 8, st.blocks_per_sm = 2, st.tma = 1;
    st.mp = st.np = st.kp = 16;
    for (int r = 0; r < ROLE_N; r++) st.plan[r] = {2, 2, 2};
    st.bytes_y = (size_t)a.v_rows * a.v_cols * 4, st.bytes_row = (size_t)a.v_rows * 4;
    st.bytes_dst = (size_t)a.d_rows * (size_t)a.d_row_bytes;
    int cores[64];
    int nc = hx_allowed_cores(cores, 64);
    st.cores.assign(cores, cores + (nc > 0 ? nc : 0));
    hx_out out;
    if (hx_out_open(&out, "records_harness", a.out) != 0) return 1;
    st.f = out.f;
    st.epoch = hx_now_ns();
    st.al.offset_ns = OFFSET, st.al.rtt_ns = 1500, st.al.pings = 200;
    write_meta(st, 32);
    fill_inputs(st);
    host_out h;
    cpu_outputs(st, h);
    uint64_t cs[ROLE_N] = {0, 0, 0};
    output_checksums(st, h, 7, cs);
    for (auto &w : a.workloads) {
        if (a.npy_dir) write_cpu_npy(st, h, w, task_mask(w));
        write_verify(st, w, task_mask(w), cs, a.npy_dir != nullptr);
    }
    long long trials = 0, by[5] = {0, 0, 0, 0, 0};
    unsigned long long t = st.epoch + 1000000; /* host ns */
    const int k = a.checkpoints;
    for (int round = -a.warmup; round < a.rounds; round++) {
        int seq = 0;
        for (auto &w : a.workloads) {
            unsigned mask = task_mask(w);
            std::vector<int> present;
            for (int r = 0; r < ROLE_N; r++)
                if (mask & (1u << r)) present.push_back(r);
            for (int gi = 0; gi < 5; gi++) {
                /* groups: a non-empty and an empty trial; alone: each task */
                int variants = gi < 4 ? 2 : (int)present.size();
                for (int vi = 0; vi < variants; vi++) {
                    int empty = gi < 4 ? vi : 0;
                    std::vector<int> roles = present;
                    if (gi == 4) roles = {present[(size_t)vi]};
                    trial_obs o;
                    o.round = round, o.seq = seq++, o.warmup = round < 0, o.empty = empty;
                    o.workload = gi == 4 ? TASK_NAMES[roles[0]] : w;
                    o.group = gi == 4 ? "alone" : std::string(1, (char)('A' + gi));
                    o.fused = gi == 2 || gi == 3;
                    unsigned long long len = empty ? 5000 : 100000, cur = t + 10000;
                    o.submit_begin = rel(st, t), o.submit_end = rel(st, t + 4000);
                    o.submits.push_back(4000);
                    o.requests = o.fused || gi == 4 ? 1 : (int)roles.size();
                    for (int r : roles) {
                        task_obs &to = o.t[r];
                        to.present = 1, to.blocks = 2;
                        unsigned long long b0 = (gi == 0 || gi == 2) ? cur : t + 10000; /* serial or together */
                        unsigned long long d0 = b0 + (unsigned long long)OFFSET, d1 = d0 + len;
                        to.recs = {block(d0, d1, empty, k), block(d0 + 200, d1 - 100, empty, k)};
                        to.launch = o.fused ? dev_rel(st, d0) : rel(st, b0 - 5000);
                        to.host_seen = rel(st, b0 + len + 3000);
                        if (!empty) to.checksum = cs[r], to.have_checksum = 1;
                        cur = b0 + len + 1000;
                    }
                    o.wait_begin = rel(st, t + 4000), o.wait_end = rel(st, cur + 5000);
                    o.submit_ns = 4000, o.wait_ns = o.wait_end - o.wait_begin;
                    o.waits.push_back({"host",
                                       o.fused   ? "req"
                                       : gi == 1 ? "all"
                                                 : TASK_NAMES[roles[0]],
                                       o.wait_begin, o.wait_end});
                    o.span0 = t, o.span1 = cur + 6000;
                    o.busy0 = o.busy1 = -1;
                    int ok = 1;
                    write_trial(st, o, cs, &ok);
                    trials++;
                    t = cur + 20000;
                }
            }
        }
    }
    write_end(st, trials, 0, 0, by, 0, st.epoch, st.al, 0);
    return hx_out_close(&out, 0, NULL);
}
