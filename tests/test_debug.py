"""Inspection, telemetry and guard rails."""

import numpy as np
import pytest

import xla_array as xp


def _pending():
    x = xp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    return xp.sum(xp.sqrt(x) * 3.5, axis=1)


def test_mlir_has_user_locations_and_hlo_cost_memory():
    y = _pending()
    text = xp.debug.mlir(y)
    assert "stablehlo.sqrt" in text and 'loc("' in text and "test_debug.py" in text
    assert "sqrt" in xp.debug.hlo(y)
    assert xp.debug.cost(y)["transcendentals"] >= 6
    assert xp.debug.memory(y)["output_bytes"] == 2 * 4
    assert y.is_pending  # inspecting does not compute


def test_cost_has_readable_keys_and_inspection_counts_as_a_cache_miss(metrics):
    """cost/memory/hlo compile through the cache as a materialization would: the miss is
    counted and explained, and computing the same graph afterwards compiles nothing."""
    x = xp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    y = xp.sum(xp.exp(x) * 3.25 - x, axis=0)
    assert set(xp.debug.cost(y)) == {"flops", "transcendentals", "bytes accessed"}
    assert set(xp.debug.memory(y)) >= {"argument_bytes", "output_bytes", "temp_bytes"}
    m = metrics()
    assert m["cache_misses"] == m["compiles"] + m["disk_hits"] == 1, m
    assert xp.debug.explain() != "no compile yet"
    xp.materialize(y)
    m = metrics()
    assert (m["compiles"], m["cache_misses"], m["cache_hits"]) == (1, 1, 1), m


def test_every_inspector_refuses_a_computed_array_the_same_way(tmp_path):
    done = xp.asarray(np.arange(3.0))  # made from data
    computed = done * 2.0
    xp.materialize(computed)
    for array in (done, computed):
        for name in ("graph", "dot", "mlir", "hlo", "cost", "memory"):
            with pytest.raises(ValueError, match=f"debug.{name}: nothing pending to inspect"):
                getattr(xp.debug, name)(array)
        with pytest.raises(ValueError, match="debug.draw: nothing pending"):
            xp.debug.draw(array, path=str(tmp_path / "g.dot"))
    with pytest.raises(ValueError, match="these arrays hold their values"):
        xp.debug.graph(done, computed)
    with pytest.raises(TypeError, match="at least one array"):
        xp.debug.graph()
    pending = done + 1.0  # with a pending one, the computed ones are its inputs
    assert xp.debug.graph(done, pending).splitlines()[-1] == "outputs: v0"


def test_every_metric_is_documented():
    """The keys of metrics() are those debug.metrics' docstring and docs/debugging.md name."""
    import os
    import re
    keys = set(xp.debug.metrics())
    page = os.path.join(os.path.dirname(os.path.dirname(__file__)), "docs", "debugging.md")
    with open(page) as f:
        table = f.read().split("| key | counts |", 1)[1].split("\n\n", 1)[0]
    assert set(re.findall(r"`([a-z_]+)`", "".join(
        line.split("|")[1] for line in table.splitlines()[2:]))) == keys
    assert {k for k in keys if f"``{k}``" in xp.debug.metrics.__doc__} == keys


def test_str_of_0d_arrays_is_numpys():
    """print(x) of a 0-d array shows what NumPy shows (3.0, not 3.); repr stays NumPy's."""
    for value, dtype in ((3.0, xp.float64), (3.1, xp.float32), (7, xp.int32), (True, xp.bool),
                         (1 + 2j, xp.complex64)):
        x = xp.asarray(value, dtype=dtype)
        ref = np.asarray(value, dtype=dtype.np)
        assert str(x) == str(ref) and f"{x}" == f"{ref}" and format(x, "") == format(ref, "")
    assert str(xp.sum(xp.ones(3))) == "3.0" and repr(xp.sum(xp.ones(3))) == \
        "Array(3., dtype=float64)"
    assert str(xp.ones(3)) == "[1. 1. 1.]"


def test_graph_text_and_dot(tmp_path):
    y = _pending()
    g = xp.debug.graph(y)
    assert "sqrt -> float32[2, 3]" in g and g.splitlines()[-1].startswith("outputs:")
    d = xp.debug.dot(y)
    assert d.startswith("digraph") and "->" in d
    path = xp.debug.draw(y, path=str(tmp_path / "g.dot"))
    assert open(path).read() == d


def test_telemetry_callbacks_and_explain(metrics):
    events = []
    off1 = xp.debug.on_compile(events.append)
    off2 = xp.debug.on_materialize(events.append)
    try:
        x = xp.asarray(np.arange(3.0))
        float(xp.sum(x * 4.0 + 9.0 - x))
    finally:
        off1()
        off2()
    kinds = [e["event"] for e in events]
    assert kinds.count("materialize") == 1
    comp = [e for e in events if e["event"] == "compile"]
    if comp:  # (the structure may have been compiled by an earlier test)
        assert comp[0]["compile_seconds"] > 0 and comp[0]["total_seconds"] >= \
            comp[0]["compile_seconds"]
    x5 = xp.asarray(np.arange(5.0))
    float(xp.sum(x5 * 4.0 + 9.0 - x5))  # same ops, new input shape
    why = xp.debug.explain()
    assert why.startswith("input 0 of shape (5,) and dtype float64, where") and "(3,)" in why, \
        why


def test_max_compiles_guard_names_the_difference():
    with xp.flags.using(max_compiles=xp.debug.metrics()["compiles"] or 1):
        xp.debug.reset_metrics()
        with xp.flags.using(max_compiles=1):
            x = xp.asarray(np.arange(7.0))
            float(xp.sum(x * 1.5 - 0.25) + 11.0)  # may compile (first)
            with pytest.raises(xp.CompileError, match="MAX_COMPILES"):
                float(xp.max(xp.asarray(np.arange(9.0)) * 7.5 - 3.0))


def test_materialize_guard():
    x = xp.asarray(np.arange(3.0)) + 1.0
    with xp.flags.using(materialize_guard="raise"):
        with pytest.raises(RuntimeError, match="implicit materialization"):
            bool(x[0] > 0)
        xp.materialize(x)  # explicit: allowed
    assert float(x[0]) == 1.0
