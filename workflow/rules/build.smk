# build: compile the runner for one target with kernels/Makefile.  Reruns only
# when a kernel source, the Makefile, the target's .mk or the build flags
# (config build.cflags) change; make itself rebuilds when its flags differ.
rule build:
    input:
        makefile=str(REPO / "kernels" / "Makefile"),
        sources=kernel_sources,
    output:
        "results/{target}/build/hxrun",
    params:
        kernels=lambda wc, input: os.path.dirname(input.makefile),
        make_vars=(f"CFLAGS='{config['build']['cflags']}'" if config["build"]["cflags"] else ""),
    log:
        "logs/{target}/build.log",
    threads: config["build"]["jobs"]
    conda:
        "../../envs/build.yaml"
    shell:
        "(make -C {params.kernels} TARGET={wildcards.target} -j{threads}"
        " {params.make_vars}"
        " && cp {params.kernels}/build/{wildcards.target}/hxrun {output}) > {log} 2>&1"
