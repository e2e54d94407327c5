"""Trace-time checks of the arguments of public entry points (shapes, dtypes, types, concrete ``dt``).

Everything here reads only static information (``shape``/``dtype`` of arrays and tracers, Python types,
and the value of ``dt`` when it is a concrete number), so the checks cost nothing in compiled code and work
unchanged under ``jit``, ``vmap`` and ``grad``. Under ``vmap`` the mapped leading axes are invisible, so the
per-world shapes are checked; a direct call with extra leading axes (a batch passed without ``vmap``) is
rejected instead of broadcast silently. Values inside traced arrays (NaN, a traced ``dt``) cannot be checked
here; see the README section "Inputs at the boundary".

Every helper takes a ``what`` string naming the entry point and argument (``"eval_fk: joint_q"``).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.sim.state import Control, State

_BATCH_HINT = "; for a batch of worlds map the call with jax.vmap"


def _shape_dtype(x, what: str) -> tuple[tuple[int, ...], np.dtype]:
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return tuple(x.shape), np.dtype(x.dtype)
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be an array, got {type(x).__name__}") from None
    if arr.dtype == object:
        raise TypeError(f"{what} must be an array, got {type(x).__name__}")
    return arr.shape, arr.dtype


def check_array(x, shape: tuple[int, ...], what: str, *, kind: str = "real") -> None:
    """Check that ``x`` is an array (or array-like) of exactly ``shape`` with a suitable dtype.

    Args:
        x: Array, tracer, numpy array or nested list.
        shape: Expected per-world shape.
        what: Entry point and argument for the message.
        kind: ``"real"`` (integer or floating, not bool), ``"float"`` (floating) or ``"bool"``.

    Raises:
        TypeError: ``x`` is not array-like or has the wrong kind of dtype.
        ValueError: ``x`` has the wrong shape (a hint to use ``vmap`` when it only has extra leading axes).
    """
    got, dtype = _shape_dtype(x, what)
    floating = jnp.issubdtype(dtype, jnp.floating)  # also bfloat16 (numpy kind "V")
    ok = {"real": floating or jnp.issubdtype(dtype, jnp.integer), "float": floating, "bool": dtype == np.bool_}[kind]
    if not ok:
        expected = {"real": "a real (integer or floating)", "float": "a floating", "bool": "a boolean"}[kind]
        raise TypeError(f"{what} must have {expected} dtype, got {dtype}")
    if got != tuple(shape):
        hint = _BATCH_HINT if len(got) > len(shape) and got[len(got) - len(shape):] == tuple(shape) else ""
        raise ValueError(f"{what} must have shape {tuple(shape)}, got shape {got}{hint}")


def check_optional(x, shape: tuple[int, ...], what: str, *, kind: str = "real") -> None:
    """:func:`check_array` unless ``x`` is ``None``."""
    if x is not None:
        check_array(x, shape, what, kind=kind)


def check_state(model, state, what: str) -> None:
    """Check a :class:`~jaxart.State` against ``model`` (type, then every field's shape and dtype)."""
    if not isinstance(state, State):
        raise TypeError(f"{what} must be a jaxart.State (from model.state()), got {type(state).__name__}")
    nb, nc, nd = model.body_count, model.joint_coord_count, model.joint_dof_count
    for name, shape in (("body_q", (nb, 7)), ("body_qd", (nb, 6)), ("body_f", (nb, 6)),
                        ("joint_q", (nc,)), ("joint_qd", (nd,))):
        check_array(getattr(state, name), shape, f"{what}.{name}", kind="float")
    check_optional(state.actuator_act, (model.actuator.actuator_count,), f"{what}.actuator_act")


def check_control(model, control, what: str, *, lead: tuple[int, ...] = ()) -> None:
    """Check a :class:`~jaxart.Control` (or ``None``) against ``model``; ``lead`` = expected leading axes."""
    if control is None:
        return
    if not isinstance(control, Control):
        raise TypeError(f"{what} must be None or a jaxart.Control (from model.control()), got "
                        f"{type(control).__name__}")
    nc, nd, nt = model.joint_coord_count, model.joint_dof_count, model.tendon.tendon_count
    for name, shape in (("joint_f", (nd,)), ("joint_target_q", (nc,)), ("joint_target_qd", (nd,)),
                        ("joint_act", (nd,))):
        check_array(getattr(control, name), (*lead, *shape), f"{what}.{name}", kind="real")
    for name in ("tendon_f", "tendon_target_length", "tendon_target_velocity"):  # None: zero / model defaults
        check_optional(getattr(control, name), (*lead, nt), f"{what}.{name}")
    nm = len(model.mocap_joint)
    for name, shape in (("actuator_ctrl", (model.actuator.actuator_count,)), ("mocap_pos", (nm, 3)),
                        ("mocap_quat", (nm, 4))):  # None: zero input / mocap bodies stay
        check_optional(getattr(control, name), (*lead, *shape), f"{what}.{name}")


def check_contacts(contacts, what: str) -> None:
    """Check that ``contacts`` is ``None`` or one world's :class:`~jaxart.Contacts` (``point`` ``(c, 3)``)."""
    from jaxart.collision.contacts import Contacts

    if contacts is None:
        return
    if not isinstance(contacts, Contacts):
        raise TypeError(f"{what} must be None or a jaxart.Contacts (from model.collide(state)), got "
                        f"{type(contacts).__name__}")
    shape, _ = _shape_dtype(contacts.point, what)
    if len(shape) != 2:
        raise ValueError(f"{what}.point must have shape (capacity, 3), got shape {shape}{_BATCH_HINT}")
    c = shape[0]
    for name, shp in (("point", (c, 3)), ("normal", (c, 3)), ("separation", (c,)), ("active", (c,))):
        check_array(getattr(contacts, name), shp, f"{what}.{name}", kind="bool" if name == "active" else "float")


def check_dt(dt, what: str) -> None:
    """Check a time step: a real scalar; when concrete (not traced) also finite and > 0.

    A traced ``dt`` (an argument of a jitted function) has no value at trace time; only its shape and
    dtype are checked.
    """
    if dt is None:
        raise ValueError(f"{what} is required (time step in seconds), got None")
    if isinstance(dt, bool):
        raise TypeError(f"{what} must be a real number, got bool")
    check_array(dt, (), what, kind="real")
    if isinstance(dt, jax.core.Tracer):
        return
    value = float(np.asarray(dt))
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"{what} must be a finite time step > 0 [s], got {value}")


