"""`primbench compare` through the real CLI (typer's CliRunner): exit codes, formats, colours, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from primbench.cli import app
from tests.compare_data import document, spec, write

TB = 1.0e12
ANSI = "\x1b["


def files(tmp_path: Path, base: list[dict[str, Any]], head: list[dict[str, Any]],
          **head_kw: Any) -> tuple[str, str]:
    b = write(tmp_path / "base.json", document(base))
    h = write(tmp_path / "head.json", document(head, **head_kw))
    return str(b), str(h)


def invoke(*args: str, env: dict[str, str | None] | None = None) -> Any:
    env = {"NO_COLOR": None, "CLICOLOR_FORCE": None, **(env or {})}
    return CliRunner().invoke(app, ["compare", *args], env=env)


@pytest.fixture
def regression(tmp_path: Path) -> tuple[str, str]:
    return files(tmp_path, [spec("type: char", TB), spec("type: long long", TB)],
                 [spec("type: char", TB * 0.98), spec("type: long long", TB)])


@pytest.fixture
def same(tmp_path: Path) -> tuple[str, str]:
    return files(tmp_path, [spec("type: char", TB)], [spec("type: char", TB)])


def test_no_regression_exits_0(same: tuple[str, str]) -> None:
    r = invoke(*same)
    assert r.exit_code == 0, r.output
    assert "type: char" in r.stdout and "unchanged" in r.stdout
    assert "Summary: 0 regressions" in r.stdout


def test_regression_exits_1_and_shows_it(regression: tuple[str, str]) -> None:
    r = invoke(*regression)
    assert r.exit_code == 1
    line = next(ln for ln in r.stdout.splitlines() if "type: char" in ln)
    assert "regression" in line and "-2.00 %" in line
    assert "Summary: 1 regression," in r.stdout


@pytest.mark.parametrize(("fail_on", "code"), [("regression", 1), ("change", 1), ("never", 0)])
def test_fail_on_with_a_regression(regression: tuple[str, str], fail_on: str, code: int) -> None:
    assert invoke(*regression, "--fail-on", fail_on).exit_code == code


@pytest.mark.parametrize(("fail_on", "code"), [("regression", 0), ("change", 1), ("never", 0)])
def test_fail_on_with_an_improvement(tmp_path: Path, fail_on: str, code: int) -> None:
    b, h = files(tmp_path, [spec("a", TB)], [spec("a", TB * 1.05)])
    assert invoke(b, h, "--fail-on", fail_on).exit_code == code


def test_many_regressions_still_exit_1(tmp_path: Path) -> None:
    b, h = files(tmp_path, [spec(f"s{i}", TB) for i in range(5)], [spec(f"s{i}", TB * 0.9) for i in range(5)])
    assert invoke(b, h).exit_code == 1


def test_json_format_is_json_on_stdout_only(tmp_path: Path) -> None:
    b, h = files(tmp_path, [spec("a", TB)], [spec("a", TB * 0.97)], settings={"seed": 7})
    r = invoke(b, h, "--format", "json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["specializations"][0]["verdict"] == "regression"
    assert data["specializations"][0]["reason"]
    assert data["warnings"] == ["setting seed differs: base 42, head 7"]
    assert "warning: setting seed differs" in r.stderr


def test_markdown_is_a_github_table_with_a_summary(regression: tuple[str, str]) -> None:
    r = invoke(*regression, "--format", "markdown")
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert lines[:2] == ["<!-- primbench-compare -->", "### primbench compare"]  # the marker, hidden when rendered
    assert lines[3].startswith("**1 regression, 0 improvements, 1 unchanged")
    assert lines[5] == "Worst: 🔴 type: char -2.00 % (regression)"
    header = lines.index("| Specialization | Base | Head | Change | Detectable | Verdict | Why |")
    assert lines[header + 1] == "|---|---:|---:|---:|---:|---|---|"
    assert lines[header + 2].startswith("| type: char | 1") and "| 980.00 GB/s | -2.00 % | ±" in lines[header + 2]
    assert "regression" in lines[header + 2]
    assert ANSI not in r.stdout


def test_markdown_escapes_pipes_and_changed_only_hides_unchanged(tmp_path: Path) -> None:
    b, h = files(tmp_path, [spec("a|b", TB), spec("c", TB)], [spec("a|b", TB * 0.9), spec("c", TB)])
    r = invoke(b, h, "--format", "markdown", "--changed-only")
    assert "| a\\|b |" in r.stdout
    assert "| c |" not in r.stdout
    assert "1 unchanged specialization(s) not shown." in r.stdout


def test_colours_follow_no_color_and_clicolor_force(regression: tuple[str, str]) -> None:
    assert ANSI not in invoke(*regression).stdout  # not a terminal
    forced = invoke(*regression, env={"CLICOLOR_FORCE": "1"})
    assert ANSI in forced.stdout
    assert ANSI not in invoke(*regression, env={"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}).stdout


def test_warnings_are_shown_in_the_terminal(tmp_path: Path) -> None:
    b, h = files(tmp_path, [spec("a", TB)], [spec("a", TB)], gpu={"name": "NVIDIA H200", "uuid": "GPU-other"})
    r = invoke(b, h)
    assert r.exit_code == 0
    assert "warning: physical GPU (same model) differs: base GPU-0a1b2c3d, head GPU-other" in r.stdout


def test_a_file_on_both_sides_is_warned_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same results file as base and head (named two ways) compares to 0 everywhere: said, not a failure;
    two files of equal content are two runs, and say nothing."""
    b, h = files(tmp_path, [spec("a", TB)], [spec("a", TB)])
    monkeypatch.chdir(tmp_path)
    r = invoke(b, f"./{Path(b).name}")
    assert r.exit_code == 0, r.output
    assert (f"warning: base and head hold the same file ({Path(b).name}): each of its changes is 0 by "
            "construction; was one results file fetched for both sides?") in r.stdout
    assert "same file" not in invoke(b, h).stdout


