/* The skel through the loopback stand-in, as a minimal AP would drive it
 * (not hxrun-ap: no protocol, no records): set-up refusals, queues, one
 * group-B trial (a packet on each engine's queue at once), one fused trial
 * (each task's reply before the entry's), control operations, bad packets,
 * stop.  Prints "ok <step>" lines; exits 1 at the first failure.  Its
 * timings are host-CPU times through a stand-in: only orderings are checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "AEEStdErr.h"
#include "dspqueue.h"
#include "remote.h"
#include "../ap/wire.h"
#include "test_check.h"

/* An error as the DSP returns it (AEEStdErr.h: DSP_AEE_EOFFSET + code). */
#define DSP(code) ((int)(DSP_AEE_EOFFSET + (code)))

static remote_handle64 H;
static dspqueue_t Q[HX_WIRE_QUEUES];
static hx_wire_resp R;
static uint8_t bulk[HX_WIRE_BULK_MAX];
static hx_wire_setup_resp S; /* the set-up reply: slot sizes */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int setup(const char *const *args, int argc, hx_wire_setup_resp *resp) {
    static uint8_t buf[sizeof(hx_wire_setup_req) + 4096];
    hx_wire_setup_req *req = (hx_wire_setup_req *)buf;
    memset(req, 0, sizeof *req);
    req->version = HX_WIRE_VERSION;
    req->argc = (uint32_t)argc;
    req->test_clock_offset_ns = 1000000000; /* the "DSP" clock runs 1 s ahead */
    size_t at = sizeof *req;
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(args[i]) + 1;
        memcpy(buf + at, args[i], n);
        at += n;
    }
    req->argv_bytes = (uint32_t)(at - sizeof *req);
    /* the IDL's shape: primIn (the sequences' lengths), then the sequences */
    hx_wire_prim2 prim = {{(int32_t)at, (int32_t)sizeof *resp}};
    remote_arg a[3];
    a[0].buf.pv = &prim, a[0].buf.nLen = sizeof prim;
    a[1].buf.pv = buf, a[1].buf.nLen = at;
    a[2].buf.pv = resp, a[2].buf.nLen = sizeof *resp;
    return remote_handle64_invoke(H, REMOTE_SCALARS_MAKE(HX_METHOD_SETUP, 2, 1), a);
}

static int control(uint32_t op, uint32_t task, uint64_t arg, uint64_t offset, uint64_t length, hx_wire_ctl_resp *r) {
    hx_wire_ctl_req req = {op, task, arg, offset, length};
    hx_wire_prim3 prim = {{(int32_t)sizeof req, (int32_t)sizeof *r, (int32_t)sizeof bulk}};
    remote_arg a[4];
    a[0].buf.pv = &prim, a[0].buf.nLen = sizeof prim;
    a[1].buf.pv = &req, a[1].buf.nLen = sizeof req;
    a[2].buf.pv = r, a[2].buf.nLen = sizeof *r;
    a[3].buf.pv = bulk, a[3].buf.nLen = sizeof bulk;
    return remote_handle64_invoke(H, REMOTE_SCALARS_MAKE(HX_METHOD_CONTROL, 2, 2), a);
}

static void send_pkt(int q, uint32_t op, uint32_t task_or_mask, uint32_t flags, uint64_t seq, uint32_t magic) {
    hx_wire_req p = {magic, op, task_or_mask, flags, seq};
    RC(dspqueue_write(Q[q], 0, 0, NULL, sizeof p, (const uint8_t *)&p, 1000000), AEE_SUCCESS);
}

static void read_resp(int q) {
    uint32_t flags, nb, len = 0;
    RC(dspqueue_read(Q[q], &flags, 0, &nb, NULL, sizeof R, &len, (uint8_t *)&R, 20000000), AEE_SUCCESS);
    CHECK(len == sizeof R && R.magic == HX_WIRE_MAGIC, "reply of %u bytes, magic %x", len, R.magic);
}

