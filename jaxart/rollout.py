"""Rollouts: ``lax.scan`` over solver steps with checkpointing and truncated back-propagation.

``rollout`` is pure, so it composes with ``jit``, ``grad`` and ``vmap`` (batch worlds by mapping
over the leading axis of ``state`` and ``controls``)::

    solver = jaxart.solvers.SolverFeatherstone(model)
    final, traj = jax.jit(lambda s, c: jaxart.rollout(solver, s, c, dt=1e-3, remat="nested"))(state, controls)
    batched = jax.vmap(lambda s, c: jaxart.rollout(solver, s, c, dt=1e-3))(states, controls)  # 1024 worlds

With a solver, each step collides first when the model has shapes that may touch: ``model.collide``
at the step's starting ``body_q``, then ``solver.step(state, control, contacts, dt)`` (``collide=False``
rolls out without contacts; solvers that find contacts themselves, such as ``SolverMuJoCo`` with
MuJoCo's collision, are given ``None``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jaxart.collision.collide import NEVER_COLLIDE, default_capacity
from jaxart.collision.pairs import pair_groups
from jaxart.math.checkpoint import light
from jaxart.sim import checks

_REMAT = ("light", None, "step", "nested")


def rollout(step_fn: Any, state, controls=None, *, dt=None, length: int | None = None, remat: str | None = "light",
            truncate: int | None = None, output_fn: Callable | None = None, collide: bool | None = None,
            contact_capacity: int | None = None):
    """Run ``len(controls)`` steps with ``lax.scan``.

    Args:
        step_fn: A solver (its ``step(state, control, None, dt)`` is used), a callable
            ``(state, control, dt) -> state`` when ``dt`` is given, or ``(state, control) -> state``.
        state: Initial state (any pytree).
        controls: Pytree whose leaves have a leading time axis ``T`` (e.g. a ``Control`` with
            ``joint_f`` of shape ``(T, nd)``), or ``None`` (then ``length`` is required and the step
            receives ``None``).
        dt: Time step passed to the step.
        length: Number of steps when ``controls`` is ``None``.
        remat: What the backward pass stores per step (forward values are the same for all):

            * ``"light"`` (default, :mod:`jaxart.math.checkpoint`): the results of gathers, products,
              reductions and factorisations; elementwise arithmetic is recomputed. Measured against storing
              every residual: humanoid 100-step gradient 15.5–16.8 vs 18.1–18.4 ms, arm 8.9 vs 9.8 ms,
              half the memory; 64 humanoid worlds 0.34 vs 0.37 s; XPBD 1.08 vs 1.42 s. jaxart's solvers
              already run their step under this checkpoint (``checkpointed_step``), so for them
              ``"light"`` and ``None`` are the same program; other step callables are wrapped here.
            * ``None``: no checkpoint of the scan body (JAX's default for anything the step does not
              checkpoint itself).
            * ``"step"``: checkpoints every step (the backward pass recomputes each step; memory
              O(T) states only). Fastest for many worlds under ``vmap`` (64 humanoid worlds: 0.29 s),
              slower for one world (~22 ms).
            * ``"nested"``: scans ``≈√T`` segments of ``≈√T`` checkpointed steps (memory O(√T)).
        truncate: Stop gradients through the state every ``truncate`` steps (truncated BPTT).
        output_fn: Maps each new state to the recorded output (default: the state itself).
        collide: Whether each step calls ``model.collide`` on the step's starting state and passes the
            contacts to ``step_fn.step``. ``None`` (default): yes for a jaxart solver whose model has
            candidate shape pairs (:func:`jaxart.collision.candidate_pairs`), unless the solver finds
            contacts itself (``solver.detects_contacts``); no for other step callables. ``True``
            requires such a solver; ``False`` never collides (the step receives ``None``).
        contact_capacity: ``capacity`` passed to ``model.collide`` (default: every narrow-phase slot).

    Returns:
        ``(final_state, outputs)`` with outputs stacked along a leading time axis.

    Raises:
        ValueError: Unknown ``remat``, non-positive ``truncate``, missing ``length``/``dt``, or
            ``collide=True`` without a solver that takes contacts.
        NotImplementedError: The model has a shape pair that ``collide`` cannot handle (pass
            ``collide=False`` to roll out without contacts).
    """
    if remat not in _REMAT:
        raise ValueError(f"rollout: remat must be one of {_REMAT}, got {remat!r}")
    if truncate is not None and int(truncate) < 1:
        raise ValueError(f"rollout: truncate must be a positive step count, got {truncate!r}")
    step = _as_step(step_fn, dt, _wants_contacts(step_fn, collide), contact_capacity)
    steps = _num_steps(controls, length)
    checks.check_rollout(step_fn, state, controls, dt, steps)
    out_fn = output_fn if output_fn is not None else (lambda s: s)

    def body(carry, xs):
        s, i = carry
        if truncate is not None:
            cut = (i % int(truncate) == 0) & (i > 0)
            s = jax.tree_util.tree_map(lambda x: jnp.where(cut, jax.lax.stop_gradient(x), x), s)
        s = step(s, xs)
        return (s, i + 1), out_fn(s)

    if remat == "step":
        body = jax.checkpoint(body)
    elif remat == "light" and not getattr(step_fn, "checkpointed_step", False):
        body = light(body)  # jaxart's solvers checkpoint their step themselves (SolverBase.checkpointed_step)
    carry0 = (state, jnp.zeros((), jnp.int32))
    if remat == "nested":
        (final, _), outs = _nested_scan(body, carry0, controls, steps)
    else:
        (final, _), outs = jax.lax.scan(body, carry0, controls, length=steps)
    return final, outs


def _wants_contacts(step_fn, collide: bool | None) -> bool:
    """Resolve ``collide`` (see :func:`rollout`) for this step function."""
    if collide is not None and not isinstance(collide, bool):
        raise TypeError(f"rollout: collide must be None, True or False, got {type(collide).__name__}")
    model = getattr(step_fn, "model", None)
    takes_contacts = hasattr(step_fn, "step") and model is not None and not getattr(step_fn, "detects_contacts",
                                                                                     False)
    if collide is True and not takes_contacts:
        raise ValueError("rollout: collide=True needs a jaxart solver that steps the contacts it is given (a "
                         f"{type(step_fn).__name__} that finds contacts itself or owns its arguments was passed)")
    if collide is False or not takes_contacts:
        return False
    if collide is None and not any((g.type_a, g.type_b) not in NEVER_COLLIDE for g in pair_groups(model.topology)):
        return False
    try:
        default_capacity(model)  # raises for a pair without a narrow phase
    except NotImplementedError as e:
        raise NotImplementedError(f"rollout collides by default: {e} Pass collide=False to roll out without "
                                  "contacts.") from None
    return True


def _as_step(step_fn, dt, with_contacts: bool = False, capacity: int | None = None):
    if hasattr(step_fn, "step"):
        if dt is None:
            raise ValueError("rollout: pass dt=... when step_fn is a solver")
        if with_contacts:
            model = step_fn.model
            return lambda s, c: step_fn.step(s, c, model.collide(s, capacity=capacity), dt)
        return lambda s, c: step_fn.step(s, c, None, dt)
    if not callable(step_fn):
        raise TypeError(f"rollout: step_fn must be a solver or a callable, got {type(step_fn).__name__}")
    if dt is not None:
        return lambda s, c: step_fn(s, c, dt)
    return step_fn


def _num_steps(controls, length) -> int:
    leaves = jax.tree_util.tree_leaves(controls)
    if not leaves:
        if length is None:
            raise ValueError("rollout: pass length=... when controls is None")
        return int(length)
    if any(jnp.ndim(x) == 0 for x in leaves):
        raise ValueError("rollout: every leaf of controls needs a leading time axis, got a scalar leaf")
    t = int(leaves[0].shape[0])
    if any(x.shape[0] != t for x in leaves):
        raise ValueError(f"rollout: controls' leaves disagree on the time axis: {[x.shape for x in leaves]}")
    if length is not None and int(length) != t:
        raise ValueError(f"rollout: length={length} disagrees with the controls' time axis ({t})")
    return t


def _nested_scan(body, carry0, controls, steps: int):
    """Scan ``outer`` checkpointed segments of ``inner`` steps (``outer · inner = steps``, ``inner ≈ √T``)."""
    inner = max(d for d in range(1, math.isqrt(steps) + 1) if steps % d == 0) if steps else 1
    outer = steps // inner if steps else 0
    xs = jax.tree_util.tree_map(lambda x: x.reshape((outer, inner) + x.shape[1:]), controls)

    @jax.checkpoint
    def segment(carry, seg_xs):
        return jax.lax.scan(jax.checkpoint(body), carry, seg_xs, length=inner)

    final, outs = jax.lax.scan(segment, carry0, xs, length=outer)
    outs = jax.tree_util.tree_map(lambda x: x.reshape((outer * inner,) + x.shape[2:]), outs)
    return final, outs
