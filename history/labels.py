"""Short names for what tells two series apart: the physical GPU (its uuid, shortened to
what stays unique among the GPUs shown) and its model. Pure functions; the CLI, the charts
and the report use them, so a GPU reads the same everywhere."""

from __future__ import annotations

from collections.abc import Iterable

MIN_ID = 8  # characters of a uuid kept at least (after "GPU-")


def _bare(gpu_key: str) -> str:
    return gpu_key[4:] if gpu_key.startswith("GPU-") else gpu_key


def short_gpu_ids(gpu_keys: Iterable[object]) -> dict[str, str]:
    """gpu_key -> the shortest start of it (at least `MIN_ID` characters, ``GPU-`` left off)
    that no other key given shares. ``--gpu`` accepts it (a uuid's start)."""
    keys = sorted({str(k) for k in gpu_keys if k is not None})
    bare = {k: _bare(k) for k in keys}
    out: dict[str, str] = {}
    for k in keys:
        b = bare[k]
        n = min(MIN_ID, len(b))
        for other in keys:
            if other == k:
                continue
            o = bare[other]
            common = 0
            for x, y in zip(b, o, strict=False):
                if x != y:
                    break
                common += 1
            n = max(n, min(common + 1, len(b)))
        out[k] = b[:n]
    return out


def model(gpu_name: object) -> str:
    """``NVIDIA H200`` -> ``H200``; ``AMD Instinct MI300X`` -> ``MI300X``; else as is."""
    absent = gpu_name is None or (isinstance(gpu_name, float) and gpu_name != gpu_name)  # None, or a frame's NaN
    text = "" if absent else str(gpu_name)
    for prefix in ("NVIDIA ", "AMD Instinct ", "AMD "):
        if text.startswith(prefix) and len(text) > len(prefix):
            return text[len(prefix):]
    return text


def gpu_labels(pairs: Iterable[tuple[object, object]]) -> dict[str, str]:
    """gpu_key -> ``H200 5d6e1a0c`` for (gpu_key, gpu_name) pairs: the model and the short id."""
    pairs = list(pairs)
    ids = short_gpu_ids(k for k, _ in pairs)
    return {str(k): f"{model(n)} {ids[str(k)]}".strip() for k, n in pairs if k is not None}
