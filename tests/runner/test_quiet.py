"""Measure, don't veto: the run job waits for a quiet machine (bounded) and
runs a replicate again when the runner's own samples saw other work, up to
run.max_reruns times, recording every attempt (hxfuse.runner.quiet,
hxfuse.runner.runpoint)."""

import json
import math
import sys
import textwrap
from pathlib import Path

from hxfuse.analysis import environment
from hxfuse.runner import quiet
from hxfuse.runner.runpoint import run_point


LIMIT = environment.BUSY_PER_CORE


def test_the_run_rule_hands_the_analysis_limit_over():
    rules = Path(__file__).resolve().parents[2] / "workflow" / "rules" / "sweep.smk"
    assert "busy_per_core=str(hxenv.BUSY_PER_CORE)" in rules.read_text()
    assert "max_steal_share=str(hxenv.MAX_STEAL_SHARE)" in rules.read_text()
    script = rules.parents[1] / "scripts" / "run_point.py"
    assert 'max_steal_share=float(s) if (s := sm.resources.get("max_steal_share"))' in script.read_text()


def test_wait_quiet_stops_when_quiet_and_is_bounded():
    t = [0.0]

    def clock():
        return t[0]

    def busy(seq):
        it = iter(seq)

        def sample():
            t[0] += 1.0
            return next(it)

        return sample

    got = quiet.wait_quiet(30, LIMIT, cores=2, sample=busy([1.5, 1.2, 0.3]), clock=clock)
    assert got["quiet"] is True and got["busy_cores"] == 0.3 and got["waited_s"] == 3.0
    t[0] = 0.0
    got = quiet.wait_quiet(4, LIMIT, cores=2, sample=busy([1.5] * 10), clock=clock)
    assert got["quiet"] is False and got["waited_s"] == 4.0
    got = quiet.wait_quiet(4, LIMIT, cores=2, sample=lambda: math.nan, clock=clock)
    assert got["quiet"] is None


def test_busy_cores_reads_proc_stat(tmp_path):
    assert math.isnan(quiet.busy_cores(0.0, stat=str(tmp_path / "none")))
    v = quiet.busy_cores(0.05)
    assert math.isnan(v) or v >= 0


FAKE = """\
#!{python}
# a runner stand-in: the first {loaded} invocations see other work before
import json, sys
from pathlib import Path
# this checkout's package, whatever the interpreter has installed (an
# editable install may point at another checkout, or none)
sys.path.insert(0, {repo!r})
from hxfuse.runner.integrity import fnv1a64
out = Path(sys.argv[sys.argv.index("--out") + 1])
count = Path({count!r})
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
busy = {busy} if n < {loaded} else 0.0
steal = {steal} if n < {loaded} else 0.0
recs = [{{"record": "meta", "online_cores": 2, "other_busy_cores_before": busy, "invocation": n}}]
head = "".join(json.dumps(r) + "\\n" for r in recs).encode()
end = {{"record": "end", "status": "ok", "trials": 0, "records": 1, "digest": f"fnv1a64:{{fnv1a64(head):016x}}",
        "other_busy_cores_after": 0.0, "steal_share": steal}}
out.write_bytes(head + (json.dumps(end) + "\\n").encode())
"""


def _run(tmp_path, loaded, max_reruns, busy=1.5, steal=0.0):
    runner = tmp_path / "fake_runner"
    repo = str(Path(__file__).resolve().parents[2])
    count = str(tmp_path / "count")
    fake = FAKE.format(python=sys.executable, repo=repo, loaded=loaded, busy=busy, steal=steal, count=count)
    runner.write_text(fake)
    runner.chmod(0o755)
    point = {"target": "host", "sweep": "s", "workload": "mv", "point": "p", "replicate": 0, "x": 1, "params": {}}
    out = tmp_path / "rep0.jsonl"
    rc = run_point(
        str(runner),
        [],
        "",
        60,
        {},
        point,
        str(out),
        str(tmp_path / "rep0.provenance.json"),
        str(tmp_path / "npy"),
        str(tmp_path / "log"),
        max_reruns=max_reruns,
        busy_per_core=LIMIT,
        max_steal_share=environment.MAX_STEAL_SHARE,
    )
    return rc, out, json.loads((tmp_path / "rep0.provenance.json").read_text())


def test_disturbed_replicate_is_run_again_and_every_attempt_recorded(tmp_path):
    rc, out, prov = _run(tmp_path, loaded=2, max_reruns=3)
    assert rc == 0
    assert prov["reruns"] == 2 and [a["attempt"] for a in prov["attempts"]] == [1, 2, 3]
    assert prov["attempts"][0]["disturbed"] == ["loaded before (other processes kept 1.50 cores busy > 0.50)"]
    assert prov["attempts"][-1]["disturbed"] == []
    # the kept output is the clean third invocation
    assert json.loads(out.read_text().splitlines()[0])["invocation"] == 2
    assert "running the replicate again" in (tmp_path / "log").read_text()


def test_reruns_are_bounded_and_the_last_attempt_kept(tmp_path):
    rc, out, prov = _run(tmp_path, loaded=5, max_reruns=1)
    assert rc == 0 and prov["reruns"] == 1
    assert all(a["disturbed"] for a in prov["attempts"])
    assert "kept (config run.max_reruns reached)" in (tmp_path / "log").read_text()
    assert quiet.disturbance(out, LIMIT)  # the analysis will find it disturbed too


def test_a_replicate_whose_cores_the_hypervisor_took_is_run_again(tmp_path):
    # no other process, but 30% steal in the first invocation: the cores were
    # not the run's, so it is disturbed like a loaded one
    rc, out, prov = _run(tmp_path, loaded=1, max_reruns=2, busy=0.0, steal=0.3)
    assert rc == 0 and prov["reruns"] == 1
    assert prov["attempts"][0]["disturbed"] == ["the hypervisor took 30.0% of the cores during the run (steal > 5%)"]
    assert prov["attempts"][1]["disturbed"] == []


def test_steal_at_the_limit_is_not_a_disturbance(tmp_path):
    p = tmp_path / "r.jsonl"
    lim = environment.MAX_STEAL_SHARE
    for share, found in ((lim, False), (lim + 0.001, True), (None, False)):
        p.write_text(json.dumps({"record": "meta"}) + "\n" + json.dumps({"record": "end", "steal_share": share}) + "\n")
        assert bool(quiet.disturbance(p, LIMIT, lim)) is found, share
        assert quiet.disturbance(p, LIMIT) == []  # no limit handed over: steal is not judged


def test_without_reruns_one_attempt(tmp_path):
    rc, _, prov = _run(tmp_path, loaded=1, max_reruns=0)
    assert rc == 0 and prov["reruns"] == 0 and len(prov["attempts"]) == 1


def test_disturbance_of_a_file_without_samples(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(textwrap.dedent('{"record": "meta"}\n{"record": "end"}\n'))
    assert quiet.disturbance(p, LIMIT) == []
