"""Every text a results document renders to, through the command line: `report --from` (report.md,
report.html's text and tables, every CSV) and each command's `--format csv/md/json` on the sections
it shows. tests/data/golden/ holds them as rendered before the report's sections became records;
test_report_golden.py renders them again and compares.

    python tests/golden.py     # writes tests/data/golden/ (only to record a deliberate change)
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).parent
DATA = HERE / "data"
GOLDEN = DATA / "golden"

# the recorded documents, and those frozen in golden/ (a spec-only report; the levels report with a
# size sweep, a traced program and measured tensor roofs added, so that every section is in one document)
DOCS = {
    "h200_report": DATA / "h200_report.json",
    "h200_report_levels": DATA / "h200_report_levels.json",
    "h200_results": DATA / "h200_results.json",
    "h200_bandwidth_4gib": DATA / "h200_bandwidth_4gib.json",
    "spec_only": GOLDEN / "spec_only.json",
    "everything": GOLDEN / "everything.json",
}

# command -> the document section it shows (it runs only on a document that has it)
MEASURING = {"gemm": "gemm", "bandwidth": "bandwidth", "flops": "flops", "profile": "profile", "memory": "memory"}
FORMATS = ("csv", "md", "json")


class _Text(HTMLParser):
    """report.html as text: one line per block (headings, paragraphs, list items, captions, notes) and
    each table as tab-separated rows; scripts and styles left out."""

    BLOCKS = {"h1", "h2", "h3", "h4", "p", "li", "caption", "blockquote", "tr", "nav", "a", "title"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.cur: list[str] = []
        self.skip = 0

    def _flush(self) -> None:
        line = "".join(self.cur).strip()
        if line:
            self.lines.append(line)
        self.cur = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in self.BLOCKS:
            self._flush()
        elif tag in ("td", "th") and self.cur:
            self.cur.append("\t")
        elif tag == "img":
            self._flush()
            self.lines.append(f"[img {dict(attrs).get('src')}]")
        elif tag == "div" and dict(attrs).get("class") == "figure":
            self._flush()
            self.lines.append(f"[figure {dict(attrs).get('data-kind')}]")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip -= 1
        elif tag in self.BLOCKS:
            self._flush()

    def handle_data(self, data):
        if not self.skip:
            self.cur.append(data)


def html_text(page: str) -> str:
    p = _Text()
    p.feed(page)
    p._flush()
    return "\n".join(p.lines) + "\n"


def _invoke(args: list[str]) -> tuple[int, str]:
    from click.testing import CliRunner

    from rooflab.cli import cli

    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    return r.exit_code, r.stdout


def _shown(code: int, text: str, fmt: str) -> str:
    """A command's exit code and output; JSON (the document itself) as its digest."""
    if fmt == "json":
        text = f"sha256 {hashlib.sha256(text.encode()).hexdigest()} {len(text)}\n"
    return f"exit {code}\n{text}"


def render(doc_path: Path) -> dict[str, str]:
    """Every output of one document, by a file name under golden/<doc>/."""
    from rooflab import lab

    doc = json.loads(doc_path.read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        rep = Path(tmp) / "rep"
        code, _ = _invoke(["report", "--from", str(doc_path), "--out", str(rep)])
        assert code == 0, code
        files = sorted(p.name for p in rep.iterdir() if not p.name.startswith("."))
        out["files.txt"] = "\n".join(f for f in files if f != ".rooflab-manifest.json") + "\n"
        out["report.md"] = (rep / "report.md").read_text(encoding="utf-8")
        if (rep / "report.html").exists():
            out["report.html.txt"] = html_text((rep / "report.html").read_text(encoding="utf-8"))
        for f in files:
            if f.endswith(".csv"):
                out[f"csv/{f}"] = (rep / f).read_text(encoding="utf-8")
    for fmt in FORMATS:
        with tempfile.TemporaryDirectory() as tmp:
            code, text = _invoke(["roofline", "--from", str(doc_path), "--format", fmt,
                                  "--out", str(Path(tmp) / "roofline.png")])
            out[f"format/roofline.{fmt}"] = _shown(code, text, fmt)
            if doc.get("sweep"):
                code, text = _invoke(["sweep", "--from", str(doc_path), "--format", fmt, "--out", str(Path(tmp) / "sw")])
                out[f"format/sweep.{fmt}"] = _shown(code, text, fmt)
    import pytest

    with pytest.MonkeyPatch.context() as mp:  # the measuring commands, on the recorded document
        mp.setattr(lab, "measure", lambda sections, **kw: copy.deepcopy(doc))
        for command, key in MEASURING.items():
            if not doc.get(key) or doc["device"].get("spec_only"):
                continue
            for fmt in FORMATS:
                code, text = _invoke([command, "--format", fmt])
                out[f"format/{command}.{fmt}"] = _shown(code, text, fmt)
    if doc.get("gemm") or doc.get("bench"):  # what `rooflab bench` shows of a document
        from rooflab.cli.output import emit
        from rooflab.report import bench

        for fmt in ("csv", "md"):
            with tempfile.TemporaryDirectory() as tmp:
                emit(doc, bench.tables(doc), [], fmt, str(Path(tmp) / "out"))
                out[f"format/bench.{fmt}"] = (Path(tmp) / "out").read_text(encoding="utf-8")
    return out


def frozen_docs() -> None:
    """golden/spec_only.json and golden/everything.json, from the code of the day they were recorded."""
    sys.path.insert(0, str(HERE))
    from test_report_trace import doc as trace_doc
    from test_sweep import sweep_doc

    from rooflab import lab, results

    spec = lab.spec_only("h200")
    spec["created"], spec["command"] = "2026-12-01T00:00:00+00:00", "rooflab report --gpu h200"
    levels = results.load(DATA / "h200_report_levels.json")
    levels["sweep"] = sweep_doc(sizes=[256, 1024], copy_sizes=[2**20, 2**24])["sweep"]
    levels["trace"] = trace_doc.__wrapped__()["trace"]
    levels["flops"]["tensor"] = [  # constructed: no recorded document measured the tensor roofs
        {"kernel": "wgmma_peak_bf16", "unit": "wgmma", "precision": "bf16", "tflops": 947.0, "sm_mhz": 1980.0,
         "flop_per_sm_cycle": 947e12 / (132 * 1980e6), "verified": True},
        {"kernel": "mma_peak_tf32", "unit": "mma.sync", "precision": "tf32", "skipped": "mma.sync TF32 needs sm_80"}]
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name, d in (("spec_only", spec), ("everything", levels)):
        (GOLDEN / f"{name}.json").write_text(results.dumps(d), encoding="utf-8")


def main() -> None:
    sys.path.insert(0, str(HERE.parent / "src"))
    if not (GOLDEN / "everything.json").exists():
        frozen_docs()
    for name, path in DOCS.items():
        for rel, text in render(path).items():
            p = GOLDEN / name / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        print(name, "done")


if __name__ == "__main__":
    main()
