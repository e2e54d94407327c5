"""Tree traversal: the ancestor-matrix sums and transform tangent equal the looped traversal's."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import all_joints_builder

import jaxart
from jaxart.kinematics import tree
from jaxart.math import quat_mul


def _chain(count: int):
    b = jaxart.ModelBuilder()
    prev, js = -1, []
    for i in range(count):
        link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.01)
        js.append(b.add_joint_revolute(prev, link, axis=(0, 0, 1), parent_xform=((0.1, 0.02 * i, 0), (0, 0, 0, 1))))
        prev = link
    b.add_articulation(js)
    b.add_body(xform=((0.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0)), mass=1.0, inertia=np.eye(3))  # no tree joint
    return b.finalize(dtype=jnp.float64)


def _model(name):
    if name == "humanoid":
        b = jaxart.ModelBuilder()
        b.add_mjcf(jaxart.assets.asset_path("humanoid"))
        return b.finalize(dtype=jnp.float64)
    return all_joints_builder().finalize(dtype=jnp.float64) if name == "tree" else _chain(12)


def _random_local(rng, count, radial: bool):
    """Random unit local transforms and tangents: rotations ``½ [ω, 0] ⊗ q``, plus a radial (scaling)
    part when ``radial`` (where only the sequential composition order of the level schedule defines it:
    off unit quaternions the composition is not associative)."""
    q = rng.normal(size=(4, count, 1))
    q /= np.linalg.norm(q, axis=0)
    omega = np.concatenate([rng.normal(size=(3, count, 1)), np.zeros((1, count, 1))])
    dq = 0.5 * np.stack([np.asarray(x) for x in quat_mul(omega[:, :, 0].T, q[:, :, 0].T).T])[:, :, None]
    dq = dq + (rng.normal(size=(1, count, 1)) * q if radial else 0.0)
    local = (tuple(jnp.asarray(x) for x in rng.normal(size=(3, count, 1))), tuple(jnp.asarray(x) for x in q))
    tangent = (tuple(jnp.asarray(x) for x in rng.normal(size=(3, count, 1))), tuple(jnp.asarray(x) for x in dq))
    # the world slot (last) is the identity, constant
    local = (tuple(x.at[-1].set(0.0) for x in local[0]),
             tuple(x.at[-1].set(float(i == 3)) for i, x in enumerate(local[1])))
    return local, jax.tree_util.tree_map(lambda x: x.at[-1].set(0.0), tangent)


@pytest.mark.parametrize(("name", "radial"), [("humanoid", True), ("tree", False), ("deep chain", False)])
def test_compose_down_tangent_equals_traversal(name, radial, monkeypatch):
    model = _model(name)
    assert (tree.LEVELS_MAX_DEPTH >= model.schedule.depth) == radial  # levels: sequential order
    sch = model.schedule
    count = model.body_count + 1
    local, tangent = _random_local(np.random.default_rng(3), count, radial)

    def compose(x):
        return tree.compose_down(sch, x)

    new = jax.jvp(compose, (local,), (tangent,))
    cot = jax.tree_util.tree_map(lambda x: jnp.cos(3.0 * x), new[0])
    new_vjp = jax.vjp(compose, local)[1](cot)[0]
    monkeypatch.setattr(tree, "ANCESTOR_MAX_SLOTS", 0)  # the looped traversal, differentiated by JAX
    ref = jax.jvp(compose, (local,), (tangent,))
    for a, b in zip(jax.tree_util.tree_leaves(ref), jax.tree_util.tree_leaves(new), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)
    # reverse mode is the transpose of the tangent map: <vjp(cot), tangent> = <cot, jvp(tangent)>
    inner = lambda u, v: sum(float(jnp.vdot(x, y)) for x, y in zip(jax.tree_util.tree_leaves(u),  # noqa: E731
                                                                      jax.tree_util.tree_leaves(v), strict=True))
    np.testing.assert_allclose(inner(new_vjp, tangent), inner(cot, new[1]), rtol=1e-12)


@pytest.mark.parametrize("name", ["humanoid", "deep chain"])
def test_accumulate_down_equals_traversal(name, monkeypatch):
    model = _model(name)
    count = model.body_count + 1
    values = jnp.asarray(np.random.default_rng(4).normal(size=(count, 2, 1))).at[-1].set(0.0)
    values = {"a": values[:, 0], "b": values[:, 1]}
    new = tree.accumulate_down(model.schedule, values)
    monkeypatch.setattr(tree, "ANCESTOR_MAX_SLOTS", 0)
    ref = tree.accumulate_down(model.schedule, values)
    for k in values:
        np.testing.assert_allclose(new[k], ref[k], rtol=1e-12, atol=1e-12)


def _primitives(jaxpr) -> set:
    """Names of all primitives in a jaxpr, nested jaxprs included."""
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    names |= _primitives(inner)
    return names


def test_compose_down_derivatives_run_no_loop():
    """Forward and reverse mode of the world transforms are products, not a loop over the levels."""
    model = _model("humanoid")
    sch = model.schedule
    local, tangent = _random_local(np.random.default_rng(5), model.body_count + 1, radial=False)

    def compose(x):
        return tree.compose_down(sch, x)

    assert {"scan", "while"} & _primitives(jax.make_jaxpr(compose)(local).jaxpr)  # the primal is a loop
    _, linear = jax.linearize(compose, local)
    assert not {"scan", "while"} & _primitives(jax.make_jaxpr(linear)(tangent).jaxpr)
    _, pullback = jax.vjp(compose, local)
    cot = jax.tree_util.tree_map(jnp.ones_like, compose(local))
    assert not {"scan", "while"} & _primitives(jax.make_jaxpr(pullback)(cot).jaxpr)
