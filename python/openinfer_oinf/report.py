"""The human-readable listing `verify_oinf.py` prints for a validated file.

Format (kept stable so the C `openinfer inspect` can print the same text):

    NAME := VALUE                                   size variables, then a blank line
    key: type = value                               metadata, then a blank line
    key: dtype[d0, d1] = { ... }                    NDARRAY metadata
    key: bitset[n] = 2d 01                          bitset bytes in hex (first 16)
    name: dtype[d0, d1] = { first 5, ..., last 5 }  tensors; 2+-D: one row per line, <= 5 rows
    - [nbytes: N, min: a, max: b, mean: c, median: d, std: e]
    - hist: {([lo, hi], count), ...}
    - quant: scheme=..., scale=per_tensor(x)|per_channel(axis=a, count=n), zero_point=...
    name: dtype = v                                 scalar tensors (ndim 0)
    name: dtype[dims] -- uninitialized              tensors without data
"""
from __future__ import annotations

from typing import Any, Iterator, List

import numpy as np

from .reader import Metadata, NdArray, OinfFile, Quant, Tensor
from .spec import Bitset
from .vtypes import type_name

PREVIEW = 5          # elements shown at each end of a long row
MAX_ROWS = 5         # rows shown for tensors of 2 or more dims
BITSET_BYTES = 16    # bytes of a bitset shown
HIST_BINS = 10
INT_BIN_RANGE = 20   # integer data with max - min <= this gets one bin per value


