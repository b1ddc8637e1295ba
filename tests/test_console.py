"""Colours of the run's progress output: on for a terminal only, NO_COLOR off, CLICOLOR_FORCE or FORCE_COLOR on."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

import primbench as pb
from primbench.console import Reporter, color_enabled, make_console
from primbench.results import Calls, Elapsed, Specialization, load_results
from tests.fakes import FakeDevice


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("env", "tty", "expected"),
    [
        ({}, False, False),
        ({}, True, True),
        ({"NO_COLOR": "1"}, True, False),
        ({"CLICOLOR_FORCE": "1"}, False, True),
        ({"CLICOLOR_FORCE": "0"}, False, False),
        ({"NO_COLOR": "1", "CLICOLOR_FORCE": "1"}, False, False),
        ({"FORCE_COLOR": "1"}, False, True),  # issue 15, item 10: https://force-color.org
        ({"FORCE_COLOR": ""}, False, False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
        ({"FORCE_COLOR": "0"}, True, False),  # issue 22: 0 means off
        ({"FORCE_COLOR": "false"}, True, False),
        ({"FORCE_COLOR": "0", "CLICOLOR_FORCE": "1"}, False, False),
        ({"CLICOLOR": "0"}, True, False),
        ({"CLICOLOR": "1"}, True, True),
        ({"CLICOLOR": "0", "FORCE_COLOR": "1"}, False, True),
    ],
)
def test_color_rules(env, tty, expected):
    stream = _Tty() if tty else io.StringIO()
    assert color_enabled(stream, env) is expected


class Copy(pb.Benchmark):
    def meta(self):
        return {"algo": "copy", "type": "char"}

    def run(self, state):
        pb.log("Generating input data")
        state.set_items(1000)
        state.add_reads(np.int8, 1000)
        state.run(state.device.launch)


def _run(tmp_path, monkeypatch, *args: str, **env) -> str:
    monkeypatch.delenv("NO_COLOR", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out = io.StringIO()
    ex = pb.Executor(["--json-out", str(tmp_path / "r.json"), "--min-secs", "0", *args], device=FakeDevice(),
                     reporter=Reporter(make_console(out)))
    ex.queue(Copy())
    ex.run()
    return out.getvalue()


def test_progress_is_plain_when_not_a_terminal(tmp_path, monkeypatch):
    monkeypatch.delenv("PRIMBENCH_LOG", raising=False)
    text = _run(tmp_path, monkeypatch)
    assert "\x1b[" not in text
    assert "ok    [1/1] type: char" in text
    assert "Generating input data" not in text  # pb.log writes nothing to a pipe, as the C++ log() (issue 23)
    assert "Summary: 1 run, 0 failed, 0 noise timeouts" in text
    asked = _run(tmp_path, monkeypatch, PRIMBENCH_LOG="1")
    assert "  Generating input data\n" in asked


def test_clicolor_force_colours_a_pipe(tmp_path, monkeypatch):
    text = _run(tmp_path, monkeypatch, CLICOLOR_FORCE="1")
    assert "\x1b[" in text


def test_no_color_wins_over_clicolor_force(tmp_path, monkeypatch):
    text = _run(tmp_path, monkeypatch, CLICOLOR_FORCE="1", NO_COLOR="1")
    assert "\x1b[" not in text


def test_warming_rounds_eta_temperature_and_time_per_call_are_shown(tmp_path, monkeypatch):
    text = _run(tmp_path, monkeypatch, "--min-gpu-temp", "50")
    assert "warming from 40 °C to 50 °C" in text and "warmed to 50 °C in " in text
    assert "round 1/10" in text and "round 2/10 (about " in text and " s left)" in text
    final = next(line for line in text.splitlines() if line.startswith("ok    [1/1]"))
    assert "/call" in final and "50 °C" in final and "between rounds" in final


def test_noise_above_tolerance_is_red(tmp_path, monkeypatch):
    monkeypatch.setenv("CLICOLOR_FORCE", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = io.StringIO()
    reporter = Reporter(make_console(out))
    reporter.header("copy", 1, False, noise_tolerance_percent=1.0)
    record = Specialization(
        index=0, name="type: [bold]x", bytes_per_second=1e9, items_per_second=1e9, bytes_per_item=1, items=10,
        noise_timeout=True, noise_percent=2.5, meta={"algo": "copy"}, elapsed_secs=Elapsed(host=1.0, gpu=0.001),
        calls=Calls(kernel_calls=10, kernel_calls_per_batch=10, batches=1))
    reporter.finished(0, 1, record)
    text = out.getvalue()
    assert "\x1b[31mnoise 2.500%" in text
    assert "type: [bold]x" in text  # a name's brackets are text, not markup


def test_a_log_message_is_transient_on_a_terminal(tmp_path, monkeypatch):
    """As the C++ primbench's log(): on the progress line, replaced by the next (issue 23)."""
    monkeypatch.delenv("PRIMBENCH_LOG", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("CLICOLOR_FORCE", "1")
    out = io.StringIO()
    reporter = Reporter(make_console(out))
    reporter.log("Generating input data")
    assert "Generating input data" in str(reporter._status.renderable.text)
    reporter.log("Compiling")  # replaces it
    assert "Compiling" in str(reporter._status.renderable.text)
    reporter.started(0, 1, "type: char")  # the specialization's own line takes over
    reporter.finished(0, 1, load_results(_seed()).specializations[0])
    assert "  Generating input data\n" not in out.getvalue() and "  Compiling\n" not in out.getvalue()
    text = _run(tmp_path, monkeypatch, CLICOLOR_FORCE="1")
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    assert "  Generating input data\n" not in plain
    assert plain.rstrip().splitlines()[-2].startswith("Summary: 1 run")


def _seed():
    from pathlib import Path

    return Path(__file__).parent / "formats" / "cpp-4.0.0-seed.json"
