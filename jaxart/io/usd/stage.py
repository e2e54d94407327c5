"""Opening a USD stage and running usd-core's own UsdPhysics parser (``ModelBuilder.add_usd``).

Everything physical is read from the descriptors of ``UsdPhysics.LoadUsdPhysicsFromRange`` (renamed
``UsdPhysicsLoadStageFromPrimRange`` in newer usd-core; both are accepted), never by walking prims.
The stage is only traversed to reject joint prims the parser cannot know (``PhysxGearJoint``, custom
joint schemas), so they fail loudly instead of vanishing.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from jaxart.sim.validate import np_quat_between

_AXIS = {"X": np.array([1.0, 0.0, 0.0]), "Y": np.array([0.0, 1.0, 0.0]), "Z": np.array([0.0, 0.0, 1.0])}


@dataclass
class ParsedStage:
    """The UsdPhysics descriptors of one stage, keyed by prim path (``str``), plus its units.

    Attributes:
        stage: The opened ``Usd.Stage``.
        what: Description of the source for messages.
        meters_per_unit: ``metersPerUnit`` of the stage (lengths are multiplied by it).
        kilograms_per_unit: ``kilogramsPerUnit`` of the stage (masses are multiplied by it).
        up_axis: ``"X"``, ``"Y"`` or ``"Z"``.
        descs: ``{ObjectType name: {prim path: descriptor}}`` (e.g. ``"RigidBody"``, ``"RevoluteJoint"``).
    """

    stage: object
    what: str
    meters_per_unit: float
    kilograms_per_unit: float
    up_axis: str
    descs: dict = field(default_factory=dict)

    def of(self, kind: str) -> dict:
        """Descriptors of one ``UsdPhysics.ObjectType`` name (empty dict when absent)."""
        return self.descs.get(kind, {})

    @property
    def up_vector(self) -> np.ndarray:
        """Unit vector of the stage's up axis."""
        return _AXIS[self.up_axis]


def open_stage(source, *, what_fn: str = "add_usd"):
    """Open a USD file path, a ``.usda`` text or an existing ``Usd.Stage``.

    Args:
        source: Path (``str``/``os.PathLike``), USDA text starting with ``#usda``, or a ``Usd.Stage``.
        what_fn: Function name used in messages.

    Returns:
        ``(description, stage)``.

    Raises:
        TypeError: ``source`` of another type.
        ValueError: Missing file or a stage USD cannot open (USD's message included).
    """
    from pxr import Sdf, Tf, Usd

    if isinstance(source, Usd.Stage):
        return f"<stage {source.GetRootLayer().identifier}>", source
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        raise TypeError(f"{what_fn}: source must be a USD file path, USDA text or a Usd.Stage, "
                        f"got {type(source).__name__}")
    is_text = source.lstrip().startswith("#usda")
    what = "<USDA text>" if is_text else repr(source)
    if not is_text and not os.path.isfile(source):
        raise ValueError(f"{what_fn}: USD file {source!r} does not exist")
    try:
        if is_text:
            layer = Sdf.Layer.CreateAnonymous(".usda")
            if not layer.ImportFromString(source):
                raise ValueError("the text is not valid USDA")
            stage = Usd.Stage.Open(layer)
        else:
            stage = Usd.Stage.Open(source)
    except (Tf.ErrorException, ValueError, RuntimeError) as e:
        msg = " ".join(str(e).split())
        raise ValueError(f"{what_fn}: USD could not open {what}: {msg}") from None
    if stage is None:
        raise ValueError(f"{what_fn}: USD could not open {what}")
    return what, stage


def parse_stage(source, *, what_fn: str = "add_usd") -> ParsedStage:
    """Open ``source`` and run the UsdPhysics parser over the whole stage.

    Raises:
        ValueError: Unopenable stage, or joint prims of a type the parser does not know (naming them).
    """
    from pxr import UsdGeom, UsdPhysics

    what, stage = open_stage(source, what_fn=what_fn)
    load = getattr(UsdPhysics, "UsdPhysicsLoadStageFromPrimRange", None) or UsdPhysics.LoadUsdPhysicsFromRange
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        raw = load(stage, ["/"])
    descs: dict = {}
    for kind, (paths, items) in raw.items():
        descs[kind.name if hasattr(kind, "name") else str(kind).rsplit(".", 1)[-1]] = {
            str(p): d for p, d in zip(paths, items, strict=True)}
    up = str(UsdGeom.GetStageUpAxis(stage))
    parsed = ParsedStage(stage=stage, what=what, meters_per_unit=float(UsdGeom.GetStageMetersPerUnit(stage)),
                         kilograms_per_unit=float(UsdPhysics.GetStageKilogramsPerUnit(stage)),
                         up_axis=up if up in _AXIS else "Z", descs=descs)
    _reject_unknown_joints(parsed, what_fn)
    return parsed


def _reject_unknown_joints(parsed: ParsedStage, what_fn: str) -> None:
    from pxr import UsdPhysics

    known = set()
    for kind, d in parsed.descs.items():
        if kind.endswith("Joint") and kind != "CustomJoint":
            known |= set(d)
    custom = sorted(parsed.of("CustomJoint"))
    unknown = [(p, parsed.stage.GetPrimAtPath(p).GetTypeName()) for p in custom]
    for prim in parsed.stage.Traverse():
        name = str(prim.GetTypeName())
        path = str(prim.GetPath())
        if path in known or path in custom:
            continue
        if prim.IsA(UsdPhysics.Joint) and name.startswith("Physics"):
            raise ValueError(f"{what_fn}({parsed.what}): joint {path!r} ({name}) was rejected by the UsdPhysics "
                             "parser (check its physics:body0/body1 relationships)")
        if name.endswith("Joint") or prim.IsA(UsdPhysics.Joint):
            unknown.append((path, name))
    for kind, d in parsed.descs.items():
        bad = [p for p, desc in d.items() if hasattr(desc, "isValid") and not desc.isValid]
        if bad:
            raise ValueError(f"{what_fn}({parsed.what}): invalid {kind} descriptor(s) from the UsdPhysics parser "
                             f"at {bad[:8]}")
    if unknown:
        shown = ", ".join(f"{p!r} (type {t!r})" for p, t in unknown[:8])
        raise ValueError(f"{what_fn}({parsed.what}): unknown joint type(s): {shown}; jaxart imports "
                         "PhysicsFixedJoint, PhysicsRevoluteJoint, PhysicsPrismaticJoint, PhysicsSphericalJoint, "
                         "PhysicsDistanceJoint and generic PhysicsJoint (D6)")


def up_rotation(stage_up: np.ndarray, builder_up) -> np.ndarray:
    """Quaternion (xyzw) rotating the stage's up axis onto the builder's up axis."""
    return np_quat_between(np.asarray(stage_up, dtype=np.float64), np.asarray(builder_up, dtype=np.float64))


def quat_xyzw(q) -> np.ndarray:
    """``Gf.Quat[fd]`` → normalised ``(x, y, z, w)`` numpy quaternion (identity for a zero quaternion)."""
    im = q.GetImaginary()
    v = np.array([im[0], im[1], im[2], q.GetReal()], dtype=np.float64)
    n = np.linalg.norm(v)
    return np.array([0.0, 0.0, 0.0, 1.0]) if n < 1e-12 else v / n


def vec(v, scale: float = 1.0) -> np.ndarray:
    """``Gf.Vec3`` → numpy 3-vector times ``scale``."""
    return np.array([v[0], v[1], v[2]], dtype=np.float64) * scale