static void begin_trial(void) {
    hx_wire_ctl_resp c;
    RC(control(HX_CTL_BEGIN_TRIAL, 0, 0, 0, 0, &c), AEE_SUCCESS);
    CHECK(c.status == 0, "BEGIN_TRIAL: %s", c.error);
}

static void check_task_reply(uint32_t task, uint64_t seq, const char *engine) {
    CHECK(R.op == HX_RESP_TASK_DONE && R.status == 0, "op %u status %d: %s", R.op, R.status, R.error);
    CHECK(R.task == task && R.rec.id == task && R.seq == seq, "task %u/%u seq %llu", R.task, R.rec.id,
          (unsigned long long)R.seq);
    CHECK(!strcmp(R.rec.ran_on, engine), "ran on %s, want %s", R.rec.ran_on, engine);
    CHECK(R.dsp_recv <= R.rec.launch && R.rec.launch <= R.rec.begin && R.rec.begin <= R.rec.end &&
              R.rec.end <= R.dsp_send,
          "recv %llu launch %llu begin %llu end %llu send %llu out of order", (unsigned long long)R.dsp_recv,
          (unsigned long long)R.rec.launch, (unsigned long long)R.rec.begin, (unsigned long long)R.rec.end,
          (unsigned long long)R.dsp_send);
    CHECK(R.rec.nworkers >= 1 && R.rec.workers[0].nckpt > 0, "no worker record / checkpoints");
    /* a task's own slot (slot i for task i; none when it uses no scratch)
     * was live during its run; others may or may not have been yet */
    CHECK(R.scratch_peak_bytes >= S.slot_bytes[task], "scratch peak %llu below the task's own slot %llu",
          (unsigned long long)R.scratch_peak_bytes, (unsigned long long)S.slot_bytes[task]);
}

static void open_session(void) {
    struct remote_rpc_control_unsigned_module um = {CDSP_DOMAIN_ID, 1};
    /* signed PD: the unsigned skel is refused (AEE_EUNSIGNEDMOD from the DSP) */
    RC(remote_handle64_open(HX_SKEL_URI CDSP_DOMAIN, &H), DSP(0x081));
    RC(remote_session_control(DSPRPC_CONTROL_UNSIGNED_MODULE, &um, sizeof um), AEE_SUCCESS);
    /* method 0 as the loader calls it (two in buffers, one out handle) */
    RC(remote_handle64_open(HX_SKEL_URI CDSP_DOMAIN, &H), AEE_SUCCESS);
    remote_handle64 h2;
    RC(remote_handle64_open(HX_SKEL_URI CDSP_DOMAIN, &h2), DSP(0x00D)); /* one session: the skel's AEE_EBADSTATE */
    struct remote_rpc_control_latency lat = {RPC_PM_QOS, 100};
    RC(remote_handle64_control(H, DSPRPC_CONTROL_LATENCY, &lat, sizeof lat), AEE_SUCCESS);
    printf("ok open\n");
}

static void setup_refusals(void) {
    /* a scalars word that does not match the method's */
    remote_arg bad[3] = {{.buf = {&S, sizeof S}}, {.buf = {&S, sizeof S}}, {.buf = {&S, sizeof S}}};
    RC(remote_handle64_invoke(H, REMOTE_SCALARS_MAKE(HX_METHOD_SETUP, 2, 0), bad), DSP(0x00E));
    RC(remote_handle64_invoke(H, REMOTE_SCALARS_MAKE(HX_METHOD_SETUP, 1, 1), bad), DSP(0x00E)); /* no primIn */
    RC(remote_handle64_invoke(H, REMOTE_SCALARS_MAKE(HX_METHOD_START, 2, 1), bad), DSP(0x00E)); /* sizes */
    static const char *const badopt[] = {"hxrun", "--out", "/dev/null", "--no-such-option"};
    RC(setup(badopt, 4, &S), AEE_SUCCESS);
    CHECK(S.status == 2 && strstr(S.error, "no-such-option"), "bad option: %d %s", S.status, S.error);
    static const char *const cap[] = {"hxrun", "--out", "/dev/null", "--check-at-publish"};
    RC(setup(cap, 4, &S), AEE_SUCCESS);
    CHECK(S.status == 2 && strstr(S.error, "publication"), "check-at-publish: %d %s", S.status, S.error);
    printf("ok setup_refusals\n");
}

