# Shared definitions: config validation, the point table, path helpers.
import os
import shlex
import sys
from pathlib import Path

from snakemake.utils import validate

# This checkout: the directory above workflow/rules, wherever the working
# directory is and whichever workflow includes this one as a module
# (workflow.basedir is the outermost workflow's).
REPO = Path(workflow.current_basedir).resolve().parent.parent
# The Snakefile imports the package from this checkout; job scripts import the
# installed package (`pip install -e .`, see README).
sys.path.insert(0, str(REPO))


def repo_path(*parts):
    """A file of this checkout as an input path: relative to the working
    directory, so that a checkout copied elsewhere with its results and
    .snakemake/ has the same inputs (absolute paths would all change and
    rerun every job), and a workflow importing this one as a module still
    finds the files here."""
    return os.path.relpath(REPO.joinpath(*parts))


import hxfuse.analysis.environment as hxenv
import hxfuse.config.load as hxload
import hxfuse.config.params as hxparams
import hxfuse.config.points as hxpoints
import hxfuse.config.preflight as hxpreflight
import hxfuse.config.remote as hxremote
import hxfuse.config.schema as hxschema
import hxfuse.config.targets as hxtargets
import hxfuse.config.validate as hxvalidate
import hxfuse.deps as hxdeps
import hxfuse.intermediate as hxintermediate
import hxfuse.runner.selftest as hxselftest

# 1. friendly schema check naming every bad key + semantic checks
#    (hxfuse/config/validate.py), 2. snakemake's own validation, which fills defaults.
# 3. preflight of the targets: a target this machine cannot build or run
#    (no zig/qemu-hexagon; no Hexagon SDK, hexagon-clang, adb or device
#    serial) stops the workflow here, before any job, naming what is missing
#    and how to provide it (reported together with any config error).
try:
    # also puts the study's sweeps into config (a study file replaces the
    # sweeps whole; hxfuse.config.load.resolve_study)
    hxvalidate.validate(config, hxschema.load_schema(REPO / "workflow/schemas/config.schema.yaml"))
    _config_error = ""
except hxload.ConfigError as err:
    _config_error = f"hxfuse: {err}"
# The preflight asks only about targets the validation accepted: a refused
# target list (an unknown name, a non-string) or refused target settings are
# already named by the message above, and looking them up here would only
# replace that message by a traceback.
# A job's own Snakemake (a cluster job's, in Snakemake's --mode remote: the
# batch job's and its job step's) reads this file again: the main process
# has ruled on the targets already, so the preflight runs there only
# (hxfuse/config/remote.py).
_MAIN = workflow.is_main_process
_preflight = _MAIN and hxpreflight.preflight_ready(config, _config_error)
_missing = hxpreflight.target_problems(config) if _preflight else []
if _missing:
    _config_error += ("\n" if _config_error else "") + (
        "hxfuse: cannot build or run the configured targets on this machine:\n  "
        + "\n  ".join(_missing)
        + '\n(remove the target from config.targets to run the others; README, "Targets")'
    )
if _config_error:
    raise ValueError(_config_error)
validate(config, "../schemas/config.schema.yaml")

POINTS = hxpoints.points(config)
CONFIG_HASH = hxpoints.config_hash(config)
POINT_WC = "{sweep}/{workload}/{point}"
# one replicate (runner invocation) of a point: .../<point>/rep<r>
REP_WC = "{sweep}/{workload}/{point}/rep{rep}"

# Code dependencies, derived once from the imports: each rule's `code` input
# is exactly the hxfuse modules its script imports, transitively
# (hxfuse/deps.py), so editing a module reruns exactly the jobs that run it.
# (A cluster job's Snakemake takes them from the main process: the same
# files, without parsing the package again; hxfuse/config/remote.py.)
CODE = hxremote.from_main(
    hxremote.CODE_ENV,
    _MAIN,
    lambda: {
        s.stem: [os.path.relpath(m) for m in hxdeps.script_modules(s)]
        for s in sorted((REPO / "workflow" / "scripts").glob("*.py"))
    },
)

