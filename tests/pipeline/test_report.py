"""`snakemake --report` on the tiny config: the report of a finished `all`
shows every kind of figure with its caption, category and labels, a front
page, and every image loads in a real browser (headless Chromium); asked for
before `all` has run, it says in one line what to run, repeating the
--configfile given; a zip report (`--report report.zip`) shows every image
from its unpacked folder.

The finished tiny run of tests/conftest.py (tiny_run) and one HTML report are
shared by the checks; the zip test builds one more report.
"""

import copy
import html
import json
import re
import shutil
import subprocess
import zipfile

import pytest

from pipeline_util import TINY, snakemake, write_config

pytestmark = pytest.mark.skipif(
    not shutil.which("make") or not shutil.which("cc"),
    reason="needs make and a C compiler: apt-get install build-essential",
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="needs headless Chromium to load the report: apt-get install --no-install-recommends chromium "
    "(.ci/run installs it)",
)

# category -> subcategories of the tiny config's report (target host; the
# service mode's default point; ONNX Runtime by kind of output).  Exact: a
# figure kind that drops out of the report, or a new one, fails here.
CATEGORIES = {
    "Verdicts": {"host"},
    "Environment": {"host"},
    "Timelines": {"host"},
    "Speedup": {"host"},
    "Slowdown": {"host"},
    "Families": {"host"},
    "Perfetto traces": {"host"},
    "Evidence": {"host"},
    "Task graphs": {"host"},
    "Service mode": {"host/serve"},
    "ONNX Runtime": {"Timelines", "Perfetto traces"},
}
# 6 points: a timeline and a trace each; speedup, slowdown, family, the two
# evidence figures (overall and per point); 3 graph figures (one graph point),
# 3 service-mode figures; ONNX Runtime's timeline and trace at the 3 default
# points; the verdict and environment pages
N_RESULTS = 6 * 2 + 5 + 3 + 3 + 3 * 2 + 2

# Appended to a copy of the report: once the report has rendered, show every image
# result through the report's own image view (app.setView, what a click on a
# result does), wait for its <img> and record its natural size (0: broken),
# then write what the report's menu lists and the sizes into <pre id=hxcheck>.
CHECK_JS = """
function hxcheck() {
  // React renders the app after the load event: wait for it (it sets `app`)
  if (typeof app === "undefined" || !document.getElementById("app").innerText) {
    setTimeout(hxcheck, 25);
    return;
  }
  var paths = Object.keys(results).filter(function (p) { return results[p].mime_type.indexOf("image/") === 0; });
  var menu = document.getElementById("app").innerText, images = [];
  function finish() {
    var out = document.createElement("pre");
    out.id = "hxcheck";
    out.textContent = JSON.stringify({menu: menu, images: images});
    document.body.appendChild(out);
  }
  function show(i) {
    if (i === paths.length) { finish(); return; }
    var uri = results[paths[i]].data_uri, tries = 0;
    app.setView({content: "img", contentPath: uri, resultPath: paths[i]});
    (function wait() {
      var img = Array.prototype.find.call(document.querySelectorAll("#app img"), function (x) {
        return x.getAttribute("src") === uri;
      });
      if (img && img.complete) { images.push([paths[i], img.naturalWidth, img.naturalHeight]); show(i + 1); }
      else if (++tries > 200) { images.push([paths[i], -1, -1]); show(i + 1); }
      else setTimeout(wait, 25);
    })();
  }
  show(0);
}
window.addEventListener("load", hxcheck);
"""


def report_data(page: str) -> dict:
    """The report's embedded data: results, categories, the front page."""

    def var(script_id, name):
        m = re.search(rf'<script id="{script_id}">\s*var {name} = (.*?);\s*</script>', page, re.S)
        assert m, f"no {name} in the report"
        return json.loads(m.group(1))

    return {
        "results": var("results", "results"),
        "categories": var("categories", "categories"),
        "front": var("workflow-desc", "workflow_desc"),
    }


@pytest.fixture(scope="module")
def report(tiny_run):
    wd = tiny_run
    res = snakemake(wd, "--report", "report.html")
    assert res.returncode == 0, res.stderr[-4000:]
    page = (wd / "report.html").read_text()
    return {"dir": wd, "page": page, **report_data(page)}


def test_report_before_all_says_what_to_run(tmp_path):
    write_config(tmp_path, copy.deepcopy(TINY))
    res = snakemake(tmp_path, "--report", "report.html")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    lines = [line for line in out.splitlines() if line.startswith("hxfuse:")]
    assert len(lines) == 1, out
    # the command to run repeats the --configfile given (pipeline_util passes one)
    run = f"snakemake --cores 4 all --configfile {tmp_path / 'config.yaml'}"
    assert re.fullmatch(
        rf"hxfuse: run `{re.escape(run)}` first \(\d+ report files? missing, e\.g\. results/\S+\)", lines[0]
    ), lines[0]
    assert int(re.search(r"\((\d+) report", lines[0]).group(1)) == N_RESULTS
    assert "Traceback" not in out and "marked for report but does not exist" not in out
    assert not (tmp_path / "report.html").exists() and not (tmp_path / "results").exists()


