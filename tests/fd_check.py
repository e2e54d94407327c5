"""Forward-mode derivatives checked column by column against central finite differences (one compilation)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def _jvp(fn):
    return jax.jit(lambda x, v, *args: jax.jvp(lambda y: fn(y, *args), (x,), (v,)))


def jacobian_vs_fd(fn, x, eps, args=(), *, compiled=None) -> tuple[np.ndarray, np.ndarray]:
    """``(J, J_fd)``, both ``(n_out, n_in)``: the Jacobian of ``fn(x, *args)`` (flat float64 vector → flat vector)
    with respect to ``x`` by ``jax.jvp``, one column per unit direction, and by central differences with the
    per-input steps ``eps``.

    One jitted function serves both (its primal output gives the differences), so a check compiles the step's
    forward-mode derivative once and nothing else; ``args`` are traced (pass ``compiled=jvp_of(fn)`` to share
    that compilation between checks at different ``args``).
    """
    x = jnp.asarray(x, jnp.float64)
    jvp = _jvp(fn) if compiled is None else compiled
    cols, fds = [], []
    for i in range(x.size):
        v = jnp.zeros_like(x).at[i].set(1.0)
        cols.append(np.asarray(jvp(x, v, *args)[1]))
        plus, minus = (np.asarray(jvp(x + s * eps[i] * v, v, *args)[0]) for s in (1.0, -1.0))
        fds.append((plus - minus) / (2.0 * eps[i]))
    return np.stack(cols, 1), np.stack(fds, 1)


def jvp_of(fn):
    """The compiled ``(x, v, *args) ↦ jvp`` that :func:`jacobian_vs_fd` uses (to share it between checks)."""
    return _jvp(fn)


def assert_jacobian_matches_fd(fn, x, eps, args=(), *, compiled=None, rtol: float = 1e-6,
                               atol: float = 1e-8) -> np.ndarray:
    """Assert each column of :func:`jacobian_vs_fd` matches (``atol`` relative to the column's largest entry, at
    least 1) and that the derivative is not trivially zero; return the Jacobian."""
    jac, fd = jacobian_vs_fd(fn, x, eps, args, compiled=compiled)
    assert np.all(np.isfinite(jac))
    for i in range(jac.shape[1]):
        scale = max(1.0, float(np.abs(fd[:, i]).max()))
        np.testing.assert_allclose(jac[:, i], fd[:, i], rtol=rtol, atol=atol * scale, err_msg=f"input {i}")
    assert np.abs(jac).max() > 1e-3
    return jac
