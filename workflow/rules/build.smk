# Build and stage the runner of each target and its first-day ladder: build,
# build_ap, stage_ap, deploy, selftest_target and selftest (helpers:
# common.smk).


# build: compile the runner for one target with kernels/Makefile
# (`make -C kernels TARGET=<target>`: host cc, zig cc for hexagon-qemu,
# hexagon-clang for the SDK targets).  Reruns only when a kernel source, the
# Makefile, the target's .mk or the build flags (config build.cflags) change;
# make itself rebuilds when its flags differ.  A target whose tools are
# missing never gets here: the Snakefile's preflight stops first.  On the
# phone this is hxrun, the dsp-only runner, in both modes (its --selftest is
# the first-day ladder); mode ap's two halves are build_ap's.
rule build:
    input:
        makefile=repo_path("kernels", "Makefile"),
        sources=kernel_sources,
    output:
        "results/{target}/build/hxrun",
    params:
        kernels=lambda wc, input: os.path.dirname(input.makefile),
        # per target: CFLAGS override; SDK location/arch for the Hexagon SDK targets
        make_vars=lambda wc: " ".join(shlex.quote(v) for v in hxpreflight.make_vars(config, wc.target)),
    log:
        "logs/{target}/build.log",
    threads: config["build"]["jobs"]
    conda:
        "../../envs/build.yaml"
    shell:
        "(make -C {params.kernels} TARGET={wildcards.target} -j{threads}"
        " {params.make_vars}"
        " && cp {params.kernels}/build/{wildcards.target}/hxrun {output}) > {log} 2>&1"


# build_ap: mode ap's halves for the phone (target_settings.hexagon.mode: ap,
# the default; kernels/targets/hexagon.mk): the DSP skel libhxfuse_skel.so
# (hexagon-clang) and the AP driver hxrun-ap (the Android NDK's clang).  It
# runs after `build`: the skel shares hxrun's objects in the same build
# directory, so the two makes never run there at once.  Requested only in
# mode ap (ap_stage_files, stage_runner); dsp-only plans none of it.
rule build_ap:
    input:
        makefile=repo_path("kernels", "Makefile"),
        sources=ap_kernel_sources,
        hxrun="results/{target}/build/hxrun",
    output:
        driver="results/{target}/build/hxrun-ap",
        skel="results/{target}/build/libhxfuse_skel.so",
    wildcard_constraints:
        target="hexagon",
    params:
        kernels=lambda wc, input: os.path.dirname(input.makefile),
        make_vars=lambda wc: " ".join(shlex.quote(v) for v in hxpreflight.ap_make_vars(config, wc.target)),
    log:
        "logs/{target}/build_ap.log",
    threads: config["build"]["jobs"]
    conda:
        "../../envs/build.yaml"
    shell:
        "(make -C {params.kernels} TARGET={wildcards.target} -j{threads} {params.make_vars}"
        " build/{wildcards.target}/hxrun-ap build/{wildcards.target}/libhxfuse_skel.so"
        " && cp {params.kernels}/build/{wildcards.target}/hxrun-ap {output.driver}"
        " && cp {params.kernels}/build/{wildcards.target}/libhxfuse_skel.so {output.skel}) > {log} 2>&1"


# stage_ap: mode ap's halves side by side in stage/ (device.sh pushes the
# skel from beside the driver), for deploy and the measurement jobs.
rule stage_ap:
    input:
        driver="results/{target}/build/hxrun-ap",
        skel="results/{target}/build/libhxfuse_skel.so",
    output:
        driver="results/{target}/stage/hxrun-ap",
        skel="results/{target}/stage/libhxfuse_skel.so",
    wildcard_constraints:
        target="hexagon",
    log:
        "logs/{target}/stage_ap.log",
    conda:
        "../../envs/build.yaml"
    shell:
        "(cp -p {input.driver} {output.driver} && cp -p {input.skel} {output.skel}) > {log} 2>&1"


