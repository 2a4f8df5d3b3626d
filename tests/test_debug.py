"""Inspection, telemetry and guard rails."""

import numpy as np
import pytest

import xla_array as xp


def _pending():
    x = xp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    return xp.sum(xp.exp(x) * 3.5, axis=1)


def test_mlir_has_user_locations_and_hlo_cost_memory():
    y = _pending()
    text = xp.debug.mlir(y)
    assert "stablehlo.exponential" in text and 'loc("' in text and "test_debug.py" in text
    assert "exponential" in xp.debug.hlo(y)
    assert xp.debug.cost(y)["transcendentals"] >= 6
    assert xp.debug.memory(y)["output_bytes"] == 2 * 4
    assert y.is_pending  # inspecting does not compute


def test_graph_text_and_dot(tmp_path):
    y = _pending()
    g = xp.debug.graph(y)
    assert "exp -> float32[2, 3]" in g and g.splitlines()[-1].startswith("outputs:")
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
    assert "input of shape (5,)" in why and "(3,)" in why, why


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
