"""docs/cpp-differences.md against the code (issue 23), as docs/cli.md is checked: the C++
defaults against the C++ primbench's own results.json (the seed), primbench's against
`Settings`, every difference with a reason, the exit codes against `primbench.errors`, and
the claims that name a constant of the code."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from primbench import errors
from primbench.resultconfig import ABSENT
from primbench.results import CSV_HEADER, RESULTS_VERSION, upgrade
from primbench.settings import DEFAULT_NAMING, MODES, Settings, custom_flags

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "cpp-differences.md").read_text(encoding="utf-8")
SEED = json.loads((ROOT / "tests" / "formats" / "cpp-4.0.0-seed.json").read_text())
CPP_SETTINGS: dict[str, Any] = SEED["context"]["settings"]


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", DOC, re.M | re.S)
    assert match, f"docs/cpp-differences.md has no section {title!r}"
    return match.group(1)


def _table(title: str) -> list[list[str]]:
    rows = [line for line in _section(title).splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[2:]]


def _shown(value: Any) -> str:
    if value is None:
        return "auto"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value == "":
        return "(none)"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _cpp_defaults() -> dict[str, Any]:
    """What the C++ primbench runs with: its results.json's settings, the cache it clears (the
    value results 4.0.0 files are read with) and one measurement (the 4.2.0 -> 4.3.0 step)."""
    rounds = upgrade(json.loads(json.dumps(SEED)), "4.0.0")["context"]["settings"]["rounds"]
    return {**CPP_SETTINGS, "cache_size": ABSENT["cache_size"], "rounds": rounds}


def test_the_defaults_table_holds_every_cpp_option_with_both_defaults_and_a_reason() -> None:
    rows = {row[0].strip("`"): row[1:] for row in _table("Defaults")}
    cpp = _cpp_defaults()
    ours = Settings()
    assert set(rows) == {"--" + k.replace("_", "-") for k in cpp}
    for key, cpp_value in cpp.items():
        shown_cpp, shown_ours, why = rows["--" + key.replace("_", "-")]
        assert shown_cpp == _shown(cpp_value), key
        assert shown_ours == _shown(getattr(ours, key)), key
        if shown_cpp == shown_ours:
            assert why == "same", key
        else:
            assert why != "same" and len(why) > 40, f"{key}: a different default needs its reason"


def test_the_options_primbench_adds_are_listed() -> None:
    match = re.search(r"Options primbench adds[^:]*:\n(.*?)\n\n", _section("Defaults"), re.S)
    assert match
    listed = set(re.findall(r"`(--[a-z-]+)`", match.group(1)))
    added = {"--" + f.name.replace("_", "-") for f in dataclasses.fields(Settings) if f.name not in CPP_SETTINGS}
    assert listed == added | {"--" + m for m in MODES} | {"--naming"}


def test_the_exit_codes_are_primbench_s() -> None:
    import signal

    codes = {int(row[0]) for row in _table("Exit codes")}
    assert codes == {errors.EXIT_OK, errors.EXIT_FAILED, errors.EXIT_USAGE, errors.EXIT_INTERNAL,
                     errors.EXIT_INTERRUPTED, 128 + signal.SIGTERM, 128 + signal.SIGHUP}
    assert all(len(row) == 4 and row[3] for row in _table("Exit codes"))


def test_the_claims_that_name_the_code_hold() -> None:
    assert f"primbench writes {RESULTS_VERSION}" in DOC
    assert CSV_HEADER[-1] == "gpu_seconds_per_call" and "appends a `gpu_seconds_per_call` column" in DOC
    assert DEFAULT_NAMING == "primbench" and "The default stays primbench's" in DOC
    assert set(custom_flags("my_opt")) == {"--my_opt", "--my-opt"} and "`--my_opt` and `--my-opt`" in DOC
    for title in ("Statistics", "Types and numbers", "Names and order", "Output", "Validation"):
        bullets = re.findall(r"^- \*\*(.+?)\*\*", _section(title), re.M)
        assert bullets, title
