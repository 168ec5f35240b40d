# build: compile the runner for one target.  Reruns only when a kernel source,
# the Makefile or the build flags (config build.cflags) change; the Makefile
# itself also rebuilds when the flags differ from its last build.
rule build:
    input:
        kernel_sources(),
    output:
        "results/{target}/build/hxrun",
    params:
        kernels=str(REPO / "kernels"),
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
