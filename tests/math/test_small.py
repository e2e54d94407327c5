"""Tiny-axis sums and products (``jaxart.math.small``): values, gradients, and reduction-free reverse mode."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

from jaxart.math import quat_exp, quat_mul, quat_normalize, quat_rotate, safe_normalize, small  # noqa: E402


def _reductions(jaxpr) -> list:
    """``reduce_sum`` over axes longer than one and ``dot_general`` equations, sub-jaxprs included."""
    found = []

    def walk(j):
        for eqn in j.eqns:
            if eqn.primitive.name == "dot_general" or (eqn.primitive.name == "reduce_sum" and any(
                    eqn.invars[0].aval.shape[a] > 1 for a in eqn.params["axes"])):
                found.append(eqn)
            for p in eqn.params.values():
                for sub in p if isinstance(p, (list, tuple)) else (p,):
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        walk(inner)

    walk(jaxpr.jaxpr)
    return found


def test_values_match_numpy_with_broadcasting():
    rng = np.random.default_rng(0)
    m, v = rng.normal(size=(4, 1, 6, 6)), rng.normal(size=(3, 6))
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5))
    np.testing.assert_allclose(small.matvec(m, v), np.einsum("...ij,...j->...i", m, v), atol=1e-12)
    np.testing.assert_allclose(small.matmul(a, b), a @ b, atol=1e-12)
    np.testing.assert_allclose(small.dot_last(a, a), np.sum(a * a, -1), atol=1e-12)
    np.testing.assert_allclose(small.sum_axis(a, 1, keepdims=True), np.sum(a, 1, keepdims=True), atol=1e-12)
    np.testing.assert_allclose(small.spread(v[:, None, :], 4, 1), np.broadcast_to(v[:, None, :], (3, 4, 6)))
    assert small.spread(v[:, :1], 1).shape == (3, 1)


def test_spread_needs_a_size_one_axis():
    with pytest.raises(ValueError, match="size-one axis"):
        small.spread(jnp.zeros((3, 2)), 4, -1)


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    m, v = rng.normal(size=(2, 6, 6)), rng.normal(size=(2, 6))
    a, b = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    check_grads(small.matvec, (m, v), order=2, modes=("fwd", "rev"))
    check_grads(small.matmul, (a, b), order=2, modes=("fwd", "rev"))
    check_grads(quat_normalize, (rng.normal(size=(5, 4)),), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["matvec", "matmul", "quat_normalize", "quat_mul", "quat_rotate", "quat_exp",
                                  "safe_normalize"])
def test_batched_reverse_mode_has_no_reductions(name):
    """The transposes of these products are element-wise: a broadcast would transpose into a tiny-axis
    reduction, which XLA:CPU hands to slow per-row library calls (2x slower batched gradients)."""
    rng = np.random.default_rng(2)
    fns = {
        "matvec": (small.matvec, (rng.normal(size=(8, 5, 6, 6)), rng.normal(size=(8, 5, 6)))),
        "matmul": (small.matmul, (rng.normal(size=(8, 5, 3, 3)), rng.normal(size=(8, 5, 3, 3)))),
        "quat_normalize": (lambda x, y: quat_normalize(x) * y,
                           (rng.normal(size=(8, 5, 4)), rng.normal(size=(8, 5, 4)))),
        "quat_mul": (quat_mul, (rng.normal(size=(8, 5, 4)), rng.normal(size=(8, 5, 4)))),
        "quat_rotate": (quat_rotate, (rng.normal(size=(8, 5, 4)), rng.normal(size=(8, 5, 3)))),
        "quat_exp": (lambda x, y: quat_exp(x) * y, (rng.normal(size=(8, 5, 3)), rng.normal(size=(8, 5, 4)))),
        "safe_normalize": (lambda x, y: safe_normalize(x) * y,
                           (rng.normal(size=(8, 5, 3)), rng.normal(size=(8, 5, 3)))),
    }
    fn, args = fns[name]

    def pullback(x, y):  # reverse mode without a scalar loss (whose own sum is a legitimate reduction)
        out, vjp = jax.vjp(fn, x, y)
        return vjp(out)

    assert not _reductions(jax.make_jaxpr(jax.vmap(pullback))(*args))
