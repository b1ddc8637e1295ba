"""The harness never loses measurements (issue 16, item 2): unwritable folders are found
before measuring, a failed final write goes to a fallback path, an unfinished run never
replaces a fuller results.json, files keep the umask and symlinks stay links.

Tests run as root, so a chmod'ed folder would not stop them: the unwritable places here are
a path under a regular file, /proc, and a file-size limit (RLIMIT_FSIZE) in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import primbench as pb
from primbench.console import Reporter, make_console
from primbench.results import load_results, write_atomic
from tests.fakes import FakeDevice
from tests.test_executor import Copy

ROOT = Path(__file__).resolve().parents[1]


class Counting(Copy):
    runs = 0

    def run(self, state: pb.State) -> None:
        Counting.runs += 1
        super().run(state)


def make(json_out: Path | str, *args: str) -> pb.Executor:
    argv = ["--json-out", str(json_out), "--min-secs", "0", *args]
    return pb.Executor(argv, device=FakeDevice(0.25), reporter=Reporter(make_console()))


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_an_unwritable_output_folder_fails_before_anything_is_measured(tmp_path, capsys, where):
    if where == "under-a-file":
        (tmp_path / "file").write_text("x")
        out = tmp_path / "file" / "results.json"
    else:
        out = Path("/proc/primbench-no-such/results.json")
    Counting.runs = 0
    ex = make(out)
    ex.queue(Counting(np.int8))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "--json-out" in err and "nothing was measured" in err and "\n" not in err
    assert Counting.runs == 0


def test_an_unwritable_csv_path_fails_early_too(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    ex = make(tmp_path / "r.json", "--csv-out", str(tmp_path / "file" / "r.csv"))
    ex.queue(Copy(np.int8))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 2
    assert "--csv-out" in capsys.readouterr().err


def test_a_missing_parent_folder_is_created(tmp_path):
    out = tmp_path / "a" / "b" / "results.json"
    ex = make(out)
    ex.queue(Copy(np.int8))
    ex.run()
    assert len(load_results(out).specializations) == 1


def test_a_final_write_that_fails_goes_to_a_fallback_named_in_one_line(tmp_path, capsys):
    folder = tmp_path / "out"
    folder.mkdir()

    class Sabotage(Copy):
        def run(self, state: pb.State) -> None:  # the folder turns into a file while measuring
            if folder.is_dir():  # once: run() is called again for every round
                shutil.rmtree(folder)
                folder.write_text("not a folder any more")
            super().run(state)

    ex = make(folder / "results.json")
    ex.queue(Sabotage(np.int8))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert "the results are in " in err
    fallback = Path(err.split("the results are in ", 1)[1].split(";")[0].strip())
    try:
        results = load_results(fallback)
        assert [s.name for s in results.specializations] == ["type: char"]
        assert results.specializations[0].bytes_per_second > 0
    finally:
        fallback.unlink(missing_ok=True)


_LIMITED = textwrap.dedent("""
    import resource, sys
    import numpy as np
    import primbench as pb
    from tests.fakes import FakeDevice
    from tests.test_executor import Copy
    limit = int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    ex = pb.Executor(["--json-out", sys.argv[1], "--min-secs", "0"], device=FakeDevice(0.25))
    ex.queue(Copy(np.int8))
    ex.main()
""")


def test_a_file_size_limit_is_a_one_line_error_not_a_traceback(tmp_path):
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-c", _LIMITED, str(out), "600"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1",
                                                      "TMPDIR": str(tmp_path)})
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "File too large" in errors[0], proc.stderr
    assert not out.exists()


def test_an_interrupted_run_never_replaces_a_complete_results_file(tmp_path):
    out = tmp_path / "results.json"
    ex = make(out)
    ex.queue(Copy(np.int8))
    ex.queue(Copy(np.int64))
    ex.run()
    before = out.read_bytes()

    class Interrupted(Copy):
        def run(self, state: pb.State) -> None:
            raise KeyboardInterrupt

    ex = make(out)
    ex.queue(Interrupted(np.int8))
    ex.queue(Copy(np.int64))
    with pytest.raises(SystemExit) as exit_info:
        ex.main()
    assert exit_info.value.code == 130
    assert out.read_bytes() == before
    partial = tmp_path / "results.partial.json"
    assert load_results(partial).specializations == ()


def test_a_complete_run_replaces_the_file_as_before(tmp_path):
    out = tmp_path / "results.json"
    for _ in range(2):
        ex = make(out)
        ex.queue(Copy(np.int8))
        ex.run()
    assert not (tmp_path / "results.partial.json").exists()


def test_files_keep_the_umask_and_an_existing_mode(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.json", "{}")
        assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644
        os.umask(0o027)
        write_atomic(tmp_path / "other.json", "{}")
        assert stat.S_IMODE((tmp_path / "other.json").stat().st_mode) == 0o640
        (tmp_path / "new.json").chmod(0o664)
        write_atomic(tmp_path / "new.json", "[]")
        assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o664
    finally:
        os.umask(old)


def test_results_and_csv_are_written_through_symlinks(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "r.json").write_text("{}")
    (tmp_path / "r.json").symlink_to(real / "r.json")
    (tmp_path / "r.csv").symlink_to(real / "r.csv")  # dangling: its target is created
    ex = make(tmp_path / "r.json", "--csv-out", str(tmp_path / "r.csv"))
    ex.queue(Copy(np.int8))
    ex.run()
    assert (tmp_path / "r.json").is_symlink() and (tmp_path / "r.csv").is_symlink()
    assert json.loads((real / "r.json").read_text())["specializations"][0]["name"] == "type: char"
    assert (real / "r.csv").read_text().startswith("index,name")