def test_every_figure_kind_has_its_category_caption_and_labels(report):
    cats = {c: set(subs) for c, subs in report["categories"].items()}
    assert cats == CATEGORIES
    results = report["results"]
    assert len(results) == N_RESULTS, sorted(results)
    for path, r in results.items():
        assert len(re.sub(r"<[^>]+>", "", r["caption"]).strip()) > 80, f"{path}: no caption"
        # the PNG is in the report, its PDF twin (for the paper) is not
        assert not path.endswith(".pdf"), path
        if not path.endswith(".html"):
            assert r["labels"], f"{path}: no labels"
    # labels tell the results of one subcategory apart (the report keys its
    # table by them: two equal rows would hide one result)
    for cat, subs in report["categories"].items():
        for sub, paths in subs.items():
            rows = [tuple(sorted((results[p]["labels"] or {"file": p}).items())) for p in paths]
            assert len(set(rows)) == len(rows), (cat, sub)


def test_front_page_says_what_the_study_asks_and_how_to_read_it(report):
    front = html.unescape(re.sub(r"<[^>]+>", "", report["front"]))
    for text in (
        "The question.",
        "A existing serial",
        "D fused, internally concurrent",
        "Reading the verdict table",
        "m = 0.03",  # analysis.min_effect, from the config
        "Emulated, never performance.",
        "Target(s): host.",
        "tiny (tiny sweep).",
    ):
        assert text in front, text


def browser_check(page: str, tmp_path, where=None) -> dict:
    """What CHECK_JS saw of *page* in headless Chromium: {menu, images}.
    *where*: the folder the page is opened from (a zip report's results are
    files beside its page; default *tmp_path*)."""
    end = page.rindex("</body>")
    checked = (where or tmp_path) / "hxcheck.html"
    checked.write_text(page[:end] + "<script>" + CHECK_JS + "</script>" + page[end:])
    # --no-sandbox: CI and test containers run as root, where Chromium's
    # sandbox refuses to start; the page is this test's own file
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=60000",
        "--dump-dom",
        checked.as_uri(),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    m = re.search(r'<pre id="hxcheck">(.*?)</pre>', res.stdout, re.S)
    assert m, f"the check script did not finish: {res.stderr[-2000:]}"
    return json.loads(html.unescape(m.group(1)))


def broken_images(seen: dict) -> list[str]:
    return [p for p, w, h in seen["images"] if w <= 0 or h <= 0]


@needs_chromium
def test_every_image_loads_in_chromium(report, tmp_path):
    seen = browser_check(report["page"], tmp_path)
    for cat in CATEGORIES:
        assert cat in seen["menu"], f"{cat} not in the report's menu"
    images = [p for p, r in report["results"].items() if r["mime_type"].startswith("image/")]
    assert sorted(p for p, *_ in seen["images"]) == sorted(images)
    assert not broken_images(seen), f"images that do not load: {broken_images(seen)}"


@needs_chromium
def test_a_broken_image_is_caught(report, tmp_path):
    """Known answer: one figure's embedded PNG cut short is found broken,
    the others still load."""
    path = "results/host/figures/speedup_tiny.png"
    uri = report["results"][path]["data_uri"]
    assert uri.startswith("data:image/png;") and uri in report["page"]
    cut = uri[: uri.index("base64,") + 200]
    seen = browser_check(report["page"].replace(uri, cut, 1), tmp_path)
    assert broken_images(seen) == [path]


@needs_chromium
def test_the_zip_report_shows_every_image(tiny_run, report, tmp_path):
    """`--report report.zip`: the same results, each a file beside the page
    (not a data URI), and every image loads from the unpacked folder; with
    one image file removed (known answer) that one is found broken."""
    res = snakemake(tiny_run, "--report", "report.zip")
    assert res.returncode == 0, res.stderr[-4000:]
    with zipfile.ZipFile(tiny_run / "report.zip") as z:
        z.extractall(tmp_path / "unzipped")
    folder = tmp_path / "unzipped" / "report"
    page = (folder / "report.html").read_text()
    results = report_data(page)["results"]
    assert sorted(results) == sorted(report["results"])
    images = sorted(p for p, r in results.items() if r["mime_type"].startswith("image/"))
    for p in images:
        uri = results[p]["data_uri"]
        assert not uri.startswith("data:") and (folder / uri).is_file(), (p, uri)
    seen = browser_check(page, tmp_path, where=folder)
    assert sorted(p for p, *_ in seen["images"]) == images
    assert not broken_images(seen), f"images that do not load: {broken_images(seen)}"
    gone = "results/host/figures/speedup_tiny.png"
    (folder / results[gone]["data_uri"]).unlink()
    assert broken_images(browser_check(page, tmp_path, where=folder)) == [gone]