static void setup_good(void) {
    static const char *const good[] = {"hxrun",  "--out",     "/dev/null", "--m-shape",      "64,64,64", "--v-shape",
                                       "64,256", "--d-shape", "64,256",    "--d-src-stride", "384",      "--warmup",
                                       "0",      "--rounds",  "1",         "--antagonist",   "1"};
    uint64_t t_setup = now_ns();
    RC(setup(good, (int)(sizeof good / sizeof good[0]), &S), AEE_SUCCESS);
    CHECK(S.status == 0, "setup: %s", S.error);
    CHECK(S.dsp_epoch > t_setup + 500000000u, "the 1 s test offset is not in dsp_epoch");
    CHECK(!strcmp(S.engine_name[HX_M], "mx") && !strcmp(S.engine_name[HX_V], "vec") &&
              !strcmp(S.engine_name[HX_D], "dma"),
          "engines %s %s %s", S.engine_name[0], S.engine_name[1], S.engine_name[2]);
    CHECK(S.device_json[0] == '{' && strstr(S.device_json, "\"target\":") && strstr(S.device_json, "\"clock\":{"),
          "device_json %s", S.device_json);
    printf("ok setup %s\n", S.device_json);
}

static void start_and_ping(void) {
    remote_arg st[3];
    hx_wire_start_req sr = {HX_WIRE_QUEUES, 0, {0}};
    for (int i = 0; i < HX_WIRE_QUEUES; i++) {
        RC(dspqueue_create(CDSP_DOMAIN_ID, 0, HX_WIRE_QUEUE_BYTES, HX_WIRE_QUEUE_BYTES, NULL, NULL, NULL, &Q[i]),
           AEE_SUCCESS);
        RC(dspqueue_export(Q[i], &sr.queue_id[i]), AEE_SUCCESS);
    }
    hx_wire_status status;
    hx_wire_prim2 sprim = {{(int32_t)sizeof sr, (int32_t)sizeof status}};
    st[0].buf.pv = &sprim, st[0].buf.nLen = sizeof sprim;
    st[1].buf.pv = &sr, st[1].buf.nLen = sizeof sr;
    st[2].buf.pv = &status, st[2].buf.nLen = sizeof status;
    RC(remote_handle64_invoke(H, REMOTE_SCALARS_MAKE(HX_METHOD_START, 2, 1), st), AEE_SUCCESS);
    CHECK(status.status == 0, "start: %s", status.error);
    hx_wire_ctl_resp c;
    uint64_t before = now_ns();
    RC(control(HX_CTL_PING, 0, 0, 0, 0, &c), AEE_SUCCESS);
    CHECK(c.value > before + 500000000u, "PING %llu does not carry the 1 s offset", (unsigned long long)c.value);
    printf("ok start_ping\n");
}

