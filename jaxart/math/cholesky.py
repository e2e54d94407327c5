"""Small dense Cholesky factorisation and triangular solves, batch-minor, written in ``jax.numpy``.

Batched LAPACK Cholesky under ``vmap`` was seen to deadlock on small CPU machines, so the
articulation-sized SPD systems of every Featherstone step are factorised here.

Layout. Every public function flattens its leading batch dimensions (articulations, worlds, any
``vmap`` axes) into one axis ``M`` and processes it in chunks of :data:`CHUNK` systems. Inside a chunk
the batch axis is moved LAST (``(n, n, m)``: "batch-minor"), so every operation of the column loop
is a contiguous vector operation across the systems of the chunk, and the chunk's working set
(``n² · CHUNK`` floats) stays in the L2 cache for the whole factorisation. JAX's default ``vmap``
batching would instead put the batch axis first and make every column iteration touch the whole
``(B, n, n)`` array with strided accesses; the factor and the solves are therefore
:func:`jax.custom_batching.custom_vmap` functions whose batching rule calls the same function with
one more leading axis (nested ``vmap`` recurses through the same rule).

Algorithm (n > :data:`UNROLL_MAX`). Left-looking Cholesky on ``U = Lᵀ`` with a software-pipelined
``lax.fori_loop``: iteration ``j`` normalises the already-reduced column ``v_j``, writes row ``j`` of
``U``, then reduces the next column ``v_{j+1} = a[:, j+1] - Σ_k U[k] U[k, j+1]`` (the ``k`` sum
unrolled into one vectorised elementwise XLA loop; XLA:CPU's reduction over a major axis is ~9×
slower). Reducing ``v_{j+1}`` *after* the row write keeps the in-place update of ``U`` a tiny
dynamic-update-slice: in the natural order XLA fuses the sum into the in-place update and, to avoid
reading the buffer it writes, copies ``U`` row by row every iteration. The triangular solves are
column-oriented (``r -= T[:, j] x_j``, elementwise, no reduction) and pipelined the same way.
Systems with ``n ≤ UNROLL_MAX`` are fully unrolled (static, shrinking slices).

Measured (n = 27 as in the humanoid, float32, 1024 systems, XLA:CPU on the shared, loaded 2-core
development machine; per system; repeated, same process):

* before — ``(B, n, n)`` masked right-looking loops, default batching: 33 µs, compile 0.3 s;
* batch-minor right-looking loop (rank-1 trailing update per column): 33 µs, 0.3 s;
* batch-minor left-looking with a reduction over ``k``: 28 µs, 0.3 s;
* batch-minor left-looking, 4 columns per iteration: 11-15 µs, 0.5 s;
* batch-minor fully unrolled (factor alone): 11 µs, 3.7 s;
* this module (pipelined left-looking, chunks of 128): 2.1-2.5 µs, 0.6 s.

Chunking alone took the pipelined loop from 5 µs (whole batch at once: ``U`` is 3 MB, each column
streams it from L3) to ~2 µs; chunks of 32/64/256 measured slower; statically shrinking the trailing
part in 3 stages saved a further ~25 % of the factor for +0.3 s compile and was not kept. The
humanoid Featherstone step (``jit(vmap(step))``, 1024 worlds) went from ~63 µs to ~23 µs per world;
its compile time from ~8.5 s to ~8.8 s. Batch-minor wins because XLA:CPU vectorises the innermost,
contiguous dimension: with the batch there, every op of a column iteration is a handful of dense
SIMD loops over the systems instead of strided ``n``-length loops per system, and nothing in the
loop depends on ``B`` except the vector length.

A single system. When the flattened batch holds one matrix larger than :data:`UNROLL_MAX` (an
unbatched Featherstone step or its derivatives: one articulation, one world), the factor and the
solves are LAPACK's (``lax.linalg.cholesky``/``triangular_solve`` on the ``(n, n)`` matrix, no batch
dimension, so XLA's batched LAPACK map is never involved): three calls instead of ~300 small
loop operations. Humanoid, batch 1: step 217 → 203 µs, 100-step rollout gradient 19.4 → 18.2 ms.

Non-SPD / NaN input. Pivots ``≤ 0`` are clamped to ``finfo.tiny`` before the square root, so an
indefinite or singular system yields huge or non-finite entries and a NaN entry propagates NaN —
but only within that system: every operation is elementwise across the batch, loops have a fixed
trip count (nothing can hang), and the other systems of the batch are unaffected. A single system
factorised by LAPACK (above) has no clamping: a non-SPD matrix gives a NaN factor and solution.

Differentiation. :func:`spd_solve` is a :func:`jax.custom_jvp` whose rule evaluates the factor and
the solves on primal values only and expresses the tangent through ``lax.custom_linear_solve``, so
forward and reverse mode (and their ``vmap``) work without differentiating through the
``custom_vmap`` functions. The lower-level functions (:func:`cholesky`, :func:`solve_lower`,
:func:`solve_upper_t`, :func:`cho_solve`) support forward mode only (``custom_vmap`` has no
transpose rule): differentiate through :func:`spd_solve`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.custom_batching import custom_vmap

#: Up to this size the factorisation and solves are fully unrolled with static, shrinking slices;
#: beyond it a pipelined ``lax.fori_loop`` keeps program size and compile time flat in ``n``.
UNROLL_MAX = 8

#: Systems per batch-minor chunk (``n² · CHUNK`` floats are the working set of one factorisation).
CHUNK = 128

#: Up to this size the factor's sum over previous columns is an unrolled elementwise expression (one
#: vectorised XLA loop); larger systems use a reduction (~9× slower on XLA:CPU, but the loop body's
#: size stays ``O(1)`` in ``n``; n = 128 compiles in ~0.6 s unrolled).
SUM_UNROLL_MAX = 128


# --------------------------------------------------------------------------------------------- #
# Batch-minor kernels: matrices ``(n, n, m)``, right-hand sides ``(n, r, m)``; ``u = Lᵀ`` (``u[k, i] = L[i, k]``).
# --------------------------------------------------------------------------------------------- #


def _weighted_sum(x: jnp.ndarray, w: jnp.ndarray) -> jnp.ndarray:
    """``Σ_k x[k] · w[k]`` over the leading axis (unrolled elementwise for small ``n``)."""
    n = x.shape[0]
    if n > SUM_UNROLL_MAX:
        return jnp.sum(x * w, axis=0)
    acc = x[0] * w[0]
    for k in range(1, n):
        acc = acc + x[k] * w[k]
    return acc


def _pivot(v: jnp.ndarray) -> jnp.ndarray:
    """``sqrt`` of a diagonal entry, non-positive pivots clamped to ``finfo.tiny``."""
    return jnp.sqrt(jnp.maximum(v, jnp.finfo(v.dtype).tiny))


def _factor_unrolled(a: jnp.ndarray) -> jnp.ndarray:
    n, m = a.shape[0], a.shape[-1]
    rest, rows = a, []
    for j in range(n):
        col = rest[:, 0] / _pivot(rest[0, 0])
        rows.append(jnp.concatenate([jnp.zeros((j, m), a.dtype), col], axis=0))
        tail = col[1:]
        rest = rest[1:, 1:] - tail[:, None] * tail[None]
    return jnp.stack(rows, axis=0)


def _factor_loop(a: jnp.ndarray) -> jnp.ndarray:
    n = a.shape[0]
    rows = jnp.arange(n)[:, None]

    def reduced(u, j):  # v_j = a[:, j] - Σ_k U[k, :] U[k, j]  (rows k ≥ j of U are still zero)
        uj = lax.dynamic_index_in_dim(u, j, axis=1, keepdims=False)
        return lax.dynamic_index_in_dim(a, j, axis=1, keepdims=False) - _weighted_sum(u, uj[:, None, :])

    def column(j, carry):
        u, v = carry
        col = jnp.where(rows >= j, v, 0.0) / _pivot(lax.dynamic_index_in_dim(v, j, 0, keepdims=False))
        u = lax.dynamic_update_index_in_dim(u, col, j, axis=0)
        return u, reduced(u, jnp.minimum(j + 1, n - 1))

    u, _ = lax.fori_loop(0, n, column, (jnp.zeros_like(a), a[:, 0]))
    return u


def _factor(a: jnp.ndarray) -> jnp.ndarray:
    """``U = Lᵀ`` of batch-minor SPD matrices ``a`` ``(n, n, m)``."""
    return _factor_unrolled(a) if a.shape[0] <= UNROLL_MAX else _factor_loop(a)


def _substitute(cols: Callable[[jnp.ndarray], jnp.ndarray], diag: jnp.ndarray, b: jnp.ndarray,
                order: jnp.ndarray) -> jnp.ndarray:
    """Column-oriented triangular substitution, pipelined.

    Solves ``T x = b`` for a triangular ``T`` whose column ``j`` is ``cols(j)`` ``(n, m)`` (zero on the
    other side of the diagonal) and diagonal ``diag`` ``(n, m)``, visiting the unknowns in ``order``.
    The residual ``r`` ``(n, r, m)`` receives ``r -= T[:, j] x_j`` per step (an in-place elementwise
    update; solved rows are never touched again because ``T[:, j]`` is zero there) and ``x_j`` is
    stored in row ``j``, so at the end ``r`` is ``x``. ``x_j`` of the next step is computed after the
    update and carried, so the update never reads the buffer it writes.
    """
    n = b.shape[0]
    rows = jnp.arange(n)[:, None, None]

    def unknown(r, j):
        return lax.dynamic_index_in_dim(r, j, 0, keepdims=False) / lax.dynamic_index_in_dim(diag, j, 0, keepdims=False)

    def step(k, carry):
        r, xj = carry
        j = order[k]
        r = jnp.where(rows == j, xj, r - cols(j)[:, None] * xj)
        return r, unknown(r, order[jnp.minimum(k + 1, n - 1)])

    r, _ = lax.fori_loop(0, n, step, (b, unknown(b, order[0])))
    return r


def _forward(u: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Solve ``L y = b`` (``L[:, j] = u[j]``) for right-hand sides ``b`` ``(n, r, m)``."""
    n = u.shape[0]
    if n <= UNROLL_MAX:
        rest, ys = b, []
        for j in range(n):
            yj = rest[0] / u[j, j]
            ys.append(yj)
            rest = rest[1:] - u[j, j + 1:, None] * yj
        return jnp.stack(ys, axis=0)
    diag = jnp.diagonal(u, axis1=0, axis2=1).T
    return _substitute(lambda j: lax.dynamic_index_in_dim(u, j, 0, keepdims=False), diag, b, jnp.arange(n))