@pytest.mark.parametrize(("text", "ok"), [("0.5%", True), ("0.005", True), ("2%", True), ("1", False),
                                          ("abc", False), ("0", False), ("-1%", False)])
def test_threshold_parsing(same: tuple[str, str], text: str, ok: bool) -> None:
    r = invoke(*same, "--threshold", text)
    assert r.exit_code == (0 if ok else 2), r.output
    if not ok:
        assert "--threshold" in r.output


def test_threshold_changes_the_verdict(regression: tuple[str, str]) -> None:
    assert invoke(*regression, "--threshold", "5%").exit_code == 0


@pytest.mark.parametrize("alpha", ["0", "1", "-0.1"])
def test_bad_alpha_is_a_usage_error(same: tuple[str, str], alpha: str) -> None:
    r = invoke(*same, "--alpha", alpha)
    assert r.exit_code == 2 and "--alpha" in r.output


def test_bad_input_exits_2_naming_file_and_field(tmp_path: Path, same: tuple[str, str]) -> None:
    doc = document([spec("a", TB)])
    doc["specializations"][0]["bytes_per_second"] = -5
    bad = write(tmp_path / "bad.json", doc)
    r = invoke(same[0], str(bad))
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.strip() == (f"primbench compare: error: {bad}: specializations[0].bytes_per_second: "
                                "must not be negative, got -5")


def test_missing_file_and_malformed_json_exit_2(tmp_path: Path, same: tuple[str, str]) -> None:
    r = invoke(same[0], str(tmp_path / "nope.json"))
    assert r.exit_code == 2 and "nope.json: no such file" in r.stderr
    (tmp_path / "m.json").write_text("{")
    r = invoke(same[0], str(tmp_path / "m.json"))
    assert r.exit_code == 2 and "m.json: not valid JSON" in r.stderr


def test_nothing_in_common_exits_2(tmp_path: Path) -> None:
    b, h = files(tmp_path, [spec("a", TB)], [spec("b", TB)])
    r = invoke(b, h)
    assert r.exit_code == 2
    assert "nothing to compare" in r.stderr


def test_unknown_option_values_exit_2(same: tuple[str, str]) -> None:
    assert invoke(*same, "--format", "xml").exit_code == 2
    assert invoke(*same, "--fail-on", "always").exit_code == 2
    assert invoke(same[0]).exit_code == 2


def test_directories_of_results(tmp_path: Path) -> None:
    for side, factor in (("base", 1.0), ("head", 0.97)):
        d = tmp_path / side
        d.mkdir()
        write(d / "copy.json", document([spec("type: char", TB)]))
        write(d / "reduce.json", document([spec("type: char", TB * factor, algo="reduce")], algorithm="reduce"))
    r = invoke(str(tmp_path / "base"), str(tmp_path / "head"), "--format", "json")
    assert r.exit_code == 1
    verdicts = {(s["algorithm"], s["verdict"]) for s in json.loads(r.stdout)["specializations"]}
    assert verdicts == {("copy", "unchanged"), ("reduce", "regression")}