# Runner command prefix per target: RUN_PREFIX of kernels/targets/<target>.mk
# (empty on the host, qemu-hexagon under emulation, device.sh/sim.sh for the
# SDK targets).  Asked of make by the main process, which exports the answer
# to its jobs; a job's Snakemake takes it from there (hxfuse/config/remote.py).
try:
    TARGET_PREFIX, _asked_make = hxremote.target_prefixes(config, REPO / "kernels", _MAIN, hxpreflight.run_prefix)
except hxload.ConfigError as err:
    raise ValueError(f"hxfuse: {err}") from None
hxremote.note(workflow.exec_mode.name.lower(), _preflight, _asked_make)

# The `device` resource (every run job takes device=1): how many run jobs may
# measure at once.  1, or the number of phones of the hexagon target's device
# farm (target_settings.hexagon.device_serials), set here so that nobody has
# to type --resources; a smaller --resources device=N is honoured, a larger
# one is lowered to the number of phones (more runs than phones would only
# wait for a phone with their timeout running).
_device_limit = hxpreflight.device_limit(config)
_device_given = workflow.global_resources.get("device").value
if _device_given is None or _device_given > _device_limit:
    if _device_given is not None:
        print(
            f"hxfuse: --resources device={_device_given} lowered to {_device_limit}: "
            f"the device farm has {_device_limit} phone(s)",
            file=sys.stderr,
        )
    workflow.global_resources["device"] = _device_limit
DEVICE_LIMIT = workflow.global_resources.get("device").value
# ... and the farm's serials, which device.sh leases from (HX_DEVICE_SERIALS),
# exported to every job rather than passed as a parameter: which phones there
# are must not rerun a measurement.  (A remote job's Snakemake reads this file
# again and exports the same.)
os.environ.update(hxpreflight.device_env(config))
# ... and the --config/--configfile of this command line, which a job that
# finds a damaged input repeats in the command it suggests (the first
# Snakemake's: a remote job's own command line is not the user's).
if hxintermediate.CONFIG_ENV not in os.environ:
    os.environ[hxintermediate.CONFIG_ENV] = shlex.join(hxintermediate.config_args(sys.argv[1:]))


wildcard_constraints:
    target="|".join(sorted(hxtargets.NAMES, key=len, reverse=True)),
    sweep="[A-Za-z][A-Za-z0-9_-]*",
    workload="mv|md|mvd",
    point="[A-Za-z][A-Za-z0-9_-]*",
    rep="[0-9]+",


def is_emulated(target):
    """Timings not performance (hxfuse.config.targets decides)."""
    return hxtargets.is_emulated(target)


def kernel_sources(wc):
    """What the runner of one target is built from (host: no Hexagon code)."""
    from hxfuse.runner.sources import runner_sources

    # kernels/Makefile's own list: hxgraph's and hxserve's files are not in
    # it, so editing them does not rebuild hxrun and rerun every measurement
    srcs = runner_sources("hxrun", wc.target, hxpreflight.make_vars(config, wc.target), REPO)
    return sorted(os.path.relpath(p) for p in srcs) + [repo_path("kernels", "targets", f"{wc.target}.mk")]


def all_cores(wc):
    """Threads of a run job: every core Snakemake may use (so nothing runs
    beside a measurement); 1 where no core count is set (--report, --lint).
    The phone target measures on the phone, and its job only drives adb: one
    thread, so that the runs of a device farm can go on at once."""
    if getattr(wc, "target", None) == "hexagon":
        return 1
    try:
        return workflow.cores
    except Exception:
        return 1


def run_gres(wc):
    """The generic resource a measurement takes under Snakemake's Slurm
    executor (other executors ignore it): the phone target measures on a
    phone, so its job takes one of its host's phones (Slurm's GRES `phone`,
    which the cluster defines per device host) and every phone of a host can
    measure at once; the other targets take none."""
    return "phone:1" if getattr(wc, "target", None) == "hexagon" else ""


