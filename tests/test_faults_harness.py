"""Issue 29, the harness: an interrupted run never replaces or discards a more complete one
(completeness counted by rounds; signals deferred while the results are written; the atomic writer
keeps a whole temporary file), and output paths that would hang or cannot hold a file are refused
before anything is measured. Fake device throughout."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import primbench as pb
from primbench import atomicfile
from primbench.results import Results
from primbench.signals import Terminated
from tests.fakes import FakeDevice

pb.register_type(np.int8, "char")


class Kernel(pb.Benchmark):
    """Interrupts itself (a real signal to this process) at round `stop_round` of specialization `stop_at`."""

    def __init__(self, n: int, stop_at: int | None = None, stop_round: int = 1,
                 sig: int = signal.SIGINT) -> None:
        self.n, self.stop_at, self.stop_round, self.sig = n, stop_at, stop_round, sig

    def meta(self) -> dict[str, object]:
        return {"algo": "faults", "n": self.n}

    def run(self, state: pb.State) -> None:
        if self.n == self.stop_at and state.round_index == self.stop_round:
            os.kill(os.getpid(), self.sig)
        state.set_items(1000)
        state.run(state.device.launch)


def _executor(out: Path, count: int = 3, rounds: int = 3, **kernel: Any) -> pb.Executor:
    ex = pb.Executor(["--json-out", str(out), "--rounds", str(rounds), "--min-secs", "0"], device=FakeDevice(0.25))
    for n in range(count):
        ex.queue(Kernel(n, **kernel))
    return ex


def _names(path: Path) -> list[str]:
    return [s["name"] for s in json.loads(path.read_text())["specializations"]]


def test_ctrl_c_after_round_1_never_replaces_a_complete_results_file(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    _executor(out).run()
    complete = out.read_bytes()
    ex = _executor(out, stop_at=0, stop_round=1)  # every specialization finished round 1, none finished all 3
    with pytest.raises(KeyboardInterrupt):
        ex.run()
    assert out.read_bytes() == complete
    partial = tmp_path / "results.partial.json"
    assert _names(partial) == ["n: 0", "n: 1", "n: 2"]
    assert all(s["between_rounds"]["count"] == 1 for s in json.loads(partial.read_text())["specializations"])


def test_sigterm_after_round_1_never_replaces_a_complete_results_file_either(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    _executor(out).run()
    complete = out.read_bytes()
    ex = _executor(out, stop_at=1, stop_round=2, sig=signal.SIGTERM)
    with pytest.raises(Terminated):
        ex.run()
    assert out.read_bytes() == complete
    assert (tmp_path / "results.partial.json").exists()


def test_a_run_stopped_early_by_the_precision_stop_is_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from primbench import executor

    out = tmp_path / "results.json"
    _executor(out).run()
    before = out.read_bytes()
    monkeypatch.setattr(executor, "precise_enough", lambda values, planned: len(values) >= 2)
    _executor(out, rounds=6).run()
    assert out.read_bytes() != before  # replaced: a complete run
    assert all(s["between_rounds"]["count"] == 2 for s in json.loads(out.read_text())["specializations"])
    assert not (tmp_path / "results.partial.json").exists()


def _signal_during_save(monkeypatch: pytest.MonkeyPatch, sig: int = signal.SIGINT) -> list[int]:
    """Results.save sends `sig` to this process in the middle of writing results.json."""
    save = Results.save
    sent: list[int] = []

    def interrupted_save(self: Results, path: Any, spaces: int | None = 2) -> None:
        os.kill(os.getpid(), sig)
        sent.append(sig)
        text = self.dumps(spaces)  # work after the signal, where Python runs the handler
        assert text
        save(self, path, spaces)

    monkeypatch.setattr(Results, "save", interrupted_save)
    return sent


def test_ctrl_c_during_the_final_write_keeps_the_complete_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "results.json"
    sent = _signal_during_save(monkeypatch)
    ex = _executor(out)
    with pytest.raises(KeyboardInterrupt):
        ex.run()
    assert sent
    assert _names(out) == ["n: 0", "n: 1", "n: 2"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_ctrl_c_during_the_write_finishes_the_write_then_exits(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "results.json"
    sent = _signal_during_save(monkeypatch, signal.SIGTERM)
    ex = _executor(out, rounds=1, stop_at=2, stop_round=0)  # first Ctrl-C at the third specialization
    with pytest.raises(KeyboardInterrupt) as caught:
        ex.run()
    assert sent
    assert not isinstance(caught.value, Terminated)  # the first signal decides the exit code
    assert _names(out) == ["n: 0", "n: 1"]
    assert ex.exit_code == 130


def test_sigterm_during_the_final_write_keeps_the_complete_run_and_exits_143(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "results.json"
    _signal_during_save(monkeypatch, signal.SIGTERM)
    ex = _executor(out)
    with pytest.raises(Terminated) as caught:
        ex.run()
    assert caught.value.exit_code == 143
    assert _names(out) == ["n: 0", "n: 1", "n: 2"]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_the_atomic_writer_renames_a_whole_temporary_file_when_interrupted(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "r.json"
    target.write_text("old")
    real = os.replace
    calls: list[int] = []

    def interrupted_replace(src: Any, dst: Any) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt  # the signal landed between fsync and rename
        real(src, dst)

    monkeypatch.setattr(atomicfile.os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        atomicfile.write_atomic(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_the_atomic_writer_discards_a_temporary_file_interrupted_before_it_was_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "r.json"
    target.write_text("old")

    def interrupted_fsync(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomicfile.os, "fsync", interrupted_fsync)
    with pytest.raises(KeyboardInterrupt):
        atomicfile.write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


# ----- output paths that cannot hold a file, or would wait forever, are refused before measuring


def _refused(tmp_path: Path, out: str) -> str:
    device = FakeDevice(0.25)
    ex = pb.Executor(["--json-out", out, "--rounds", "1", "--min-secs", "0"], device=device)
    ex.queue(Kernel(0))
    with pytest.raises(pb.UsageError) as caught:
        ex.run()
    assert device.calls == 0 and device.prepared is None  # nothing was measured
    return str(caught.value)


def test_json_out_a_directory_is_refused_before_measuring(tmp_path: Path) -> None:
    assert "is a directory" in _refused(tmp_path, str(tmp_path))


def test_json_out_a_fifo_is_refused_before_measuring(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "FIFO" in _refused(tmp_path, str(fifo))


def test_json_out_a_socket_or_a_device_is_refused(tmp_path: Path) -> None:
    import socket

    sock_path = tmp_path / "s"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        assert "socket" in _refused(tmp_path, str(sock_path))
    finally:
        sock.close()
    assert "device" in _refused(tmp_path, "/dev/full")


def test_dev_null_and_standard_output_still_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for out in (os.devnull, "-"):
        capsys.readouterr()
        ex = pb.Executor(["--json-out", out, "--rounds", "1", "--min-secs", "0"], device=FakeDevice(0.25))
        ex.queue(Kernel(0))
        assert ex.run().exit_code == 0
    assert json.loads(capsys.readouterr().out)["specializations"][0]["name"] == "n: 0"


def test_the_writer_never_waits_on_a_fifo_without_a_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError):  # ENXIO at once (before: open() blocked forever)
        atomicfile.write_atomic(fifo, "{}")


class Skipping(Kernel):
    def run(self, state: pb.State) -> None:
        if self.n == 1:
            state.skip("not this one")
        super().run(state)


def test_a_run_with_a_skipped_specialization_is_complete(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    _executor(out).run()
    before = out.read_bytes()
    ex = pb.Executor(["--json-out", str(out), "--rounds", "3", "--min-secs", "0"], device=FakeDevice(0.25))
    for n in range(3):
        ex.queue(Skipping(n))
    assert ex.run().exit_code == 0
    assert out.read_bytes() != before and not (tmp_path / "results.partial.json").exists()
