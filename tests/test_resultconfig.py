"""primbench.resultconfig: which settings make a run another measurement, and its config key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from primbench.compare.core import compare_runs
from primbench.resultconfig import MiB, config_key, result_config, setting_differences
from primbench.results import load_results, results_from_dict
from tests.compare_data import document, spec

ROOT = Path(__file__).resolve().parent.parent


def _context(settings: dict[str, Any] | None = None, flags: Any = None, custom: Any = None) -> dict[str, Any]:
    context: dict[str, Any] = {"settings": settings if settings is not None else {"size": 128 * MiB}}
    if flags is not None:
        context["flags"] = flags
    if custom is not None:
        context["custom_settings"] = custom
    return context


def test_result_config_fills_what_older_files_lack() -> None:
    # results 4.0.0: no cache_size (then 256 MiB), and a file may lack flags altogether
    config = result_config(_context({"size": 1 * MiB, "hot": False}))
    assert config == {"size": MiB, "hot": False, "cache_size": 268435456, "sync": False, "custom_settings": {}}
    assert config_key(_context({"size": 1 * MiB})) == config_key(
        _context({"size": MiB, "hot": False, "cache_size": 256 * MiB}, {"sync": False}, {}))


@pytest.mark.parametrize(("context", "key"), [
    (_context(), "size=128MiB"),
    (_context({"size": MiB, "hot": True}), "size=1MiB hot"),
    (_context({"size": 128 * MiB}, custom={"extra_percent": 1.0}), "size=128MiB extra_percent=1"),
    (_context({"size": 128 * MiB}, custom={"extra_percent": 0.5}), "size=128MiB extra_percent=0.5"),
    (_context({"size": 128 * MiB}, custom={"extra_percent": 0.0}), "size=128MiB"),  # off: as before it existed
    (_context({"size": 1000, "cache_size": 60 * MiB}, {"sync": True}), "size=1000 cache_size=60MiB sync"),
    (_context({"size": 1536 * 1024}), "size=1536KiB"),
    (_context({"size": MiB}, custom={"z": 2, "a": True, "m": "two words"}), 'size=1MiB a m="two words" z=2'),
    (_context({"size": MiB}, custom={"sync": 3}), "size=1MiB custom.sync=3"),  # never mistaken for the flag
    (_context({"size": MiB}, flags="sync"), "size=1MiB"),  # odd values do not break it
])
def test_config_key(context: dict[str, Any], key: str) -> None:
    assert config_key(context) == key
    assert config_key({"context": context}) == key  # a whole document works too


def test_config_key_is_deterministic_whatever_the_order_of_custom_settings() -> None:
    a = _context(custom={"b": 1, "a": 2, "c": 3})
    b = _context(custom={"c": 3, "a": 2, "b": 1})
    assert config_key(a) == config_key(b) == "size=128MiB a=2 b=1 c=3"


def test_config_keys_of_real_files() -> None:
    h200 = ROOT / "examples" / "results" / "h200"
    assert config_key(load_results(h200 / "copy-run1.json")) == "size=128MiB"
    assert config_key(load_results(h200 / "memory_latency.json")) == "size=128MiB hot reads=4096"
    assert config_key(load_results(h200 / "sync_benchmark.json")) == "size=128MiB sync"
    one = sorted((h200 / "history").glob("copy-1mib-*.json"))[0]
    assert config_key(load_results(one)) == "size=1MiB"


def test_setting_differences() -> None:
    base = _context({"size": MiB, "seed": 1, "json_out": "a.json"}, {"sync": False}, {"dims": 3})
    head = _context({"size": 2 * MiB, "seed": 2, "json_out": "b.json", "cache_size": 60 * MiB}, None, {"dims": 2})
    assert setting_differences(base, head) == [
        ("settings", "size", MiB, 2 * MiB),
        ("settings", "cache_size", 256 * MiB, 60 * MiB),  # base lacks it: 256 MiB then
        ("settings", "seed", 1, 2),
        ("custom_settings", "dims", 3, 2),
    ]  # json_out does not move results; a missing flags.sync is false


def test_compare_refuses_an_old_file_that_had_another_cache_size() -> None:
    from primbench.compare.comparability import NotComparableError

    old = document([spec("a", 1e12)], version="4.0.0")
    del old["context"]["settings"]["cache_size"]
    new = document([spec("a", 1e12)], settings={"cache_size": 60 * MiB})
    with pytest.raises(NotComparableError) as err:
        compare_runs([results_from_dict(old)], [results_from_dict(new)])
    assert err.value.comparability.lines() == ["setting cache_size differs: base 256MiB, head 60MiB"]
