"""The C++ primbench's results.json before 4.0.0 (``results_version`` 1.0.0, 2.0.0, 3.0.0; the
issue's "results 3.0.0").

These files have the document's three parts and a specialization's keys as 4.0.0 has them;
what changed is the context, which the older header wrote as (`primbench.hpp` of
ROCm/rocm-libraries shared/primbench at a628a74, which writes 1.0.0):

* ``context.cli_settings`` (4.0.0: ``settings``) with ``bytes`` (4.0.0: ``size``) and the
  AMD-only ``output_hip_device_properties_context`` and ``output_amdsmi_context``;
  ``context.custom_cli_settings`` (4.0.0: ``custom_settings``); ``hip_device_properties`` and
  ``amdsmi`` objects (not read);
* ``general.gpu_name`` / ``gpu_arch`` (4.0.0: ``gpu.name`` / ``gpu.arch``), ``temp_type``
  (``temperature_type``), ``git_commit`` (``commit_hash``), ``hip_version`` and
  ``clang_version`` (``backend.hip_version``, ``backend.compiler``);
* per batch ``amdsmi_stats_after_iterations`` (not read).

Either spelling is read, so a file of any of those versions becomes a 4.0.0 document, which
the loader then upgrades as it upgrades every 4.0.0 file (the 256 MiB cache those harnesses
cleared included). `Results.version` keeps the version the file says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from primbench.formats._base import Converted, FormatError

VERSION = re.compile(r"^[123]\.0\.0$")  # the versions before 4.0.0 this reader knows

_GENERAL_RENAMES = {"temp_type": "temperature_type", "git_commit": "commit_hash"}


def detect(parsed: Mapping[str, Any]) -> bool:
    context = parsed.get("context")
    if not isinstance(context, Mapping):
        return False
    version = context.get("results_version")
    return isinstance(version, str) and VERSION.match(version) is not None


def read(parsed: Mapping[str, Any], source: str) -> Converted:
    context = dict(parsed["context"])
    version = str(context["results_version"])
    general_in = context.get("general")
    if not isinstance(general_in, Mapping):
        raise FormatError("context.general", "must be an object")
    general = dict(general_in)
    for old, new in _GENERAL_RENAMES.items():
        if old in general:
            value = general.pop(old)
            general.setdefault(new, value)
    gpu = dict(general["gpu"]) if isinstance(general.get("gpu"), Mapping) else {}
    for old, new in (("gpu_name", "name"), ("gpu_arch", "arch")):
        if old in general:
            gpu.setdefault(new, general.pop(old))
    if gpu:
        general["gpu"] = gpu
    backend = dict(general["backend"]) if isinstance(general.get("backend"), Mapping) else {}
    if "hip_version" in general:
        backend.setdefault("name", "hip")
        backend.setdefault("hip_version", general.pop("hip_version"))
    if "clang_version" in general:
        backend.setdefault("compiler", {"name": "clang", "version": general.pop("clang_version")})
    if backend:
        general["backend"] = backend
    settings_in = context.pop("cli_settings", None)
    if settings_in is None:
        settings_in = context.get("settings", {})
    if not isinstance(settings_in, Mapping):
        raise FormatError("context.cli_settings", "must be an object")
    settings = dict(settings_in)
    if "bytes" in settings:
        settings.setdefault("size", settings.pop("bytes"))
    custom = context.pop("custom_cli_settings", None)
    if custom is not None:
        context.setdefault("custom_settings", custom)
    for unread in ("hip_device_properties", "amdsmi"):
        context.pop(unread, None)
    context.update(results_version="4.0.0", general=general, settings=settings)
    doc = {**parsed, "context": context}
    return Converted("cpp-legacy", version, doc, document_version="4.0.0")
