"""Small dense Cholesky factorisation and triangular solves written in ``jax.numpy``.

Batched LAPACK Cholesky under ``vmap`` was seen to deadlock on small CPU machines, so the
articulation-sized systems are factorised with a column loop (unrolled up to ``UNROLL_MAX``
columns, ``lax.fori_loop`` beyond) vectorised over any leading batch axes (articulations, worlds).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

#: Up to this size the factorisation and solves are unrolled with static, shrinking slices
#: (``n³/3`` flops, fused by XLA, no per-column loop overhead); larger systems use a
#: ``lax.fori_loop`` over masked full-size columns to bound program size and compile time
#: (measured on the 27-DOF humanoid step: unrolled ≈ 2× faster solve but ≈ 2.5× longer compile).
UNROLL_MAX = 8


def _cholesky_unrolled(a: jnp.ndarray) -> jnp.ndarray:
    n = a.shape[-1]
    rest, cols = a, []
    for j in range(n):
        d = jnp.sqrt(jnp.maximum(rest[..., 0, 0], jnp.finfo(a.dtype).tiny))
        col = rest[..., :, 0] / d[..., None]
        cols.append(jnp.concatenate([jnp.zeros(col.shape[:-1] + (j,), a.dtype), col], axis=-1))
        tail = col[..., 1:]
        rest = rest[..., 1:, 1:] - tail[..., :, None] * tail[..., None, :]
    return jnp.stack(cols, axis=-1)


def _solve_lower_unrolled(low: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    ys = []
    for j in range(low.shape[-1]):
        acc = b[..., j]
        if j:
            acc = acc - jnp.sum(low[..., j, :j] * jnp.stack(ys, axis=-1), axis=-1)
        ys.append(acc / low[..., j, j])
    return jnp.stack(ys, axis=-1)


def _solve_upper_t_unrolled(low: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    n = low.shape[-1]
    xs = []  # x_{n-1}, x_{n-2}, ...
    for j in range(n - 1, -1, -1):
        acc = y[..., j]
        if xs:
            acc = acc - jnp.sum(low[..., j + 1:, j] * jnp.stack(xs[::-1], axis=-1), axis=-1)
        xs.append(acc / low[..., j, j])
    return jnp.stack(xs[::-1], axis=-1)


def cholesky(a: jnp.ndarray) -> jnp.ndarray:
    """Lower-triangular ``L`` with ``L Lᵀ = a`` for symmetric positive-definite ``a``.

    Args:
        a: ``(..., n, n)`` SPD matrices.

    Returns:
        ``(..., n, n)`` lower-triangular factors.
    """
    n = a.shape[-1]
    if n <= UNROLL_MAX:
        return _cholesky_unrolled(a)
    rows = jnp.arange(n)

    def column(j, carry):
        low, rest = carry
        d = jnp.sqrt(jnp.maximum(rest[..., j, j], jnp.finfo(a.dtype).tiny))
        col = jnp.where(rows >= j, rest[..., :, j], 0.0) / d[..., None]
        rest = rest - col[..., :, None] * col[..., None, :]
        return low.at[..., :, j].set(col), rest

    low, _ = jax.lax.fori_loop(0, n, column, (jnp.zeros_like(a), a))
    return low


def solve_lower(low: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Solve ``L y = b`` by forward substitution (``low`` ``(..., n, n)``, ``b`` ``(..., n)``)."""
    n = low.shape[-1]
    if n <= UNROLL_MAX:
        return _solve_lower_unrolled(low, b)

    def row(j, y):
        yj = (b[..., j] - jnp.sum(low[..., j, :] * y, axis=-1)) / low[..., j, j]
        return y.at[..., j].set(yj)

    return jax.lax.fori_loop(0, n, row, jnp.zeros_like(b))


def solve_upper_t(low: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    """Solve ``Lᵀ x = y`` by backward substitution."""
    n = low.shape[-1]
    if n <= UNROLL_MAX:
        return _solve_upper_t_unrolled(low, y)

    def row(k, x):
        j = n - 1 - k
        xj = (y[..., j] - jnp.sum(low[..., :, j] * x, axis=-1)) / low[..., j, j]
        return x.at[..., j].set(xj)

    return jax.lax.fori_loop(0, n, row, jnp.zeros_like(y))


def cho_solve(low: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Solve ``(L Lᵀ) x = b`` given the Cholesky factor ``low``."""
    return solve_upper_t(low, solve_lower(low, b))


@jax.custom_jvp
def spd_solve(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Solve ``a x = b`` for SPD ``a`` ``(..., n, n)`` and right-hand sides ``b`` ``(..., n)``.

    Differentiated implicitly (``ẋ = a⁻¹ (ḃ − ȧ x)`` through ``lax.custom_linear_solve`` reusing the
    factor), so neither forward nor reverse mode differentiates the factorisation loop.
    """
    return cho_solve(cholesky(a), b)


@spd_solve.defjvp
def _spd_solve_jvp(primals, tangents):
    a, b = primals
    da, db = tangents
    low = cholesky(a)
    x = cho_solve(low, b)
    rhs = db - jnp.einsum("...ij,...j->...i", da, x)

    def matvec(v):
        return jnp.einsum("...ij,...j->...i", a, v)

    dx = jax.lax.custom_linear_solve(matvec, rhs, lambda _, r: cho_solve(low, r), symmetric=True)
    return x, dx
