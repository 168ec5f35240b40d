/* The three tasks as GPU roles, and the kernels that run them (docs/gpu.md).
 *
 * Every task is written once as a *role*: a device function that a block
 * runs given its index among the blocks of that role.  The standalone
 * kernels (groups A, B and alone runs) give a role the whole grid; the fused
 * kernel (groups C and D) gives each block one role by its index, HFuse's
 * horizontal fusion (Li et al., CGO 2022: blocks of one launch partitioned
 * between independent kernels).  So the work a block does is the same code
 * in every group, and C and D differ only in the barrier switch.
 *
 * - M: C = A @ B on the tensor cores with the warp-level `wmma` API
 *   (m16n16k16, fp16 or bf16 operands, fp32 accumulate; CUDA C++ Programming
 *   Guide, "Warp Matrix Functions").  Our own kernel, not cuBLAS: the fused
 *   kernel must own M's blocks, and a library GEMM cannot be a role.
 * - V: SiLU (or hard-swish for the stream variant) applied `passes` times,
 *   then each row's sum and maximum: SM vector pipes and a block reduction.
 * - D: rows copied with the Tensor Memory Accelerator's bulk copies
 *   (`cp.async.bulk` global -> shared completing on an mbarrier, then shared
 *   -> global in a bulk group; PTX ISA 8.x, "Data Movement and Conversion
 *   Instructions: cp.async.bulk"), sm_90 and later; a plain load/store copy
 *   where the rows are not 16-byte multiples or the GPU is older.
 *
 * Timestamps come from %globaltimer (PTX ISA, "Special Registers:
 * %globaltimer": a 64-bit ns timer common to all SMs), read by thread 0 of
 * each block at its role's begin and end and at up to HX_CP_MAX checkpoints.
 *
 * UNTESTED ON A GPU: compiled with nvcc (tests/gpu/test_cuda_build.py), not
 * yet run on one (tests/gpu/device_check.sh is the first run). */
#ifndef HX_CUDA_ROLES_CUH
#define HX_CUDA_ROLES_CUH
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>

#define HX_THREADS     256
#define HX_WARPS       (HX_THREADS / 32)
#define HX_CP_MAX      64
#define HX_STAGE_BYTES 32768 /* D's shared-memory staging buffer per block */

enum { ROLE_M = 0, ROLE_V = 1, ROLE_D = 2, ROLE_N = 3 };

/* What one block did: written by its thread 0, copied back after the trial
 * (outside the timed interval). */
struct hx_block_rec {
    unsigned long long launch; /* globaltimer when the block started (before any barrier wait) */
    unsigned long long begin, end;
    unsigned long long cp[HX_CP_MAX + 1];
    float work[HX_CP_MAX + 1]; /* fraction of the TASK's work done by this block at cp[i] */
    unsigned int ncp, smid, units;
    unsigned int pad;
};

/* One task's device view: its buffers, shape and where its blocks record. */
struct hx_mtask {
    const void *a, *b; /* fp16 or bf16, row-major, padded to multiples of 16 */
    float *c;
    int mp, np, kp, bf16;
};
struct hx_vtask {
    const float *x;
    float *y, *rowsum, *rowmax;
    int rows, cols, passes, hardswish;
};
struct hx_dtask {
    const unsigned char *src;
    unsigned char *dst;
    long long rows, row_bytes, src_stride, desc_rows, repeat;
    int tma; /* 1: cp.async.bulk (16-byte rows, sm_90+), 0: load/store */
};

/* Everything a role needs beside its task: the empty and calibration
 * variants, checkpoints, the barrier counters and the completion flags. */
struct hx_role_ctl {
    hx_block_rec *rec;                 /* this role's first block record */
    unsigned int *done;                /* blocks of this role that finished (device memory) */
    const unsigned int *wait_done;     /* C's barrier: the previous role's counter, or NULL */
    unsigned int wait_for;             /* ... and how many blocks it has */
    volatile unsigned long long *flag; /* mapped host memory: the task's completion, or NULL */
    unsigned long long flag_value;     /* written when the role's last block ends */
    unsigned long long calib_ns;       /* > 0: a busy-wait of that long instead of the work */
    int empty, checkpoints;
};

