import json

import pytest

from hxfuse.runner.records import IncompleteRunError, parse_records, read_run


def test_read_run_tables(tmp_path, synth):
    recs = synth.synthetic_run(rounds=3, warmup=1)
    run = read_run(synth.write_jsonl(tmp_path / "r.jsonl", recs))
    n_trials = sum(r["record"] == "trial" for r in recs)
    assert len(run.trials) == n_trials
    assert run.trials["trial_id"].tolist() == list(range(n_trials))
    assert run.meta["online_cores"] == 4
    assert run.end["status"] == "ok"
    assert len(run.verify) == 1
    # Flattened host/device fields; device null in A/B becomes NaN.
    a = run.trials[run.trials["group"] == "A"].iloc[0]
    d = run.trials[run.trials["group"] == "D"].iloc[0]
    assert a["device_entry_begin"] != a["device_entry_begin"]
    assert d["device_entry_end"] > d["device_entry_begin"]
    assert (run.trials["makespan_ns"] == run.trials["host_wait_end"] - run.trials["host_submit_begin"]).all()
    # Tasks join back on trial_id and carry the trial keys.
    assert set(run.tasks["trial_id"]) <= set(run.trials["trial_id"])
    mvd_d = run.tasks[(run.tasks["workload"] == "mvd") & (run.tasks["group"] == "D")]
    assert set(mvd_d["task"]) == {"M", "V", "D"}
    assert set(run.waits.columns) >= {"trial_id", "who", "on", "begin", "end"}
    assert run.trials["warmup"].sum() > 0


def test_missing_end_is_incomplete(tmp_path, synth):
    recs = synth.synthetic_run(rounds=1, warmup=0)[:-1]
    p = synth.write_jsonl(tmp_path / "cut.jsonl", recs)
    with pytest.raises(IncompleteRunError, match="cut.jsonl.*no 'end' record"):
        read_run(p)


def test_malformed_line_names_file_and_line(tmp_path, synth):
    recs = synth.synthetic_run(rounds=1, warmup=0)
    lines = [json.dumps(r) for r in recs]
    lines[2] = lines[2][: len(lines[2]) // 2]  # a write cut in the middle
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(IncompleteRunError, match=r"bad\.jsonl:3: malformed JSON"):
        read_run(p)


def test_bad_structure(synth):
    with pytest.raises(IncompleteRunError, match="empty"):
        parse_records([], source="x")
    with pytest.raises(IncompleteRunError, match="x:1: first record"):
        parse_records([json.dumps(synth.end_record(0))], source="x")
    with pytest.raises(IncompleteRunError, match="x:2: not a runner record"):
        parse_records([json.dumps(synth.meta_record()), "[1, 2]"], source="x")
    trial = synth.trial_record(
        round=0, workload="M", group="alone", tasks=[("M", "mx", 10, 20)], submit=(0, 5), wait=(5, 30)
    )
    del trial["host"]
    with pytest.raises(IncompleteRunError, match="x:2: malformed trial record"):
        parse_records([json.dumps(synth.meta_record()), json.dumps(trial), json.dumps(synth.end_record(1))], source="x")
    with pytest.raises(IncompleteRunError, match="after the 'end'"):
        parse_records(
            [json.dumps(synth.meta_record()), json.dumps(synth.end_record(0)), json.dumps(synth.end_record(0))],
            source="x",
        )


def test_run_without_trials_has_typed_empty_tables(synth):
    run = parse_records([json.dumps(synth.meta_record()), json.dumps(synth.end_record(0))])
    assert run.trials.empty and run.tasks.empty and run.waits.empty
    assert "trial_id" in run.tasks.columns