static void groups_b_d_c(void) {
    /* group B: one packet on each engine's queue, written at once */
    begin_trial();
    const char *eng[HX_NTASKS] = {"mx", "vec", "dma"};
    for (int t = 0; t < HX_NTASKS; t++) send_pkt(t, HX_PKT_TASK, (uint32_t)t, 0, 10 + (uint64_t)t, HX_WIRE_MAGIC);
    for (int t = 0; t < HX_NTASKS; t++) {
        read_resp(t);
        check_task_reply((uint32_t)t, 10 + (uint64_t)t, eng[t]);
    }
    printf("ok group_b\n");

    /* group D: the fused entry; every task's reply before the entry's */
    begin_trial();
    RC(dspqueue_write_early_wakeup_noblock(Q[HX_WIRE_Q_ENTRY], 0, 0), AEE_SUCCESS); /* counted, nothing else */
    send_pkt(HX_WIRE_Q_ENTRY, HX_PKT_FUSED, 7, 0, 20, HX_WIRE_MAGIC);
    uint32_t seen = 0;
    for (int k = 0; k < HX_NTASKS; k++) {
        read_resp(HX_WIRE_Q_ENTRY);
        CHECK(R.op == HX_RESP_TASK_DONE && R.seq == 20 && R.status == 0, "reply %d: op %u: %s", k, R.op, R.error);
        seen |= 1u << R.task;
    }
    CHECK(seen == 7, "tasks seen %x", seen);
    read_resp(HX_WIRE_Q_ENTRY);
    CHECK(R.op == HX_RESP_ENTRY_DONE && R.status == 0 && R.seq == 20, "entry: op %u: %s", R.op, R.error);
    CHECK(R.entry_begin && R.entry_begin <= R.entry_end && R.entry_end <= R.dsp_send, "entry times out of order");
    CHECK(R.nwaits > 0 && !strcmp(R.waits[0].who, "vec"), "waits %u", R.nwaits);
    printf("ok group_d\n");

    /* group C with the barrier: the same replies */
    begin_trial();
    send_pkt(HX_WIRE_Q_ENTRY, HX_PKT_FUSED, 3, HX_PKTF_BARRIER, 30, HX_WIRE_MAGIC);
    for (int k = 0; k < 2; k++) {
        read_resp(HX_WIRE_Q_ENTRY);
        CHECK(R.op == HX_RESP_TASK_DONE, "C reply %d op %u", k, R.op);
    }
    read_resp(HX_WIRE_Q_ENTRY);
    CHECK(R.op == HX_RESP_ENTRY_DONE && R.status == 0, "C entry: %s", R.error);
    printf("ok group_c\n");
}

static void bad_packets(void) {
    /* bad packets get an error reply, and the queue goes on */
    send_pkt(HX_WIRE_Q_M, HX_PKT_TASK, HX_M, 0, 40, 0xdeadbeefu);
    read_resp(HX_WIRE_Q_M);
    CHECK(R.status != 0 && strstr(R.error, "magic") && R.seq == 40, "bad magic: %d %s", R.status, R.error);
    send_pkt(HX_WIRE_Q_M, HX_PKT_TASK, HX_V, 0, 41, HX_WIRE_MAGIC);
    read_resp(HX_WIRE_Q_M);
    CHECK(R.status != 0 && strstr(R.error, "queue"), "task on another queue: %d %s", R.status, R.error);
    send_pkt(HX_WIRE_Q_M, 99, 0, 0, 42, HX_WIRE_MAGIC);
    read_resp(HX_WIRE_Q_M);
    CHECK(R.status != 0 && strstr(R.error, "op"), "unknown op: %d %s", R.status, R.error);
    printf("ok bad_packets\n");
}

