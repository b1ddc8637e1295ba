"""primbench's change-point module as it was at an older commit, loaded beside the current one
(for `compare_detectors.py`'s baseline section): `git show REV:history/changepoints.py` (and
`segmentation.py`, where the commit has it) into a temporary package, its import of the
segmentation module made relative. Everything else it imports is today's."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]


def _show(rev: str, path: str) -> str | None:
    out = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True,
                         check=False)
    return out.stdout if out.returncode == 0 else None


def load(rev: str) -> ModuleType | None:
    """The module `history/changepoints.py` at `rev`, or None where git cannot show it."""
    source = _show(rev, "history/changepoints.py")
    if source is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix=f"cp-{rev}-"))
    package = f"changepoints_{rev}"
    (folder / package).mkdir()
    (folder / package / "__init__.py").write_text("")
    segmentation = _show(rev, "history/segmentation.py")
    if segmentation is not None:
        (folder / package / "segmentation.py").write_text(segmentation)
        source = source.replace("from primbench.history.segmentation import", "from .segmentation import")
    (folder / package / "changepoints.py").write_text(source)
    sys.path.insert(0, str(folder))
    spec = importlib.util.find_spec(f"{package}.changepoints")
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"{package}.changepoints"] = module
    spec.loader.exec_module(module)
    return module