def run_slurm_extra(wc):
    """Further sbatch options of a measurement on Slurm: one that measures
    on the node itself takes the node whole (`--exclusive`: nothing is
    scheduled beside it, as all_cores keeps it alone on one machine); a
    phone's job shares its host (run_gres)."""
    return "" if getattr(wc, "target", None) == "hexagon" else "--exclusive"


def stage_runner(wc):
    """The staged runner a measurement job (run, search_run, search_confirm)
    runs: hxrun, or on the phone in mode ap the AP driver hxrun-ap, its skel
    staged beside it (build.smk, stage_ap).  The self-test always runs hxrun."""
    return f"results/{wc.target}/stage/{hxparams.runner_name(config, wc.target)}"


def ap_stage_files(wc):
    """Mode ap's staged halves, which deploy pushes and records; none in
    mode dsp-only and on the other targets, whose job graph is unchanged."""
    if hxparams.device_mode(config, wc.target) != "ap":
        return []
    return [f"results/{wc.target}/stage/hxrun-ap", f"results/{wc.target}/stage/libhxfuse_skel.so"]


def ap_kernel_sources(wc):
    """What mode ap's halves are built from (kernels/Makefile's
    print-SOURCES-hxrun-ap and -skel), so that editing a file neither uses
    does not rebuild them."""
    from hxfuse.runner.sources import runner_sources

    mv = hxpreflight.ap_make_vars(config, wc.target)
    srcs = {p for r in ("hxrun-ap", "skel") for p in runner_sources(r, wc.target, mv, REPO)}
    return sorted(os.path.relpath(p) for p in srcs) + [repo_path("kernels", "targets", f"{wc.target}.mk")]


def selftest_gate(wc):
    """The run jobs of an SDK target wait for its first-day ladder
    (rule selftest_target, build.smk), and in the phone's mode ap also for
    the boundary's (rule selftest_ap); host and hexagon-qemu do not."""
    if not hxselftest.gates_runs(wc.target):
        return []
    if hxparams.device_mode(config, wc.target) == "ap":
        return [f"results/{wc.target}/selftest.jsonl", f"results/{wc.target}/selftest-ap.jsonl"]
    return f"results/{wc.target}/selftest.jsonl"


def ap_selftests():
    """The boundary's ladders (rule selftest_ap) of the targets in mode ap,
    for `snakemake selftest`."""
    return [f"results/{t}/selftest-ap.jsonl" for t in config["targets"] if hxparams.device_mode(config, t) == "ap"]


def point_of(wc):
    return hxpoints.find_point(config, wc.target, wc.sweep, wc.workload, wc.point)


def run_point_info(wc):
    """The run job's description of its replicate (its sidecar records it).
    No x or label: changing those must not rerun a measurement."""
    p, rep = point_of(wc), int(wc.rep)
    return {
        "target": p.target,
        "sweep": p.sweep,
        "workload": p.workload,
        "point": p.point,
        "replicate": rep,
        "params": p.params,
        "point_hash": hxpoints.point_hash(config, p, rep),
    }


def target_points(target):
    return [p for p in POINTS if p.target == target]


def replicates_of(p):
    return range(hxparams.replicates(config, p.target))


def raw_of(p, rep=0):
    return f"results/{p.target}/raw/{p.id}/rep{rep}.jsonl"


def check_of(p, rep=0):
    return f"results/{p.target}/check/{p.id}/rep{rep}.json"


def npy_of(p, rep=0):
    return f"results/{p.target}/npy/{p.id}/rep{rep}"


def all_reps(p, path_of):
    return [path_of(p, r) for r in replicates_of(p)]


def timeline_of(p, ext):
    return f"results/{p.target}/figures/timeline/{p.id}.{ext}"