def _backward(u: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    """Solve ``Lᵀ x = y`` (``Lᵀ[:, j] = u[:, j]``) for right-hand sides ``y`` ``(n, r, m)``."""
    n = u.shape[0]
    if n <= UNROLL_MAX:
        rest, xs = y, []
        for j in range(n - 1, -1, -1):
            xj = rest[j] / u[j, j]
            xs.append(xj)
            rest = rest[:j] - u[:j, j, None] * xj
        return jnp.stack(xs[::-1], axis=0)
    diag = jnp.diagonal(u, axis1=0, axis2=1).T
    return _substitute(lambda j: lax.dynamic_index_in_dim(u, j, 1, keepdims=False), diag, y, jnp.arange(n)[::-1])


def _bm_cholesky(a: jnp.ndarray) -> jnp.ndarray:
    return jnp.swapaxes(_factor(a), 0, 1)


def _bm_solve_lower(low: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    return _forward(jnp.swapaxes(low, 0, 1), b)


def _bm_solve_upper_t(low: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    return _backward(jnp.swapaxes(low, 0, 1), y)


def _bm_cho_solve(low: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    u = jnp.swapaxes(low, 0, 1)
    return _backward(u, _forward(u, b))


def spd_solve_batch_minor(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Solve batch-minor SPD systems ``a`` ``(n, n, m)`` for ``b`` ``(n, r, m)`` inside a lane kernel (no
    chunking, no ``custom_vmap``; forward-mode differentiable only; pivots clamped as documented above)."""
    u = _factor(a)
    return _backward(u, _forward(u, b))



# --------------------------------------------------------------------------------------------- #
# Chunking over the flattened batch and the custom_vmap wrappers.
# --------------------------------------------------------------------------------------------- #


def _chunked(kernel: Callable[..., jnp.ndarray], *args: jnp.ndarray) -> jnp.ndarray:
    """Apply a batch-minor ``kernel`` to batch-leading ``args`` ``(M, ...)`` chunk by chunk.

    ``ceil(M / CHUNK)`` equal chunks of at most :data:`CHUNK` systems are sliced, moved to batch-minor,
    processed and written back; a last chunk that would run past ``M`` is shifted back to end at ``M``
    (its overlap is recomputed identically), so no padding copy of the inputs is made.
    """
    size = args[0].shape[0]
    chunks = -(-size // max(CHUNK, 1))
    mc = -(-size // chunks)  # balanced: 130 systems run as 2 chunks of 65, not 128 + 128

    def run(parts):
        return jnp.moveaxis(kernel(*[jnp.moveaxis(p, 0, -1) for p in parts]), -1, 0)

    if mc == size:
        return run(args)
    out = jax.eval_shape(run, [x[:mc] for x in args])

    def body(c, acc):
        start = jnp.minimum(c * mc, size - mc)
        parts = [lax.dynamic_slice_in_dim(x, start, mc, axis=0) for x in args]
        return lax.dynamic_update_slice_in_dim(acc, run(parts), start, axis=0)

    return lax.fori_loop(0, chunks, body, jnp.zeros((size,) + out.shape[1:], out.dtype))


def _apply(kernel: Callable[..., jnp.ndarray], mat: jnp.ndarray, rhs: jnp.ndarray | None = None) -> jnp.ndarray:
    """Run ``kernel`` on ``mat`` ``(..., n, n)`` and optional ``rhs`` ``(..., n, r)`` (equal leading dims).

    The output has the shape of ``rhs`` if given, else of ``mat``. A single system (one matrix) runs
    the LAPACK version of ``kernel`` (:data:`_LAPACK`) instead.
    """
    n = mat.shape[-1]
    like = mat if rhs is None else rhs
    if 0 in like.shape:
        return jnp.zeros(like.shape, mat.dtype)
    if math.prod(mat.shape[:-2]) == 1 and n > UNROLL_MAX:
        args = [mat.reshape(n, n)] + ([] if rhs is None else [rhs.reshape(rhs.shape[-2:])])
        return _LAPACK[kernel](*args).reshape(like.shape)
    args = [mat.reshape((-1, n, n))] + ([] if rhs is None else [rhs.reshape((-1,) + rhs.shape[-2:])])
    return _chunked(kernel, *args).reshape(like.shape)


def _lapack_factor(a: jnp.ndarray) -> jnp.ndarray:
    """``L`` of one ``(n, n)`` matrix; non-positive pivots give a non-finite factor."""
    return lax.linalg.cholesky(a, symmetrize_input=False)


def _lapack_lower(low: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    return lax.linalg.triangular_solve(low, b, left_side=True, lower=True)


def _lapack_upper_t(low: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    return lax.linalg.triangular_solve(low, y, left_side=True, lower=True, transpose_a=True)


def _lapack_cho_solve(low: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    return _lapack_upper_t(low, _lapack_lower(low, b))


def _lapack_spd_solve(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    return _lapack_cho_solve(_lapack_factor(a), b)


#: LAPACK versions of the batch-minor kernels, used for a single system.
_LAPACK = {_bm_cholesky: _lapack_factor, _bm_solve_lower: _lapack_lower, _bm_solve_upper_t: _lapack_upper_t,
           _bm_cho_solve: _lapack_cho_solve, spd_solve_batch_minor: _lapack_spd_solve}


def _matrix_rule(fun):
    def rule(axis_size, in_batched, mat):
        del axis_size
        return (fun(mat), True) if in_batched[0] else (fun.fun(mat), False)

    return rule


def _solve_rule(fun):
    """Batching rule of ``fun(mat, rhs)``; ``rhs`` ``(..., n, r)``.

    A batched matrix adds a leading axis (an unbatched ``rhs`` is broadcast); a shared matrix with a
    batched ``rhs`` folds the batch into extra right-hand-side columns, so the factorisation is not
    repeated (e.g. ``jacfwd``/``jacrev`` bases, custom_linear_solve tangents).
    """

    def rule(axis_size, in_batched, mat, rhs):
        if not any(in_batched):  # custom_vmap's JVP applies the rule to the primals alone
            return fun.fun(mat, rhs), False
        if in_batched[0]:
            rhs = rhs if in_batched[1] else jnp.broadcast_to(rhs, (axis_size,) + rhs.shape)
            return fun(mat, rhs), True
        folded = jnp.moveaxis(rhs, 0, -1)  # (..., n, r, S)
        out = fun(mat, folded.reshape(folded.shape[:-2] + (-1,)))
        return jnp.moveaxis(out.reshape(folded.shape), -1, 0), True

    return rule


@custom_vmap
def _cholesky_cv(a):
    return _apply(_bm_cholesky, a)


@custom_vmap
def _solve_lower_cv(low, b):
    return _apply(_bm_solve_lower, low, b)


@custom_vmap
def _solve_upper_t_cv(low, y):
    return _apply(_bm_solve_upper_t, low, y)


@custom_vmap
def _cho_solve_cv(low, b):
    return _apply(_bm_cho_solve, low, b)


@custom_vmap
def _spd_solve_cv(a, b):
    return _apply(spd_solve_batch_minor, a, b)


_cholesky_cv.def_vmap(_matrix_rule(_cholesky_cv))
for _f in (_solve_lower_cv, _solve_upper_t_cv, _cho_solve_cv, _spd_solve_cv):
    _f.def_vmap(_solve_rule(_f))


# --------------------------------------------------------------------------------------------- #
# Public API.
# --------------------------------------------------------------------------------------------- #


def _float_dtype(*xs: jnp.ndarray):
    dtype = jnp.result_type(*xs)
    if jnp.issubdtype(dtype, jnp.complexfloating):
        raise TypeError(f"complex dtype {dtype} is not supported (real SPD systems only)")
    if not jnp.issubdtype(dtype, jnp.floating):
        dtype = jax.dtypes.canonicalize_dtype(jnp.float64)
    return dtype


def _check_matrix(name: str, a: jnp.ndarray) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name} must have shape (..., n, n), got {a.shape}")


def _prepare(name: str, mat, vec):
    """Validate ``mat`` ``(..., n, n)`` / ``vec`` ``(..., n)``, promote to one float dtype, broadcast leading dims."""
    mat, vec = jnp.asarray(mat), jnp.asarray(vec)
    _check_matrix(name, mat)
    if vec.ndim < 1 or vec.shape[-1] != mat.shape[-1]:
        raise ValueError(f"right-hand side must have shape (..., {mat.shape[-1]}) to match {name} {mat.shape}, "
                         f"got {vec.shape}")
    dtype = _float_dtype(mat, vec)
    lead = jnp.broadcast_shapes(mat.shape[:-2], vec.shape[:-1])
    n = mat.shape[-1]
    return (jnp.broadcast_to(mat.astype(dtype), lead + (n, n)), jnp.broadcast_to(vec.astype(dtype), lead + (n,)))


def cholesky(a: jnp.ndarray) -> jnp.ndarray:
    """Lower-triangular ``L`` with ``L Lᵀ = a`` for symmetric positive-definite ``a``.

    Only the lower triangle of ``a`` is read. Non-positive pivots are clamped (see the module notes).
    Supports ``jit``, (nested) ``vmap`` and forward-mode autodiff; for reverse mode differentiate
    :func:`spd_solve`.

    Args:
        a: ``(..., n, n)`` SPD matrices.

    Returns:
        ``(..., n, n)`` lower-triangular factors (zero upper triangle).
    """
    a = jnp.asarray(a)
    _check_matrix("a", a)
    return _cholesky_cv(a.astype(_float_dtype(a)))


def solve_lower(low: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Solve ``L y = b`` by forward substitution (``low`` ``(..., n, n)``, ``b`` ``(..., n)``)."""
    low, b = _prepare("low", low, b)
    return _solve_lower_cv(low, b[..., None])[..., 0]


def solve_upper_t(low: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    """Solve ``Lᵀ x = y`` by backward substitution (``low`` ``(..., n, n)``, ``y`` ``(..., n)``)."""
    low, y = _prepare("low", low, y)
    return _solve_upper_t_cv(low, y[..., None])[..., 0]


def cho_solve(low: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Solve ``(L Lᵀ) x = b`` given the Cholesky factor ``low``."""
    low, b = _prepare("low", low, b)
    return _cho_solve_cv(low, b[..., None])[..., 0]


@jax.custom_jvp
def _spd_solve(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    return _spd_solve_cv(a, b[..., None])[..., 0]


@_spd_solve.defjvp
def _spd_solve_jvp(primals, tangents):
    a, b = primals
    da, db = tangents
    low = _cholesky_cv(a)
    x = _cho_solve_cv(low, b[..., None])[..., 0]
    rhs = db - jnp.einsum("...ij,...j->...i", da, x)

    def matvec(v):
        return jnp.einsum("...ij,...j->...i", a, v)

    dx = lax.custom_linear_solve(matvec, rhs, lambda _, r: _cho_solve_cv(low, r[..., None])[..., 0],
                                  symmetric=True)
    return x, dx


def spd_solve(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Solve ``a x = b`` for SPD ``a`` ``(..., n, n)`` and right-hand sides ``b`` ``(..., n)``.

    Leading dimensions broadcast. Differentiated implicitly (``ẋ = a⁻¹ (ḃ − ȧ x)`` through
    ``lax.custom_linear_solve`` reusing the factor), so neither forward nor reverse mode
    differentiates the factorisation loop; ``jit``, nested ``vmap``, ``grad``, ``jacfwd`` and their
    compositions all work. Only the lower triangle of ``a`` is read by the solve (its tangent uses the
    full ``ȧ``, so pass a symmetric ``a``).

    Args:
        a: ``(..., n, n)`` SPD matrices.
        b: ``(..., n)`` right-hand sides.

    Returns:
        ``(..., n)`` solutions.
    """
    return _spd_solve(*_prepare("a", a, b))