static void control_ops(void) {
    hx_wire_ctl_resp c;
    RC(control(HX_CTL_CHECKSUM, HX_M, 0, 0, 0, &c), AEE_SUCCESS);
    uint64_t cs = c.value;
    RC(control(HX_CTL_POISON, HX_M, 0, 0, 0, &c), AEE_SUCCESS);
    RC(control(HX_CTL_CHECKSUM, HX_M, 0, 0, 0, &c), AEE_SUCCESS);
    CHECK(c.status == 0 && c.value != cs, "poison did not change the checksum");
    RC(control(HX_CTL_READ, HX_M, HX_BUF_M_C, 0, UINT64_MAX, &c), AEE_SUCCESS);
    CHECK(c.status == 0 && c.value == 64 * 64 * 4 && c.bulk_bytes == c.value, "READ M_C: %llu of %llu: %s",
          (unsigned long long)c.bulk_bytes, (unsigned long long)c.value, c.error);
    RC(control(HX_CTL_READ, HX_D, HX_BUF_D_SRC, 100, 10, &c), AEE_SUCCESS);
    CHECK(c.status == 0 && c.bulk_bytes == 10 && c.value == 64 * 384, "READ D_src window: %llu of %llu",
          (unsigned long long)c.bulk_bytes, (unsigned long long)c.value);
    RC(control(HX_CTL_READ, HX_M, 99, 0, 10, &c), AEE_SUCCESS);
    CHECK(c.status != 0, "READ of no buffer passed");
    RC(control(HX_CTL_END, 0, 0, 0, 0, &c), AEE_SUCCESS);
    CHECK(c.status == 0 && c.bulk_bytes > 0 && !strncmp((const char *)bulk, "{\"resources\":{", 14) &&
              strstr((const char *)bulk, "\"core_cycles_per_us_end\":null}"),
          "END: %s", (const char *)bulk);
    hx_wire_ctl_req end = {HX_CTL_END, 0, 0, 0, 0};
    hx_wire_prim3 nprim = {{(int32_t)sizeof end, (int32_t)sizeof c, 0}};
    remote_arg nobulk[4] = {
        {.buf = {&nprim, sizeof nprim}}, {.buf = {&end, sizeof end}}, {.buf = {&c, sizeof c}}, {.buf = {NULL, 0}}};
    RC(remote_handle64_invoke(H, REMOTE_SCALARS_MAKE(HX_METHOD_CONTROL, 2, 2), nobulk), AEE_SUCCESS);
    CHECK(c.status != 0 && strstr(c.error, "bulk"), "END without a bulk buffer: %d %s", c.status, c.error);
    RC(control(77, 0, 0, 0, 0, &c), AEE_SUCCESS);
    CHECK(c.status != 0, "unknown control op passed");
    printf("ok control %s\n", (const char *)bulk);
}

static void stop_and_close(void) {
    hx_wire_status status;
    remote_arg sp[2];
    hx_wire_prim1 pprim = {{(int32_t)sizeof status}};
    sp[0].buf.pv = &pprim, sp[0].buf.nLen = sizeof pprim;
    sp[1].buf.pv = &status, sp[1].buf.nLen = sizeof status;
    RC(remote_handle64_invoke(H, REMOTE_SCALARS_MAKE(HX_METHOD_STOP, 1, 1), sp), AEE_SUCCESS);
    CHECK(status.status == 0, "stop: %s", status.error);
    for (int i = 0; i < HX_WIRE_QUEUES; i++) RC(dspqueue_close(Q[i]), AEE_SUCCESS);
    /* after STOP the session takes a new SETUP; a plan that cannot work is hxrun's exit 3 */
    static const char *const tiny[] = {"hxrun", "--out", "/dev/null", "--scratch-bytes", "1024"};
    RC(setup(tiny, 5, &S), AEE_SUCCESS);
    CHECK(S.status == 3 && strstr(S.error, "scratch"), "plan that cannot work: %d %s", S.status, S.error);
    RC(remote_handle64_close(H), AEE_SUCCESS);
    /* the last handle closed: the stand-in's counters are on disk now, not only at exit */
    const char *stats = getenv("HX_LOOPBACK_STATS");
    if (stats) {
        FILE *f = fopen(stats, "r");
        CHECK(f != NULL, "no stats file %s after the last close", stats);
        size_t n = fread(bulk, 1, sizeof bulk - 1, f);
        bulk[n] = 0;
        fclose(f);
        CHECK(strstr((const char *)bulk, "\"stop\": 1"), "stats after close: %s", (const char *)bulk);
    }
    RC(remote_handle64_invoke(H, REMOTE_SCALARS_MAKE(HX_METHOD_STOP, 1, 1), sp), AEE_EBADPARM); /* closed */
    printf("ok stop_close\n");
}

int main(void) {
    open_session();
    setup_refusals();
    setup_good();
    start_and_ping();
    groups_b_d_c();
    bad_packets();
    control_ops();
    stop_and_close();
    return 0;
}
