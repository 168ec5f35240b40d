/* hxgraph: task graphs of M (GEMM), V (vector) and D (copy) nodes run in
 * groups A-D (docs/graphs.md).  Files: graph_json.c (a small JSON reader),
 * graph.c (loading, validation, buffer plan, conflict check), graph_ops.c
 * (what each node computes), graph_exec.c (groups A-D), graph_main.c
 * (options, protocol, output). */
#ifndef HX_GRAPH_H
#define HX_GRAPH_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "engine.h"
#include "event.h"
#include "kernels.h"

#define HXG_MAX_NODES 256
#define HXG_MAX_BUFS  256
#define HXG_NAME      48
#define HXG_MAX_ROLES 3

/* Engine classes: M on the matrix engine, V on the vector engine (in groups
 * C and D the fused entry runs V nodes itself: it is the vector engine's
 * thread), D on the copy engine. */
enum { HXG_ENG_MX = 0, HXG_ENG_VEC, HXG_ENG_DMA, HXG_NENG };

typedef enum {
    HXG_GEMM = 0,
    HXG_SILU,
    HXG_RELU6,
    HXG_ADD,
    HXG_SWIGLU,
    HXG_SOFTMAX,
    HXG_MAXPOOL3,
    HXG_IM2COL3,
    HXG_DWCONV3,
    HXG_COPY,
    HXG_NOPS
} hxg_op;

extern const char *const hxg_op_names[HXG_NOPS];
extern const char *const hxg_engine_names[HXG_NENG];
extern const char hxg_class_names[HXG_NENG]; /* 'M', 'V', 'D' */

typedef struct hxg_buf {
    char name[HXG_NAME];
    size_t bytes;
    int alias;     /* buffer whose storage this one shares (offset 0), or -1 */
    int storage;   /* root buffer of its storage (itself when not an alias) */
    size_t offset; /* of its storage in the arena */
} hxg_buf;

/* A 2-D region of a buffer: rows of row_bytes, stride apart, from off. */
typedef struct hxg_access {
    int buf;
    const char *role;
    size_t off, rows, row_bytes, stride;
    int write;
} hxg_access;

typedef struct hxg_node {
    char name[HXG_NAME];
    hxg_op op;
    int engine; /* HXG_ENG_* */
    /* parameters (those of its op; docs/graphs.md) */
    int m, n, k, trans_b;
    int rows, cols;
    int h, w, c, relu6;
    float scale;
    size_t d_rows, d_row_bytes, d_src_stride, d_dst_stride, d_src_off, d_dst_off;
    /* buffers by role: in[] read, out[] written */
    int nin, nout;
    int in[HXG_MAX_ROLES], out[HXG_MAX_ROLES];
    const char *in_role[HXG_MAX_ROLES], *out_role[HXG_MAX_ROLES];
    int nacc;
    hxg_access acc[2 * HXG_MAX_ROLES];
    /* edges */
    int npred, nsucc;
    int pred[HXG_MAX_NODES], succ[HXG_MAX_NODES];
    int topo;          /* position in the fixed topological order */
    int level;         /* ASAP step: 0 for a node without predecessors */
    size_t priv_bytes; /* private workspace (packing, transposes, reductions) */

    /* runtime, per trial */
    uint8_t *priv;
    hx_job job;
    struct hxg_exec *x;
    hx_event done;
    int pending; /* unfinished predecessors (the orchestrator's count) */
    int handled; /* its completion has been processed by the orchestrator */
    uint64_t launch, begin, end, cpu_ns, pack_ns;
    int cpu_begin, cpu_end;
    const char *ran_on;
} hxg_node;

typedef struct hxg_graph {
    char name[HXG_NAME];
    int nbufs, nnodes;
    hxg_buf buf[HXG_MAX_BUFS];
    hxg_node node[HXG_MAX_NODES];
    int order[HXG_MAX_NODES]; /* fixed topological order (Kahn, ties by file order) */
    size_t arena_bytes;
    int nedges, nimplied;
} hxg_graph;

/* graph.c: reads and validates a graph file.  Every problem (syntax,
 * unknown key, op, buffer or node, size mismatch, cycle, conflicting buffer
 * use without a dependency path) is an error naming what is wrong, returned
 * before any work. */
int hxg_load(hxg_graph *g, const char *path, char *err, size_t errlen);
/* Absolute byte intervals of an access in an arena at base 0. */
int hxg_conflict_check(const hxg_graph *g, char *err, size_t errlen);

/* graph_ops.c */
void hxg_node_run(hxg_node *nd, uint8_t *arena, const hx_kernels *k);
uint8_t *hxg_buf_ptr(const hxg_graph *g, uint8_t *arena, int b);

/* graph_exec.c */
typedef struct hxg_exec {
    hxg_graph *g;
    const hx_kernels *k;
    hx_engine eng[HXG_NENG];
    hx_wait_policy wait;
    uint8_t *arena;         /* this trial's buffers */
    hx_counter completions; /* bumped by every node completion */
    uint64_t epoch;
    /* fused entry (C, D) */
    hx_job entry_job;
    int entry_barrier;
    hx_event entry_done;
    uint64_t entry_begin, entry_end;
    /* verification round: the host dumps each node's buffers around it */
    void (*before)(struct hxg_exec *x, hxg_node *nd, void *ctx);
    void (*after)(struct hxg_exec *x, hxg_node *nd, void *ctx);
    void *ctx;
} hxg_exec;

enum { HXG_A = 0, HXG_B, HXG_C, HXG_D, HXG_NGROUPS };
extern const char *const hxg_group_names[HXG_NGROUPS];

int hxg_exec_start(hxg_exec *x, hxg_graph *g, const hx_kernels *k, const int core[HXG_NENG], hx_wait_policy wait,
                   char *err, size_t errlen);
void hxg_exec_stop(hxg_exec *x);
uint64_t hxg_now(const hxg_exec *x);
/* Runs every node once in the given group; fills the nodes' records. */
void hxg_run_group(hxg_exec *x, int group);
#endif