def sweep_figures(target, ext):
    """Speedup and slowdown figures of a target.  None for an emulated target:
    its timings are not performance (its timelines are drawn, marked EMULATED)."""
    if is_emulated(target):
        return []
    return [f"results/{target}/figures/{kind}_{s}.{ext}" for s in config["sweeps"] for kind in ("speedup", "slowdown")]


def family_figures(target, ext):
    """Family figures of a target: one per sweep with a `family` (none for an
    emulated target, whose timings are not performance)."""
    if is_emulated(target):
        return []
    return [f"results/{target}/figures/family_{s}.{ext}" for s, sw in config["sweeps"].items() if sw.get("family")]


def perfetto_of(p):
    return f"results/{p.target}/timeline/{p.id}.perfetto.json"


def analysis_outputs():
    """Outputs of the timeline and report-table rules (part of `all`)."""
    out = []
    for t in config["targets"]:
        out += [perfetto_of(p) for p in target_points(t)]
        out += [
            f"results/{t}/report/verdicts.html",
            f"results/{t}/verdicts.csv",
            f"results/{t}/report/environment.html",
        ]
    return out


def all_outputs():
    out = []
    for t in config["targets"]:
        pts = target_points(t)
        out += [c for p in pts for c in all_reps(p, check_of)]
        out += [f"results/{t}/summary.csv", f"results/{t}/summary.json", f"results/{t}/trials.csv.gz"]
        for ext in ("pdf", "png"):
            out += [timeline_of(p, ext) for p in pts] + sweep_figures(t, ext) + family_figures(t, ext)
    out += [
        "paper/generated/results_table.tex",
        "paper/generated/evidence_table.tex",
        "paper/generated/families.tex",
        "paper/generated/results_macros.tex",
    ]
    return out


def report_only_targets():
    """The targets of `snakemake --report` when Snakemake is asked for a
    report without running anything (`--report` without
    `--report-after-run`; no target: `all`), else None.  Read from the
    command line with Snakemake's own parser: the workflow learns that it
    makes a report only after the Snakefile has been read."""
    if not any(a == "--report" or a.startswith("--report=") for a in sys.argv[1:]):
        return None
    from snakemake.cli import get_argument_parser

    args, _ = get_argument_parser().parse_known_args(sys.argv[1:])
    if not args.report or args.report_after_run:
        return None
    return list(args.targets) or ["all"]


def report_files(targets):
    """The files marked report() among *targets* (paths or rule names) and
    their jobs' other outputs, looking further into the inputs of every
    producer without wildcards (all -> paper_sections -> the evidence
    figures)."""
    from snakemake.io import is_flagged

    names = {r.name: r for r in workflow.rules}
    todo = [str(i) for t in targets for i in (names[t].input if t in names else [t]) if not callable(i)]
    seen, found = set(), set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        producer = next((r for r in workflow.rules if r.output and r.is_producer(f)), None)
        if producer is None:
            continue
        wildcards = producer.get_wildcards(f)
        found |= {str(o.apply_wildcards(wildcards)) for o in producer.output if is_flagged(o, "report")}
        if not producer.wildcard_names:
            todo += [str(i) for i in producer.input if not callable(i)]
    return sorted(found)


def stop_if_report_before_run():
    """`snakemake --report` shows what its targets (`all`) made: before they
    have run, stop with one line saying so, instead of Snakemake's traceback
    about the first missing file marked for the report.  Called once every
    rule is defined."""
    targets = report_only_targets()
    if targets is None:
        return
    missing = [f for f in report_files(targets) if not os.path.exists(f)]
    if missing:
        run = shlex.join(["snakemake", "--cores", "4", *targets, *hxintermediate.config_args(sys.argv[1:])])
        sys.exit(
            f"hxfuse: run `{run}` first "
            f"({len(missing)} report file{'s' if len(missing) != 1 else ''} missing, e.g. {missing[0]})"
        )