# deploy: stage the runner and what it needs for the target.  `host` and
# `hexagon-qemu` (a static Hexagon Linux binary run by qemu-hexagon) are staged
# in a directory under results/; `hexagon` is also pushed to the phone with
# kernels/hexagon/device.sh deploy (adb, target_settings.hexagon.device_serial
# and device_dir; with a device farm, device_serials, to every phone); in
# mode ap also mode ap's staged halves (stage_ap), pushed with device.sh
# deploy .../hxrun-ap.  deploy.json records the staged binaries' sha256, the
# run prefix, the mode and whether the target is emulated.
rule deploy:
    input:
        runner="results/{target}/build/hxrun",
        # mode ap: stage/hxrun-ap and stage/libhxfuse_skel.so (none otherwise)
        ap=ap_stage_files,
        code=CODE["deploy"],
    output:
        runner="results/{target}/stage/hxrun",
        manifest="results/{target}/stage/deploy.json",
    params:
        prefix=lambda wc: TARGET_PREFIX[wc.target],
        device_sh=repo_path("kernels", "hexagon", "device.sh"),
        env=lambda wc: hxpreflight.run_env(config, wc.target),
        target_info=lambda wc: hxtargets.info(wc.target),
        # ap | dsp-only on the SDK targets, None elsewhere (deploy.json records it)
        mode=lambda wc: hxparams.device_mode(config, wc.target),
        farm_spans_hosts=lambda wc: bool(hxparams.target_settings(config, wc.target).get("farm_spans_hosts")),
    log:
        "logs/{target}/deploy.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/deploy.py"


# selftest: hxrun --selftest, the first-day ladder (kernels/hexagon/README.md,
# "First day"), through the target's run prefix.  Each step is flushed to the
# file before the next and a watchdog names a step that hangs; the job fails
# with the failing or hanging step named (hxfuse.runner.selftest).
#
# On the SDK targets (phone, simulator) it is the first job on the device:
# every job that runs the target's runner (run, search_run, search_confirm)
# takes its output as input (selftest_gate), so no measurement starts before
# the ladder passed (tests/workflow/test_selftest_rule.py checks the job graph).  On host and hexagon-qemu
# it runs only when asked (`snakemake --cores 1 selftest`); it is cheap there
# (well under 2 s) but kept out of `all` so that the default study's job
# graph and reruns do not change.  (selftest_gate is in common.smk.)  In
# the phone's mode ap it is still hxrun --selftest, the DSP's ladder (its log
# says so), and selftest_ap adds the boundary's.
rule selftest_target:
    input:
        runner="results/{target}/stage/hxrun",
        manifest="results/{target}/stage/deploy.json",
        code=CODE["selftest"],
    output:
        "results/{target}/selftest.jsonl",
    params:
        prefix=lambda wc: TARGET_PREFIX[wc.target],
        env=lambda wc: hxpreflight.run_env(config, wc.target),
    resources:
        device=1,
        gres=run_gres,
        slurm_extra=run_slurm_extra,
        timeout_s=lambda wc: str(float(hxparams.run_settings(config, wc.target)["timeout_s"])),
    log:
        "logs/{target}/selftest.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/selftest.py"


# selftest_ap: mode ap's second ladder, hxrun-ap --selftest (the boundary:
# libcdsprpc, session, set-up, queues, ping, threads, one empty request, one
# empty fused entry; docs/ap-host.md), after the DSP's own.  In mode ap the
# measurements wait for both (selftest_gate); it has run only against the
# loopback stand-in, never on a phone.
rule selftest_ap:
    input:
        runner="results/{target}/stage/hxrun-ap",
        manifest="results/{target}/stage/deploy.json",
        code=CODE["selftest"],
        # the DSP's ladder first: the boundary needs a working cDSP
        dsp="results/{target}/selftest.jsonl",
    output:
        "results/{target}/selftest-ap.jsonl",
    wildcard_constraints:
        target="hexagon",
    params:
        prefix=lambda wc: TARGET_PREFIX[wc.target],
        env=lambda wc: hxpreflight.run_env(config, wc.target),
    resources:
        device=1,
        gres=run_gres,
        slurm_extra=run_slurm_extra,
        timeout_s=lambda wc: str(float(hxparams.run_settings(config, wc.target)["timeout_s"])),
    log:
        "logs/{target}/selftest_ap.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/selftest.py"


rule selftest:
    input:
        expand("results/{target}/selftest.jsonl", target=config["targets"]),
        # mode ap: the boundary's ladder too
        ap_selftests(),