__device__ __forceinline__ unsigned long long hx_gtime(void) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned int hx_smid(void) {
    unsigned int s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

/* Checkpoint bookkeeping for thread 0 of a block: a block with `units` work
 * units records after every `every` of them (at most K checkpoints). */
struct hx_cp {
    hx_block_rec *r;
    unsigned int every, since;
    float per_unit; /* task work fraction of one unit */
    float done;
};

__device__ __forceinline__ void hx_cp_start(hx_cp &c, hx_block_rec *r, unsigned int units, float per_unit, int k) {
    c.r = r, c.since = 0, c.per_unit = per_unit, c.done = 0.f;
    c.every = (k <= 0 || units == 0) ? 0xffffffffu : (units + (unsigned)k - 1) / (unsigned)k;
    r->units = units;
    r->ncp = 0;
    if (k > 0) {
        r->cp[0] = hx_gtime();
        r->work[0] = 0.f;
        r->ncp = 1;
    }
}

__device__ __forceinline__ void hx_cp_unit(hx_cp &c, unsigned int n_units) {
    c.done += c.per_unit * (float)n_units;
    c.since += n_units;
    if (c.since >= c.every && c.r->ncp <= HX_CP_MAX) {
        c.since = 0;
        c.r->cp[c.r->ncp] = hx_gtime();
        c.r->work[c.r->ncp] = c.done;
        c.r->ncp++;
    }
}

__device__ __forceinline__ void hx_cp_finish(hx_cp &c, int k) {
    /* the last checkpoint is the block's end, with its whole share */
    if (k > 0 && c.since > 0 && c.r->ncp <= HX_CP_MAX) {
        c.r->cp[c.r->ncp] = hx_gtime();
        c.r->work[c.r->ncp] = c.done;
        c.r->ncp++;
    }
}

/* ---------------------------------------------------------------- M ---- */

template <typename T> __device__ void hx_m_tiles(const hx_mtask &t, int blk, int nblk, hx_cp *cp, int tid) {
    using namespace nvcuda;
    const int warp = tid / 32;
    const int tiles_n = t.np / 16, tiles = (t.mp / 16) * tiles_n;
    const T *A = (const T *)t.a, *B = (const T *)t.b;
    /* round r: the block's warps take tiles (r * nblk + blk) * HX_WARPS + warp */
    for (int r = 0;; r++) {
        int first = (r * nblk + blk) * HX_WARPS;
        if (first >= tiles) break;
        int tile = first + warp;
        if (tile < tiles) {
            int ti = tile / tiles_n, tj = tile % tiles_n;
            wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.0f);
            for (int k = 0; k < t.kp; k += 16) {
                wmma::load_matrix_sync(fa, A + (size_t)ti * 16 * t.kp + k, t.kp);
                wmma::load_matrix_sync(fb, B + (size_t)k * t.np + tj * 16, t.np);
                wmma::mma_sync(acc, fa, fb, acc);
            }
            wmma::store_matrix_sync(t.c + (size_t)ti * 16 * t.np + tj * 16, acc, t.np, wmma::mem_row_major);
        }
        __syncthreads();
        if (tid == 0) {
            int n = tiles - first < HX_WARPS ? tiles - first : HX_WARPS;
            hx_cp_unit(*cp, (unsigned)n);
        }
    }
}

__device__ unsigned int hx_m_units(const hx_mtask &t, int blk, int nblk) {
    int tiles = (t.mp / 16) * (t.np / 16), n = 0;
    for (int r = 0;; r++) {
        int first = (r * nblk + blk) * HX_WARPS;
        if (first >= tiles) break;
        n += tiles - first < HX_WARPS ? tiles - first : HX_WARPS;
    }
    return (unsigned)n;
}

/* ---------------------------------------------------------------- V ---- */

__device__ __forceinline__ float hx_act(float v, int hardswish) {
    if (hardswish) {
        float c = fminf(fmaxf(__fadd_rn(v, 3.0f), 0.0f), 6.0f);
        return __fmul_rn(__fmul_rn(v, c), 1.0f / 6.0f);
    }
    return v / (1.0f + expf(-v));
}

