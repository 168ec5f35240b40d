# build: compile the runner for one target with kernels/Makefile
# (`make -C kernels TARGET=<target>`: host cc, zig cc for hexagon-qemu,
# hexagon-clang for the SDK targets).  Reruns only when a kernel source, the
# Makefile, the target's .mk or the build flags (config build.cflags) change;
# make itself rebuilds when its flags differ.  A target whose tools are
# missing never gets here: the Snakefile's preflight stops first.
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
