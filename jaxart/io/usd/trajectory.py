"""Trajectories as animated USD stages (:func:`export_trajectory`): one time sample per frame."""

from __future__ import annotations

import numpy as np

from jaxart.io.usd.geom import WRITABLE, Names, check_path, new_stage, set_pose, write_shape
from jaxart.sim.enums import GeoType


def _np(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def export_trajectory(model, states, path, *, fps: float = 60.0) -> dict:
    """Write body poses over time as an animated USD stage (one time sample per frame).

    Each body is an ``Xform`` under ``/World`` whose ``translate``/``orient`` are sampled at frames
    0…T−1 (``timeCodesPerSecond = fps``); its visible shapes are UsdGeom children with fixed local
    transforms; static shapes sit under ``/World/static``. Opens in any USD viewer (``usdview``).

    Args:
        model: The :class:`~jaxart.Model` the states belong to.
        states: A :class:`~jaxart.State` with a leading time axis (``rollout``'s trajectory), a
            sequence of States, or an array of body poses ``(T, body_count, 7)``.
        path: Output file (``.usd``, ``.usda`` or ``.usdc``).
        fps: Frames per second of the samples (> 0).

    Returns:
        dict ``"bodies"`` (label → prim path), ``"frames"`` (T).

    Raises:
        TypeError / ValueError: Bad arguments (naming the argument and the expected shape).
    """
    from pxr import UsdGeom

    from jaxart.sim.model import Model, State
    from jaxart.sim.validate import as_float

    if not isinstance(model, Model):
        raise TypeError(f"export_trajectory: model must be a jaxart.Model, got {type(model).__name__}")
    fps = as_float(fps, "export_trajectory: fps", positive=True)
    path = check_path(path, "export_trajectory")
    if isinstance(states, State):
        poses = _np(states.body_q)
    elif isinstance(states, (list, tuple)) and states and all(isinstance(s, State) for s in states):
        poses = np.stack([_np(s.body_q) for s in states])
    else:
        poses = _np(states)
    nb = model.body_count
    if poses.ndim != 3 or poses.shape[1:] != (nb, 7) or poses.shape[0] < 1:
        raise ValueError(f"export_trajectory: states must hold body poses of shape (T, {nb}, 7) (a State with a "
                         f"leading time axis, a list of States or an array), got {poses.shape}")
    if not np.all(np.isfinite(poses)):
        raise ValueError("export_trajectory: states contain non-finite body poses")
    stage = new_stage(path, int(model.up_axis))
    stage.SetTimeCodesPerSecond(fps)
    stage.SetFramesPerSecond(fps)
    stage.SetStartTimeCode(0)
    stage.SetEndTimeCode(poses.shape[0] - 1)
    names, bodies = Names(), {}
    for b, label in enumerate(model.body_label):
        x = UsdGeom.Xform.Define(stage, names.child("/World", label))
        for t in range(poses.shape[0]):
            set_pose(x, poses[t, b], time=float(t))
        bodies[label] = str(x.GetPath())
    flags = np.asarray(model.shape_flags)
    for s in range(model.shape_count):
        geo = GeoType(int(np.asarray(model.shape_type)[s]))
        body = int(np.asarray(model.shape_body)[s])
        if geo not in WRITABLE or flags[s] & 4 or not flags[s] & 1:
            continue
        parent = bodies[model.body_label[body]] if body >= 0 else "/World/static"
        if body < 0 and not stage.GetPrimAtPath(parent):
            UsdGeom.Scope.Define(stage, parent)
        write_shape(stage, names.child(parent, model.shape_label[s]), geo, _np(model.shape_scale[s]),
                    _np(model.shape_transform[s]), mesh=model.meshes[s] if geo == GeoType.MESH else None)
    stage.GetRootLayer().Save()
    return {"bodies": bodies, "frames": int(poses.shape[0])}
