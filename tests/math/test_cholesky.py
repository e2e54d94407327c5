"""Batch-minor dense Cholesky / triangular solves (``jaxart.math.cholesky``)."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

from jaxart.math import cholesky as ch  # noqa: E402


def _spd(rng, lead, n):
    a = rng.normal(size=lead + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _np_solve(a, b):
    return np.linalg.solve(a, b[..., None])[..., 0]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n", [1, 3, 8, 27])
@pytest.mark.parametrize("lead", [(), (5,), (2, 3)])
def test_factor_and_solves_match_numpy(n, lead):
    rng = np.random.default_rng(n + len(lead))
    a, b = _spd(rng, lead, n), rng.normal(size=lead + (n,))
    low_ref = np.linalg.cholesky(a)
    low = ch.cholesky(jnp.asarray(a))
    assert low.shape == a.shape and low.dtype == jnp.float64
    np.testing.assert_allclose(low, low_ref, atol=1e-12)
    np.testing.assert_allclose(ch.solve_lower(low, b), _np_solve(low_ref, b), atol=1e-11)
    np.testing.assert_allclose(ch.solve_upper_t(low, b), _np_solve(np.swapaxes(low_ref, -1, -2), b), atol=1e-11)
    np.testing.assert_allclose(ch.cho_solve(low, b), _np_solve(a, b), atol=1e-12)
    np.testing.assert_allclose(ch.spd_solve(a, b), _np_solve(a, b), atol=1e-12)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n", [3, 27])
def test_chunked_batch_with_partial_last_chunk(monkeypatch, n):
    monkeypatch.setattr(ch, "CHUNK", 4)  # 11 systems: chunks 0-3, 4-7 and an overlapping 7-10
    rng = np.random.default_rng(7)
    a, b = _spd(rng, (11,), n), rng.normal(size=(11, n))
    np.testing.assert_allclose(ch.cholesky(a), np.linalg.cholesky(a), atol=1e-12)
    np.testing.assert_allclose(jax.jit(ch.spd_solve)(a, b), _np_solve(a, b), atol=1e-12)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n", [3, pytest.param(27, marks=pytest.mark.slow)])
def test_jit_vmap_and_nested_vmap(n):
    rng = np.random.default_rng(n)
    a, b = _spd(rng, (2, 3), n), rng.normal(size=(2, 3, n))
    ref = _np_solve(a, b)
    np.testing.assert_allclose(jax.jit(jax.vmap(ch.spd_solve))(a, b), ref, atol=1e-12)
    np.testing.assert_allclose(jax.vmap(jax.vmap(ch.spd_solve))(a, b), ref, atol=1e-12)
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.vmap(ch.cholesky)))(a), np.linalg.cholesky(a), atol=1e-12)
    low = jax.vmap(jax.vmap(ch.cholesky))(a)
    np.testing.assert_allclose(jax.vmap(jax.vmap(ch.cho_solve))(low, b), ref, atol=1e-12)
    np.testing.assert_allclose(jax.vmap(ch.solve_lower)(low, b), _np_solve(np.linalg.cholesky(a), b), atol=1e-11)
    # vmap over an inner axis, a shared matrix (extra right-hand sides) and a shared right-hand side
    np.testing.assert_allclose(jax.vmap(ch.spd_solve, in_axes=(1, 1), out_axes=1)(a, b), ref, atol=1e-12)
    np.testing.assert_allclose(jax.vmap(ch.spd_solve, in_axes=(None, 0))(a[0, 0], b[0]), _np_solve(a[0, 0], b[0]),
                               atol=1e-12)
    np.testing.assert_allclose(jax.vmap(ch.spd_solve, in_axes=(0, None))(a[0], b[0, 0]), _np_solve(a[0], b[0, :1]),
                               atol=1e-12)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n", [3, pytest.param(27, marks=pytest.mark.slow)])
def test_spd_solve_check_grads(n):
    rng = np.random.default_rng(n)
    a, b = jnp.asarray(_spd(rng, (2,), n)), jnp.asarray(rng.normal(size=(2, n)))

    def f(x, rhs):
        return ch.spd_solve(0.5 * (x + jnp.swapaxes(x, -1, -2)), rhs)

    check_grads(f, (a, b), order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_grad_jacfwd_and_vmap_compositions_match_linalg_solve():
    rng = np.random.default_rng(3)
    n = 9
    a, b = jnp.asarray(_spd(rng, (3,), n)), jnp.asarray(rng.normal(size=(3, n)))

    def loss(solve):
        def f(x, rhs):
            sym = 0.5 * (x + jnp.swapaxes(x, -1, -2))
            return jnp.sum(jnp.sin(solve(sym, rhs)))

        return f

    ours, ref = loss(ch.spd_solve), loss(lambda x, r: jnp.linalg.solve(x, r[..., None])[..., 0])

    def transforms(f):
        return (jax.grad(f, (0, 1))(a, b),
                jax.jacfwd(f, 1)(a, b),
                jax.vmap(jax.grad(f))(a, b),
                jax.grad(lambda x, r: jnp.sum(jax.vmap(f)(x, r)))(a, b),
                jax.hessian(f, 1)(a[:1], b[:1]))

    got, want = jax.jit(lambda: transforms(ours))(), jax.jit(lambda: transforms(ref))()
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(g, w, atol=1e-12, rtol=1e-10)
    np.testing.assert_allclose(jax.jacrev(lambda r: ch.spd_solve(a, r))(b),
                               jax.jacrev(lambda r: jnp.linalg.solve(a, r[..., None])[..., 0])(b),
                               atol=1e-12, rtol=1e-10)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n", [3, 27])
def test_bad_systems_do_not_affect_other_worlds(n):
    rng = np.random.default_rng(11)
    a, b = _spd(rng, (6,), n), rng.normal(size=(6, n))
    a[1, 0, 0] = np.nan  # NaN entry
    a[3] = -a[3]  # negative definite: every pivot clamped
    a[4] = 0.0  # singular
    good = [0, 2, 5]
    x = np.asarray(jax.jit(jax.vmap(ch.spd_solve))(a, b))
    low = np.asarray(ch.cholesky(a))
    np.testing.assert_allclose(x[good], _np_solve(a[good], b[good]), atol=1e-12)
    np.testing.assert_allclose(low[good], np.linalg.cholesky(a[good]), atol=1e-12)
    assert np.isnan(x[1]).any() and np.isnan(low[1]).any()
    assert not np.isfinite(x[4]).all() or np.abs(x[4]).max() > 1e100  # clamped pivots: huge or non-finite


def test_input_validation_and_empty_batches():
    with pytest.raises(ValueError, match="a must have shape"):
        ch.cholesky(jnp.zeros((3, 4)))
    with pytest.raises(ValueError, match="right-hand side"):
        ch.spd_solve(jnp.eye(3), jnp.zeros(4))
    with pytest.raises(TypeError, match="complex"):
        ch.spd_solve(jnp.eye(2, dtype=jnp.complex64), jnp.ones(2))
    assert ch.spd_solve(jnp.zeros((0, 4, 4)), jnp.zeros((0, 4))).shape == (0, 4)
    assert ch.cholesky(jnp.zeros((2, 0, 0))).shape == (2, 0, 0)
    np.testing.assert_allclose(ch.spd_solve(2 * np.eye(3, dtype=np.int32), np.ones(3, np.int32)), 0.5 * np.ones(3))
    # leading dims broadcast between the matrix and the right-hand side
    a = _spd(np.random.default_rng(0), (1, 2), 4)
    b = np.random.default_rng(1).normal(size=(3, 1, 4))
    np.testing.assert_allclose(ch.spd_solve(a, b), _np_solve(np.broadcast_to(a, (3, 2, 4, 4)),
                                                             np.broadcast_to(b, (3, 2, 4))), atol=1e-12)


@pytest.mark.timeout(120)
def test_grad_through_checkpointed_scan():
    rng = np.random.default_rng(5)
    n = 9
    a, b = jnp.asarray(_spd(rng, (2,), n)), jnp.asarray(rng.normal(size=(2, n)))

    def rollout(solve, x0):
        @jax.checkpoint
        def step(x, _):
            mat = a + jnp.eye(n) * jnp.sum(x ** 2, axis=-1)[:, None, None]  # matrix depends on the state too
            return x + 0.1 * solve(mat, jnp.tanh(x)), None

        return jnp.sum(jax.lax.scan(step, x0, None, length=4)[0] ** 2)

    ours = jax.jit(jax.grad(lambda x: rollout(ch.spd_solve, x)))(b)
    ref = jax.grad(lambda x: rollout(lambda m, r: jnp.linalg.solve(m, r[..., None])[..., 0], x))(b)
    np.testing.assert_allclose(ours, ref, atol=1e-12, rtol=1e-10)


@pytest.mark.timeout(120)
def test_single_system_uses_lapack_and_matches_batched_kernel():
    """One matrix above UNROLL_MAX goes to LAPACK (3 calls); a batch uses the batch-minor kernel."""
    n = ch.UNROLL_MAX + 19
    rng = np.random.default_rng(3)
    a, b = _spd(rng, (3,), n), rng.normal(size=(3, n))
    prims = str(jax.make_jaxpr(ch.spd_solve)(a[0], b[0]))
    assert "cholesky" in prims and "triangular_solve" in prims
    assert "cholesky" not in str(jax.make_jaxpr(ch.spd_solve)(a, b))
    single = np.stack([np.asarray(jax.jit(ch.spd_solve)(a[k], b[k])) for k in range(3)])
    np.testing.assert_allclose(single, np.asarray(ch.spd_solve(a, b)), atol=1e-12)
    np.testing.assert_allclose(ch.cholesky(a[0]), np.linalg.cholesky(a[0]), atol=1e-12)
    check_grads(lambda x, r: ch.spd_solve(0.5 * (x + x.T), r), (a[0], b[0]), order=1, modes=("rev",))


@pytest.mark.timeout(120)
def test_single_bad_system_gives_nan_not_a_hang():
    n = ch.UNROLL_MAX + 4
    a = -_spd(np.random.default_rng(5), (), n)  # negative definite
    x = np.asarray(jax.jit(ch.spd_solve)(a, np.ones(n)))
    assert not np.isfinite(x).all()