def fmt_scalar(value: Any) -> str:
    """bool as true/false, str quoted, floats with 6 significant digits (%.6g)."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    return str(int(value)) if isinstance(value, np.integer) else str(value)


def fmt_row(values: np.ndarray) -> str:
    """`{ a, b, c }`, or the first and last PREVIEW elements around `...`."""
    flat = values.reshape(-1)
    if flat.size <= 2 * PREVIEW:
        items = [fmt_scalar(v) for v in flat.tolist()]
    else:
        items = ([fmt_scalar(v) for v in flat[:PREVIEW].tolist()] + ["..."]
                 + [fmt_scalar(v) for v in flat[-PREVIEW:].tolist()])
    return "{ " + ", ".join(items) + " }" if items else "{ }"


def fmt_values(values: np.ndarray) -> str:
    """One line for 0/1-D data; for more dims one line per index of axis 0 (rows flattened)."""
    if values.ndim <= 1 or values.shape[0] == 0:
        return fmt_row(values)
    lines = ["{"]
    lines += [f"  {fmt_row(values[i])}," for i in range(min(values.shape[0], MAX_ROWS))]
    if values.shape[0] > MAX_ROWS:
        lines.append("  ...")
    lines.append("}")
    return "\n".join(lines)


def fmt_dims(dims: Any) -> str:
    return ", ".join(str(int(d)) for d in dims)


def stats_line(values: np.ndarray, nbytes: int) -> str:
    """`- [nbytes, min, max, mean, median, std]`; nbytes is the stored (file) size."""
    wide = values.astype(np.float64).reshape(-1)
    if values.dtype.kind in "biu":
        lo, hi = int(values.min()), int(values.max())
    else:
        lo, hi = float(values.min()), float(values.max())
    with np.errstate(invalid="ignore", over="ignore"):   # inf - inf in the std is nan
        mean, median, std = np.mean(wide), np.median(wide), np.std(wide)
    parts = [f"nbytes: {nbytes}", f"min: {fmt_scalar(lo)}", f"max: {fmt_scalar(hi)}",
             f"mean: {mean:.6g}", f"median: {median:.6g}", f"std: {std:.6g}"]
    return "- [" + ", ".join(parts) + "]"


def _hist_entries(values: np.ndarray) -> Iterator[str]:
    """Histogram bins as `([lo, hi], count)`; empty bins are left out (bool shows both)."""
    flat = values.reshape(-1)
    if flat.dtype == np.bool_:
        yield f"([0, 0], {int(np.sum(~flat))})"
        yield f"([1, 1], {int(np.sum(flat))})"
        return
    if flat.dtype.kind in "iu" and int(flat.max()) - int(flat.min()) <= INT_BIN_RANGE:
        values_, counts = np.unique(flat, return_counts=True)
        for v, c in zip(values_.tolist(), counts.tolist()):
            yield f"([{v}, {v}], {c})"
        return
    wide = flat.astype(np.float64)
    finite = wide[np.isfinite(wide)]
    if finite.size:
        lo, hi = float(finite.min()), float(finite.max())
        if lo == hi:
            yield f"([{lo:.6g}, {hi:.6g}], {finite.size})"
        else:
            counts, edges = np.histogram(finite, bins=HIST_BINS, range=(lo, hi))
            for i, c in enumerate(counts.tolist()):
                if c:
                    yield f"([{edges[i]:.6g}, {edges[i + 1]:.6g}], {c})"
    for label, mask in (("nan", np.isnan(wide)), ("inf", wide == np.inf), ("-inf", wide == -np.inf)):
        if mask.any():
            yield f"({label}, {int(mask.sum())})"


def hist_line(values: np.ndarray) -> str:
    return "- hist: {" + ", ".join(_hist_entries(values)) + "}"


def quant_line(q: Quant) -> str:
    """`- quant: scheme=..., scale=..., zero_point=...`."""
    scheme = {1: "symmetric", 2: "asymmetric"}[q.scheme]
    if q.scale_mode == 1:
        scale = f"per_tensor({float(q.scales[0]):.6g})"
    else:
        scale = f"per_channel(axis={q.scale_axis}, count={q.scales.size})"
    if q.zp_mode == 0:
        zp = "none"
    elif q.zp_mode == 1:
        zp = f"per_tensor({int(q.zero_points[0])})"
    else:
        zp = f"per_channel(axis={q.zp_axis}, count={q.zero_points.size})"
    return f"- quant: scheme={scheme}, scale={scale}, zero_point={zp}"


def metadata_line(m: Metadata) -> str:
    """`key: type = value` in the shape that suits the value type."""
    if isinstance(m.value, NdArray):
        arr = m.value.array
        return f"{m.key}: {type_name(m.value.elem_type)}[{fmt_dims(arr.shape)}] = {fmt_values(arr)}"
    if isinstance(m.value, Bitset):
        raw = m.value.to_bytes()
        shown = " ".join(f"{b:02x}" for b in raw[:BITSET_BYTES])
        more = " ..." if len(raw) > BITSET_BYTES else ""
        return f"{m.key}: bitset[{m.value.bit_count}] = {shown}{more}".rstrip()
    return f"{m.key}: {type_name(m.vtype)} = {fmt_scalar(m.value)}"


def tensor_lines(f: OinfFile, t: Tensor) -> List[str]:
    """Header line, then stats and histogram for tensors with data, then quant."""
    dtype = type_name(t.dtype)
    shape = f"{dtype}[{fmt_dims(t.dims)}]" if t.dims else dtype
    values = f.tensor_values(t)
    if values is None:
        lines = [f"{t.name}: {shape} -- uninitialized"]
    elif not t.dims:
        lines = [f"{t.name}: {dtype} = {fmt_scalar(values.item())}"]
    elif values.size == 0:
        lines = [f"{t.name}: {shape} = {{ }}"]
    else:
        lines = [f"{t.name}: {shape} = {fmt_values(values)}",
                 stats_line(values, t.data_nbytes), hist_line(values)]
    if t.quant is not None:
        lines.append(quant_line(t.quant))
    return lines


def render(f: OinfFile) -> str:
    """The whole listing, sections separated by blank lines."""
    lines = [f"{name} := {value}" for name, value in f.sizevars]
    if f.sizevars:
        lines.append("")
    lines += [metadata_line(m) for m in f.metadata]
    if f.metadata:
        lines.append("")
    for t in f.tensors:
        lines += tensor_lines(f, t) + [""]
    return "\n".join(lines)