__device__ void hx_v_rows(const hx_vtask &t, int blk, int nblk, hx_cp *cp, int tid) {
    __shared__ float s_sum[HX_WARPS], s_max[HX_WARPS];
    for (int row = blk; row < t.rows; row += nblk) {
        const float *x = t.x + (size_t)row * t.cols;
        float *y = t.y + (size_t)row * t.cols;
        float sum = 0.f, mx = -INFINITY;
        for (int c = tid; c < t.cols; c += HX_THREADS) {
            float v = x[c];
            for (int p = 0; p < t.passes; p++) v = hx_act(v, t.hardswish);
            y[c] = v;
            sum += v;
            mx = fmaxf(mx, v);
        }
        for (int o = 16; o > 0; o >>= 1) {
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        }
        if ((tid & 31) == 0) s_sum[tid / 32] = sum, s_max[tid / 32] = mx;
        __syncthreads();
        if (tid == 0) {
            float s = 0.f, m = -INFINITY;
            for (int w = 0; w < HX_WARPS; w++) s += s_sum[w], m = fmaxf(m, s_max[w]);
            t.rowsum[row] = s;
            t.rowmax[row] = m;
            hx_cp_unit(*cp, 1);
        }
        __syncthreads();
    }
}

/* ---------------------------------------------------------------- D ---- */

__device__ __forceinline__ unsigned int hx_smem_addr(const void *p) {
    return (unsigned int)__cvta_generic_to_shared(p);
}

/* One descriptor: rows [r0, r0 + n) of window w, staged through shared
 * memory in batches of at most HX_STAGE_BYTES. */
__device__ void hx_d_desc(const hx_dtask &t, long long w, long long r0, long long n, unsigned char *stage,
                          unsigned long long *mbar, unsigned int *phase, int tid) {
    const unsigned char *src = t.src + (size_t)(w * t.rows) * (size_t)t.src_stride;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (t.tma) {
        /* rows are split into pieces of at most the stage; a batch is as many
         * whole pieces as fit */
        long long piece = t.row_bytes < HX_STAGE_BYTES ? t.row_bytes : HX_STAGE_BYTES;
        long long pieces_per_row = (t.row_bytes + piece - 1) / piece;
        long long total = n * pieces_per_row, i = 0;
        unsigned int bar = hx_smem_addr(mbar);
        /* thread 0 alone drives the TMA; the block waits for it at the
         * caller's __syncthreads */
        if (tid == 0) {
            while (i < total) {
                long long used = 0, j = i;
                unsigned int bytes = 0;
                while (j < total) {
                    long long off = (j % pieces_per_row) * piece;
                    long long sz = t.row_bytes - off < piece ? t.row_bytes - off : piece;
                    if (used + sz > HX_STAGE_BYTES) break;
                    used += sz, bytes += (unsigned)sz, j++;
                }
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                             : "memory");
                used = 0;
                for (long long q = i; q < j; q++) {
                    long long row = r0 + q / pieces_per_row, off = (q % pieces_per_row) * piece;
                    long long sz = t.row_bytes - off < piece ? t.row_bytes - off : piece;
                    asm volatile(
                        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                            hx_smem_addr(stage + used)),
                        "l"(src + (size_t)row * t.src_stride + off), "r"((unsigned)sz), "r"(bar)
                        : "memory");
                    used += sz;
                }
                asm volatile("{\n\t.reg .pred p;\n\t"
                             "WAIT_%=:\n\t"
                             "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
                             "@!p bra WAIT_%=;\n\t}" ::"r"(bar),
                             "r"(*phase)
                             : "memory");
                *phase ^= 1u;
                used = 0;
                for (long long q = i; q < j; q++) {
                    long long row = r0 + q / pieces_per_row, off = (q % pieces_per_row) * piece;
                    long long sz = t.row_bytes - off < piece ? t.row_bytes - off : piece;
                    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                                     t.dst + (size_t)row * t.row_bytes + off),
                                 "r"(hx_smem_addr(stage + used)), "r"((unsigned)sz)
                                 : "memory");
                    used += sz;
                }
                asm volatile("cp.async.bulk.commit_group;" ::: "memory");
                /* the stage is reused by the next batch: wait until read */
                asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
                i = j;
            }
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        }
        return;
    }
