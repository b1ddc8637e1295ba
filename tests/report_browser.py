"""The HTML report in a real browser: Playwright (pip) driving Debian's Chromium
(``apt-get install chromium``; Playwright's own browser download needs its CDN, which the CI
machines cannot reach). `tests/test_report_browser.py` uses it;
``python -m tests.report_browser`` writes the screenshots of docs/img/ from the committed H200
history (examples/results/h200/history)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
HISTORY = REPO / "examples" / "results" / "h200" / "history"
CHROMIUM = os.environ.get("PRIMBENCH_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
BIN = Path(sys.executable).parent


def unavailable() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install playwright); .ci/run installs it"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium); .ci/run installs it"
    return None


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def primbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("PRIMBENCH_HISTORY_DB", None)
    return subprocess.run([str(BIN / "primbench"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def h200_store(tmp: Path, branch_runs: int = 0) -> Path:
    """The committed H200 history in a DuckDB file under `tmp`; with `branch_runs`, a branch
    ``feature/slower`` of that many commits after main's last, its copy 3 % slower (made from
    main's last run, rounds and all)."""
    db = tmp / "history.duckdb"
    files = [str(HISTORY)]
    if branch_runs:
        last = sorted(HISTORY.glob("copy-1mib-ac43a54-*.json"))
        out = tmp / "branch"
        out.mkdir(exist_ok=True)
        for i in range(branch_runs):
            for j, src in enumerate(last):
                doc = json.loads(src.read_text())
                general = doc["context"]["general"]
                general["branch_name"] = "feature/slower"
                general["commit_hash"] = f"{i + 1:x}" * 40
                general["date"] = f"2026-11-30T05:{10 + i:02d}:{j:02d}+00:00"
                for spec in doc["specializations"]:
                    for key in ("bytes_per_second", "items_per_second"):
                        if spec.get(key):
                            spec[key] *= 0.97
                    for r in spec.get("rounds") or []:
                        for key in ("bytes_per_second", "items_per_second"):
                            if r.get(key):
                                r[key] *= 0.97
                (out / f"feature-{i}-{j}.json").write_text(json.dumps(doc))
        files.append(str(out))
    done = primbench("history", "ingest", *files, "--db", str(db), cwd=tmp)
    assert done.returncode == 0, done.stderr
    return db


def report(db: Path, out: Path, branch: str = "main") -> Path:
    done = primbench("history", "report", "--branch", branch, "--db", str(db), "-o", str(out), "--no-git",
                     cwd=out.parent)
    assert done.returncode == 0, done.stderr
    return out


def open_page(b: Any, path: Path, width: int = 1200) -> tuple[Any, list[str]]:
    """The report in a new page (HiDPI: 2 device pixels a CSS pixel) and the console errors it logs."""
    page = b.new_page(device_scale_factor=2, viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, errors


#: How many non-white pixels each chart's canvas has (a chart drawn empty has only its axes).
INKED = """() => Array.from(document.querySelectorAll('.chart canvas')).map(c => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200)) n++;
  return n; })"""


def screenshots(target: Path = REPO / "docs" / "img") -> list[Path]:
    """docs/img/report-main.png (the top of main's report) and report-branch.png (a branch 3 %
    slower than main, main's level drawn beside it), from the committed H200 history."""
    import tempfile

    target.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp, browser() as b:
        db = h200_store(Path(tmp), branch_runs=3)
        for name, branch in (("report-main.png", "main"), ("report-branch.png", "feature/slower")):
            page, _ = open_page(b, report(db, Path(tmp) / f"{name}.html", branch), width=1000)
            page.screenshot(path=str(target / name), full_page=False, clip={"x": 0, "y": 0, "width": 1000,
                                                                             "height": 1100})
            written.append(target / name)
            page.close()
    return written


if __name__ == "__main__":
    why = unavailable()
    if why:
        sys.exit(why)
    for p in screenshots():
        print(f"Wrote {p.relative_to(REPO)} ({p.stat().st_size:,} bytes)")
    shutil.rmtree(REPO / ".pytest_cache", ignore_errors=True)