def test_importing_primbench_and_its_cli_does_not_import_scipy_or_pandas() -> None:
    code = ("import sys, primbench, primbench.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('scipy', 'pandas')]; "
            "assert not bad, bad; assert 'compare' in [c.name for c in primbench.cli.app.registered_commands]")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_scipy_compare_names_the_extra_and_exits_2(same: tuple[str, str]) -> None:
    # a fresh interpreter in which `import scipy` fails, as on a GPU box with only the harness
    code = ("import sys; sys.modules['scipy'] = None; sys.argv = ['primbench', 'compare', *sys.argv[1:]]; "
            "from primbench.cli import main; main()")
    proc = subprocess.run([sys.executable, "-c", code, *same], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "needs the Python module 'scipy'" in proc.stderr
    assert "`pip install scipy`" in proc.stderr and "'primbench[" not in proc.stderr


def test_repeats_per_side_separated_by_double_dash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    from primbench.cli import main

    data = Path(__file__).parent / "benchmarks" / "rounds" / "data" / "1MiB"
    argv = ["primbench", "compare", "--format", "json", str(data / "aa-1.json"), str(data / "aa-2.json"), "--",
            str(data / "aa-3.json"), str(data / "aa-4.json")]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["base"]) == 2 and len(doc["head"]) == 2
    assert {s["observations"]["base"] for s in doc["specializations"]} == {6}


def test_three_paths_without_a_separator_is_a_usage_error(tmp_path: Path) -> None:
    data = Path(__file__).parent / "benchmarks" / "rounds" / "data" / "1MiB"
    r = invoke(str(data / "aa-1.json"), str(data / "aa-2.json"), str(data / "aa-3.json"))
    assert r.exit_code == 2 and "BASE1 BASE2 -- HEAD1 HEAD2" in r.stderr


def test_suite_shift_limit_is_an_option() -> None:
    data = Path(__file__).parent / "benchmarks" / "rounds" / "data" / "1MiB"
    r = invoke("--suite-shift-limit", "100%", "--format", "json", str(data / "aa-1.json"), str(data / "aa-2.json"))
    assert r.exit_code == 0 and json.loads(r.stdout)["method"]["suite_shift_limit"] == 1.0


# --------------------------------------------------------------------------- issue 22: several outputs, a PR comment


def test_one_run_writes_markdown_json_and_the_terminal(tmp_path: Path) -> None:
    b, h = files(tmp_path, [spec("a", TB), spec("b", TB)], [spec("a", TB * 0.97), spec("b", TB)])
    md, js = tmp_path / "c.md", tmp_path / "c.json"
    r = invoke(b, h, "--markdown", str(md), "--json", str(js))
    assert r.exit_code == 1
    assert "Specialization" in r.stdout and "Summary: 1 regression" in r.stdout  # the terminal table
    text = md.read_text()
    assert text.startswith("<!-- primbench-compare -->\n### primbench compare\n\n**1 regression")
    assert "Worst: 🔴 a -3.00 % (regression)" in text.splitlines()[5]  # a short head: counts, then the worst rows
    assert json.loads(js.read_text())["summary"]["counts"]["regression"] == 1


def test_a_dash_is_standard_output(tmp_path: Path) -> None:
    b, h = files(tmp_path, [spec("a", TB)], [spec("a", TB * 0.97)])
    md = tmp_path / "c.md"
    r = invoke(b, h, "--json", "-", "--markdown", str(md))
    assert r.exit_code == 1
    assert json.loads(r.stdout)["summary"]["counts"]["regression"] == 1  # only the JSON on stdout
    assert md.read_text().startswith("<!-- primbench-compare -->")
    r = invoke(b, h, "--json", "-", "--markdown", "-")
    assert r.exit_code == 2 and "only one of --markdown and --json can be -" in r.output


def test_an_unwritable_output_is_exit_2_before_comparing(tmp_path: Path) -> None:
    b, h = files(tmp_path, [spec("a", TB)], [spec("a", TB)])
    r = invoke(b, h, "--markdown", str(Path(b) / "c.md"))  # under a regular file
    assert r.exit_code == 2 and "--markdown" in r.output and "cannot write there" in r.output


def test_the_seeds_cpp_file_fails_ci_on_a_5_percent_drop_and_passes_against_a_rerun(tmp_path: Path) -> None:
    """The seed's C++ primbench example (results 4.0.0, no rounds): a rerun 0.2 % apart exits 0;
    the same file with every throughput 5 % lower exits 1, each row a regression judged on the
    measured prior of a whole run (128 MiB: the largest size class)."""
    seed = json.loads((Path(__file__).parent / "formats" / "cpp-4.0.0-seed.json").read_text())

    def scaled(factor: float, name: str) -> str:
        doc = json.loads(json.dumps(seed))
        for s in doc["specializations"]:
            s["bytes_per_second"] *= factor
            s["items_per_second"] *= factor
        return str(write(tmp_path / name, doc))

    base = scaled(1.0, "base.json")
    rerun = invoke(base, scaled(1.002, "rerun.json"), "--format", "json")
    assert rerun.exit_code == 0, rerun.output
    drop = invoke(base, scaled(0.95, "drop.json"), "--format", "json")
    assert drop.exit_code == 1, drop.output
    rows = json.loads(drop.stdout)["specializations"]
    assert [r["verdict"] for r in rows] == ["regression"] * len(seed["specializations"])
    assert all(r["run_to_run_source"].startswith("no rounds:") for r in rows)