#endif
    (void)stage, (void)mbar, (void)phase;
    for (long long q = 0; q < n; q++) {
        const unsigned char *s = src + (size_t)(r0 + q) * t.src_stride;
        unsigned char *d = t.dst + (size_t)(r0 + q) * t.row_bytes;
        if (((t.row_bytes | t.src_stride | (long long)(size_t)t.src | (long long)(size_t)t.dst) & 15) == 0) {
            const uint4 *s4 = (const uint4 *)s;
            uint4 *d4 = (uint4 *)d;
            for (long long b = tid; b < t.row_bytes / 16; b += HX_THREADS) d4[b] = s4[b];
        } else {
            for (long long b = tid; b < t.row_bytes; b += HX_THREADS) d[b] = s[b];
        }
    }
}

/* Descriptors of one window, the block's share: u = blk, blk + nblk, ...
 * Each descriptor's rows are always copied by the same block, window after
 * window, so the destination ends holding the last window (as on the host). */
__device__ unsigned int hx_d_units(const hx_dtask &t, int blk, int nblk) {
    long long per_window = (t.rows + t.desc_rows - 1) / t.desc_rows, n = 0;
    for (long long u = blk; u < per_window; u += nblk) n++;
    return (unsigned)(n * t.repeat);
}

__device__ void hx_d_copy(const hx_dtask &t, int blk, int nblk, hx_cp *cp, int tid, unsigned char *stage,
                          unsigned long long *mbar) {
    unsigned int phase = 0;
    long long per_window = (t.rows + t.desc_rows - 1) / t.desc_rows;
    for (long long w = 0; w < t.repeat; w++) {
        for (long long u = blk; u < per_window; u += nblk) {
            long long r0 = u * t.desc_rows, n = t.rows - r0 < t.desc_rows ? t.rows - r0 : t.desc_rows;
            hx_d_desc(t, w, r0, n, stage, mbar, &phase, tid);
            __syncthreads();
            if (tid == 0) hx_cp_unit(*cp, 1);
        }
    }
}

/* ------------------------------------------------------- one role ---- */

__device__ void hx_calibrate(unsigned long long ns, hx_cp *cp, int k, int tid) {
    if (tid == 0) {
        unsigned long long t0 = hx_gtime(), slices = k > 0 ? (unsigned long long)k : 1ull, slice = ns / slices;
        for (unsigned long long s = 1; s <= slices; s++) {
            while (hx_gtime() - t0 < slice * s) {}
            hx_cp_unit(*cp, 1);
        }
    }
    __syncthreads();
}

/* Runs block `blk` of `nblk` of role `role`.  The block's thread 0 records
 * its launch, waits at C's barrier (wait_done), records begin, runs the
 * work with checkpoints, records end and publishes: the role's last block
 * writes the completion flag to host memory (the early-completion
 * interface: the host sees each task end before the launch does). */
