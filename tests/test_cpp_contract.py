"""Where a port of a C++ primbench benchmark depends on the C++ harness's behaviour (issue
23): its naming and ordering rules under ``--naming cpp``, custom options under both
spellings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import primbench as pb
from primbench.benchmark import cpp_specialization_name, name_for, natural_key, order_key, specialization_name
from primbench.errors import UsageError
from tests.test_executor import executor

ROCPRIM_META: dict[str, Any] = {
    "lvl": "device", "algo": "radix_sort_keys", "key_type": "rocprim::half", "cfg": "default",
    "size": 1024, "descending": False, "ratio": 0.5, "wrapper": "common::custom_type<float,float>",
}


def test_a_rocprim_meta_gets_the_cpp_name_under_the_cpp_rules() -> None:
    assert cpp_specialization_name(ROCPRIM_META) == \
        "descending: false, key_type: half, ratio: 0.5, size: 1024, wrapper: custom_type<float,float>"
    assert specialization_name(ROCPRIM_META) == (  # primbench's own rule keeps all three
        "cfg: default, descending: false, key_type: rocprim::half, lvl: device, ratio: 0.5, size: 1024, "
        "wrapper: common::custom_type<float,float>")
    nested = {"algo": "scan", "cfg": {"bs": 256, "ipt": 4, "lvl": "x", "method": "rocprim::block_scan::reduce"},
              "type": "int"}
    assert cpp_specialization_name(nested) == "cfg: { bs: 256, ipt: 4, method: block_scan::reduce }, type: int"
    assert cpp_specialization_name({"algo": "a", "cfg": {"cfg": "default"}}) == "cfg: {  }"
    assert name_for(ROCPRIM_META, "cpp") == cpp_specialization_name(ROCPRIM_META)
    assert name_for(ROCPRIM_META) == specialization_name(ROCPRIM_META)


def test_cpp_order_is_plain_string_order() -> None:
    names = ["size: 256", "size: 1024", "size: 64"]
    assert sorted(names, key=order_key("cpp")) == ["size: 1024", "size: 256", "size: 64"]
    assert sorted(names, key=order_key("primbench")) == sorted(names, key=natural_key) == \
        ["size: 64", "size: 256", "size: 1024"]


class Sized(pb.Benchmark):
    def __init__(self, size: int) -> None:
        self.size = size

    def meta(self) -> dict[str, Any]:
        return {"lvl": "device", "algo": "copy", "cfg": "default", "items": self.size,
                "type": "rocprim::int128_t"}

    def run(self, state: pb.State) -> None:
        state.set_items(self.size)
        state.add_reads(np.int8, self.size)
        state.run(state.device.launch)


@pytest.mark.parametrize(("args", "kw", "expected"), [
    ((), {}, ["cfg: default, items: 64, lvl: device, type: rocprim::int128_t",
              "cfg: default, items: 256, lvl: device, type: rocprim::int128_t",
              "cfg: default, items: 1024, lvl: device, type: rocprim::int128_t"]),
    (("--naming", "cpp"), {}, ["items: 1024, type: int128_t", "items: 256, type: int128_t",
                               "items: 64, type: int128_t"]),
    ((), {"naming": "cpp"}, ["items: 1024, type: int128_t", "items: 256, type: int128_t",
                             "items: 64, type: int128_t"]),
    (("--naming", "primbench"), {"naming": "cpp"}, ["cfg: default, items: 64, lvl: device, type: rocprim::int128_t",
                                                    "cfg: default, items: 256, lvl: device, type: rocprim::int128_t",
                                                    "cfg: default, items: 1024, lvl: device, type: rocprim::int128_t"]),
])
def test_the_executor_names_and_orders_by_the_rules_chosen(tmp_path: Path, args: tuple[str, ...],
                                                           kw: dict[str, Any], expected: list[str]) -> None:
    ex = executor(tmp_path, *args, **kw)
    for size in (256, 64, 1024):
        ex.queue(Sized(size))
    report = ex.run()
    assert [s["name"] for s in report["specializations"]] == expected
    assert [s["index"] for s in report["specializations"]] == [0, 1, 2]
    assert report["specializations"][0]["meta"]["lvl"] == "device"  # meta is kept as given


def test_a_bad_naming_is_a_usage_error(tmp_path: Path) -> None:
    ex = executor(tmp_path, naming="c++")
    ex.queue(Sized(64))
    with pytest.raises(UsageError, match="naming='c\\+\\+'"):
        ex.run()
    ex = executor(tmp_path, "--naming", "c++")
    ex.queue(Sized(64))
    with pytest.raises(UsageError, match="--naming"):
        ex.run()


@pytest.mark.parametrize("flag", ["--my_opt", "--my-opt"])
def test_a_custom_option_takes_both_spellings(tmp_path: Path, flag: str) -> None:
    ex = executor(tmp_path, flag, "7", "--dry_run_twice", "--long-name", "x")
    assert ex.get("my_opt", 3, "An option") == 7
    assert ex.get("dry_run_twice", False, "A flag") is True
    assert ex.get("long-name", "a", "A dashed name") == "x"
    ex.queue(Sized(64))
    assert ex.run()["context"]["custom_settings"] == {"my_opt": 7, "dry_run_twice": True, "long-name": "x"}
    assert "--my_opt" in ex.help_text() and "--my-opt" in ex.help_text()