def check_step(solver, state, control, contacts, dt) -> None:
    """All arguments of ``solver.step(state, control, contacts, dt)`` (one call per solver)."""
    name = f"{type(solver).__name__}.step"
    check_state(solver.model, state, f"{name}: state")
    check_control(solver.model, control, f"{name}: control")
    check_contacts(contacts, f"{name}: contacts")
    check_dt(dt, f"{name}: dt")


def check_fk(model, joint_q, joint_qd, state) -> None:
    """Arguments of :func:`~jaxart.eval_fk`."""
    check_array(joint_q, (model.joint_coord_count,), "eval_fk: joint_q")
    check_array(joint_qd, (model.joint_dof_count,), "eval_fk: joint_qd")
    if state is not None:
        check_state(model, state, "eval_fk: state")


def check_ik(model, state, joint_q, joint_qd) -> None:
    """Arguments of :func:`~jaxart.eval_ik`."""
    check_state(model, state, "eval_ik: state")
    check_optional(joint_q, (model.joint_coord_count,), "eval_ik: joint_q")
    check_optional(joint_qd, (model.joint_dof_count,), "eval_ik: joint_qd")


def check_dynamics(fn: str, model, state, *, joint_qdd=None, body_f=None, control=None) -> None:
    """Arguments of the :mod:`jaxart.dynamics` functions (``fn`` names the function)."""
    check_state(model, state, f"{fn}: state")
    check_optional(joint_qdd, (model.joint_dof_count,), f"{fn}: joint_qdd")
    check_optional(body_f, (model.body_count, 6), f"{fn}: body_f")
    check_control(model, control, f"{fn}: control")


def check_rollout(step_fn, state, controls, dt, steps: int) -> None:
    """Arguments of :func:`~jaxart.rollout` that are known before the scan traces the step.

    With a solver: the state against its model, ``Control`` leaves as ``(T, …)`` and a concrete ``dt``.
    Other step callables own their arguments (``dt`` is still checked when given).
    """
    model = getattr(step_fn, "model", None)
    if hasattr(step_fn, "step") and model is not None:
        check_state(model, state, "rollout: state")
        if controls is not None and not isinstance(controls, Control):
            raise TypeError(f"rollout: controls must be None or a jaxart.Control with a leading time axis, got "
                            f"{type(controls).__name__}")
        check_control(model, controls, "rollout: controls", lead=(steps,))
    if dt is not None:
        check_dt(dt, "rollout: dt")


def check_leaf_items(leaf, count: int, elem_ndim: int, what: str) -> None:
    """Check a ``(*batch, count, *elem)`` leaf read by a selection view: its item axis must be ``count``.

    Without this, a leaf from another model would be gathered with out-of-range static indices.
    """
    shape, _ = _shape_dtype(leaf, what)
    if len(shape) < 1 + elem_ndim or shape[len(shape) - 1 - elem_ndim] != count:
        raise ValueError(f"{what} must have shape (*batch, {count}{', ...' * elem_ndim}) for this model, got "
                         f"shape {shape}")