__device__ void hx_run_role(int role, int blk, int nblk, const hx_mtask &m, const hx_vtask &v, const hx_dtask &d,
                            const hx_role_ctl &ctl, unsigned char *stage, unsigned long long *mbar) {
    const int tid = threadIdx.x;
    hx_block_rec *r = ctl.rec + blk;
    __shared__ hx_cp cp;
    if (tid == 0) {
        r->launch = hx_gtime();
        r->smid = hx_smid();
        if (ctl.wait_done) {
            volatile const unsigned int *w = ctl.wait_done;
            while (*w < ctl.wait_for) {}
            __threadfence();
        }
        r->begin = hx_gtime();
        unsigned int units = 0;
        float per = 0.f;
        if (ctl.empty) {
            units = 0;
        } else if (ctl.calib_ns) {
            units = ctl.checkpoints > 0 ? (unsigned)ctl.checkpoints : 1u;
            per = 1.0f / ((float)units * (float)nblk);
        } else if (role == ROLE_M) {
            units = hx_m_units(m, blk, nblk);
            per = 1.0f / (float)((m.mp / 16) * (m.np / 16));
        } else if (role == ROLE_V) {
            units = (unsigned)((v.rows - blk + nblk - 1) / nblk);
            per = 1.0f / (float)v.rows;
        } else {
            units = hx_d_units(d, blk, nblk);
            long long per_window = (d.rows + d.desc_rows - 1) / d.desc_rows;
            per = 1.0f / (float)(per_window * d.repeat);
        }
        /* empty tasks record no checkpoints (as on the host) */
        hx_cp_start(cp, r, units, per, ctl.empty ? 0 : ctl.checkpoints);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if (role == ROLE_D && d.tma) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(hx_smem_addr(mbar)), "r"(1) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
#endif
    }
    __syncthreads();
    if (!ctl.empty) {
        if (ctl.calib_ns) {
            hx_calibrate(ctl.calib_ns, &cp, ctl.checkpoints, tid);
        } else if (role == ROLE_M) {
            if (m.bf16) hx_m_tiles<__nv_bfloat16>(m, blk, nblk, &cp, tid);
            else hx_m_tiles<__half>(m, blk, nblk, &cp, tid);
        } else if (role == ROLE_V) {
            hx_v_rows(v, blk, nblk, &cp, tid);
        } else {
            hx_d_copy(d, blk, nblk, &cp, tid, stage, mbar);
        }
    }
    __syncthreads();
    if (tid == 0) {
        hx_cp_finish(cp, ctl.empty ? 0 : ctl.checkpoints);
        r->end = hx_gtime();
        __threadfence_system();
        unsigned int prev = atomicAdd(ctl.done, 1u);
        if (prev + 1 == (unsigned)nblk && ctl.flag) {
            __threadfence_system();
            *ctl.flag = ctl.flag_value;
            __threadfence_system();
        }
    }
}

/* A, B and alone runs: one role, the whole grid. */
__global__ void __launch_bounds__(HX_THREADS)
    hx_solo_kernel(int role, hx_mtask m, hx_vtask v, hx_dtask d, hx_role_ctl ctl) {
    extern __shared__ __align__(128) unsigned char hx_stage[];
    __shared__ __align__(8) unsigned long long mbar;
    hx_run_role(role, blockIdx.x, gridDim.x, m, v, d, ctl, hx_stage, &mbar);
}

/* C and D: blocks [0, nb[0]) are M, then V, then D (a role with 0 blocks is
 * absent).  The barrier is ctl[r].wait_done: set for C, NULL for D. */
struct hx_fused_args {
    int nb[ROLE_N];
    hx_role_ctl ctl[ROLE_N];
};

__global__ void __launch_bounds__(HX_THREADS) hx_fused_kernel(hx_mtask m, hx_vtask v, hx_dtask d, hx_fused_args a) {
    extern __shared__ __align__(128) unsigned char hx_stage[];
    __shared__ __align__(8) unsigned long long mbar;
    int b = blockIdx.x;
    for (int role = 0; role < ROLE_N; role++) {
        if (b < a.nb[role]) {
            hx_run_role(role, b, a.nb[role], m, v, d, a.ctl[role], hx_stage, &mbar);
            return;
        }
        b -= a.nb[role];
    }
}

/* A one-thread kernel that writes the globaltimer: the device begin and end
 * of work the copy engine does (cudaMemcpy2DAsync has no device clock of
 * its own) when stream-ordered around it. */
__global__ void hx_stamp_kernel(unsigned long long *at) { *at = hx_gtime(); }

/* Clock alignment: the host writes a sequence number into mapped memory,
 * the kernel answers with the globaltimer; the host brackets each exchange
 * with its own clock and keeps the tightest (see align_clocks). */
__global__ void hx_echo_kernel(volatile unsigned int *req, volatile unsigned long long *reply, int n) {
    for (int i = 1; i <= n; i++) {
        unsigned long long spins = 0;
        while (*req != (unsigned)i) {
            if (++spins > (1ull << 32)) return; /* the host went away */
        }
        reply[0] = hx_gtime();
        __threadfence_system();
        reply[1] = (unsigned long long)i;
        __threadfence_system();
    }
}

/* globaltimer's step: the smallest non-zero difference of back-to-back reads. */
__global__ void hx_timer_step_kernel(unsigned long long *out) {
    unsigned long long best = ~0ull, prev = hx_gtime();
    for (int i = 0; i < 100000 && best > 1; i++) {
        unsigned long long t = hx_gtime();
        if (t != prev && t - prev < best) best = t - prev;
        prev = t;
    }
    *out = best;
}
#endif
