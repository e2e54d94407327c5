"""Batch-minor lane kernels (jaxart.math.lanes): every vmap/jit/grad combination equals the per-world maths."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import all_joints_builder, random_coords

import jaxart
from jaxart.math.lanes import col, lanes, materialize

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
IDX = np.array([2, 0, 1, 1])


def _kernel(x, params):
    """Lane kernel: gathers rows, uses a static per-item constant and a stacked component axis."""
    y = x[IDX] * params["scale"][:, 0] + col(np.array([1.0, 2.0, 3.0, 4.0]))
    return {"y": jnp.sin(y), "z": jnp.stack([y, y * y], axis=1) * params["scale"][:1, 1]}


def _reference(x, params):
    y = x[IDX] * params["scale"][:, 0] + np.array([1.0, 2.0, 3.0, 4.0])
    return {"y": jnp.sin(y), "z": jnp.stack([y, y * y], axis=1) * params["scale"][:1, 1]}


FN = lanes(_kernel)


def _data(batch=5):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(batch, 3)))
    scale = jnp.asarray(rng.normal(size=(batch, 4, 2)))
    return x, {"scale": scale}


def _close(a, b):
    jax.tree_util.tree_map(lambda u, v: np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12), a, b)


@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0)])
def test_vmap_matches_reference(axes):
    x, p = _data()
    xs = x if axes[0] == 0 else x[0]
    ps = p if axes[1] == 0 else jax.tree_util.tree_map(lambda a: a[0], p)
    got = jax.jit(jax.vmap(FN, in_axes=axes))(xs, ps)
    _close(got, jax.vmap(_reference, in_axes=axes)(xs, ps))


@pytest.mark.slow
def test_unbatched_nested_vmap_and_grads():
    x, p = _data()
    p0 = jax.tree_util.tree_map(lambda a: a[0], p)
    _close(FN(x[0], p0), _reference(x[0], p0))
    xx = jnp.stack([x, 2 * x])
    _close(jax.vmap(jax.vmap(FN, in_axes=(0, None)), in_axes=(0, None))(xx, p0),
           jax.vmap(jax.vmap(_reference, in_axes=(0, None)), in_axes=(0, None))(xx, p0))

    def loss(f):
        return lambda x, p: jnp.sum(f(x, p)["y"] ** 2) + jnp.sum(f(x, p)["z"])

    _close(jax.grad(loss(FN), argnums=(0, 1))(x[0], p0), jax.grad(loss(_reference), argnums=(0, 1))(x[0], p0))
    _close(jax.vmap(jax.grad(loss(FN)), in_axes=(0, None))(x, p0),
           jax.vmap(jax.grad(loss(_reference)), in_axes=(0, None))(x, p0))
    _close(jax.grad(lambda x: jnp.sum(jax.vmap(loss(FN), in_axes=(0, None))(x, p0)))(x),
           jax.grad(lambda x: jnp.sum(jax.vmap(loss(_reference), in_axes=(0, None))(x, p0)))(x))
    _close(jax.jacfwd(lambda x: FN(x, p0)["y"])(x[0]), jax.jacfwd(lambda x: _reference(x, p0)["y"])(x[0]))


def test_materialize_equals_direct_call():
    rng = np.random.default_rng(1)
    a = jnp.asarray(rng.normal(size=(3, 8)))
    c = jnp.asarray(rng.normal(size=(3, 1)))
    fn = lambda a, c: (jnp.sin(a) * c, a[:1] + c[:1])  # noqa: E731
    got = materialize(fn, a, c)
    _close(got, (jnp.sin(a) * c, jnp.broadcast_to(a[:1] + c[:1], (1, 8))))
    _close(materialize(fn, a[:, :3], c), fn(a[:, :3], c))  # odd lane count: plain call


def test_fk_vmapped_over_model_and_coordinates_matches_per_world():
    """Batched model leaves (domain randomisation) and batched coordinates go through the lane rule."""
    model = all_joints_builder().finalize(dtype=F64)
    rng = np.random.default_rng(2)
    coords = [random_coords(model, rng) for _ in range(4)]
    qs = jnp.stack([jnp.asarray(q) for q, _ in coords])
    qds = jnp.stack([jnp.asarray(qd) for _, qd in coords])
    coms = model.body_com + jnp.asarray(rng.normal(size=(4, *model.body_com.shape))) * 0.1
    models = jax.vmap(lambda c: model.replace(body_com=c))(coms)
    fk = lambda m, q, qd: jaxart.eval_fk(m, q, qd)  # noqa: E731
    got = jax.jit(jax.vmap(fk))(models, qs, qds)
    for k in range(4):
        ref = fk(model.replace(body_com=coms[k]), qs[k], qds[k])
        np.testing.assert_allclose(got.body_q[k], ref.body_q, atol=1e-12)
        np.testing.assert_allclose(got.body_qd[k], ref.body_qd, atol=1e-12)


def test_plain_formulation_for_single_worlds_and_derivatives():
    """``lanes(kernel, plain=f)``: unbatched calls, batches of one and derivatives use ``f`` (here a
    detectably different function, to check the routing)."""

    def plain(x, params):
        out = _reference(x, params)
        return {"y": 2.0 * out["y"], "z": out["z"]}

    fn = lanes(_kernel, plain=plain)
    rng = np.random.default_rng(3)
    x, params = jnp.asarray(rng.normal(size=(3, 5))), {"scale": jnp.asarray(rng.normal(size=(4, 2)))}
    ref = jax.vmap(_reference, in_axes=(0, None))(x, params)
    batched = jax.vmap(fn, in_axes=(0, None))
    np.testing.assert_allclose(batched(x, params)["y"], ref["y"], rtol=1e-12)  # the kernel
    np.testing.assert_allclose(batched(x[:1], params)["y"], 2.0 * ref["y"][:1], rtol=1e-12)
    np.testing.assert_allclose(fn(x[0], params)["y"], 2.0 * ref["y"][0], rtol=1e-12)
    g = jax.grad(lambda v: fn(v, params)["y"].sum())(x[0])
    np.testing.assert_allclose(g, jax.grad(lambda v: plain(v, params)["y"].sum())(x[0]), rtol=1e-12)


def test_integrate_coords_batched_matches_per_world():
    from jaxart.dynamics.integrate import integrate_coords, integrate_plain

    model = all_joints_builder().finalize(dtype=F64)
    qs, qds = zip(*[random_coords(model, np.random.default_rng(k)) for k in range(3)], strict=True)
    q, qd, dt = jnp.stack(qs), jnp.stack(qds), jnp.asarray(0.01)
    out = jax.jit(jax.vmap(integrate_coords, in_axes=(None, 0, 0, None)))(model, q, qd, dt)
    for k in range(3):
        np.testing.assert_allclose(out[k], integrate_plain(model, q[k], qd[k], dt), rtol=1e-12, atol=1e-14)
    # unbatched coordinates with batched velocities (the first step of a vmapped rollout)
    out = jax.jit(jax.vmap(integrate_coords, in_axes=(None, None, 0, None)))(model, q[0], qd, dt)
    np.testing.assert_allclose(out[2], integrate_plain(model, q[0], qd[2], dt), rtol=1e-12, atol=1e-14)
