"""Our own USD test assets, written with pxr, and their MJCF twins for MuJoCo oracles.

A chain is a list of :class:`Link`; each link's joint frames are ``x_p`` (parent body → anchor) and
``x_c`` (child body → anchor), as in UsdPhysics ``localPos/Rot0/1`` and jaxart ``joint_X_p/X_c``.
Every number is rounded to float32 first (USD stores these attributes as float), so the stage and
the MJCF twin describe exactly the same model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from jaxart.sim.validate import np_quat_rotate, np_transform_inverse, np_transform_mul

_E = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


def f32(x) -> np.ndarray:
    """Round to float32 and back (the precision of USD's float attributes)."""
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def rand_quat(rng) -> np.ndarray:
    """A random float32-representable unit-ish quaternion (xyzw)."""
    q = rng.normal(size=4)
    return f32(q / np.linalg.norm(q))


def unit(q) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    return q / np.linalg.norm(q)


@dataclass
class Link:
    """One body and the joint that attaches it (``parent`` None = world; ``jtype`` None = floating root)."""

    name: str
    parent: str | None
    jtype: str | None  # "fixed", "revolute", "prismatic", "ball", "d6"
    x_p: np.ndarray = field(default_factory=lambda: np.array([0, 0, 0, 0, 0, 0, 1.0]))
    x_c: np.ndarray = field(default_factory=lambda: np.array([0, 0, 0, 0, 0, 0, 1.0]))
    axis: str = "X"
    d6_free: tuple = ()  # e.g. ("transX", "rotY", "rotZ")
    mass: float = 1.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    diag: np.ndarray = field(default_factory=lambda: np.array([0.1, 0.1, 0.1]))
    principal: np.ndarray = field(default_factory=lambda: np.array([0, 0, 0, 1.0]))
    root_pose: np.ndarray = field(default_factory=lambda: np.array([0, 0, 0, 0, 0, 0, 1.0]))


def random_link(rng, name, parent, jtype, **kw) -> Link:
    """A link with random float32 frames and inertia."""
    def pose():
        return np.concatenate([f32(rng.uniform(-0.4, 0.4, 3)), rand_quat(rng)])
    return Link(name, parent, jtype, x_p=pose(), x_c=pose(), mass=float(f32(rng.uniform(0.5, 2.0))),
                com=f32(rng.uniform(-0.1, 0.1, 3)), diag=f32(rng.uniform(0.05, 0.2, 3)),
                principal=rand_quat(rng), **kw)


def world_poses(links: list[Link]) -> dict[str, np.ndarray]:
    """Body world poses at q = 0."""
    out = {}
    for lk in links:
        if lk.parent is None and lk.jtype is None:
            out[lk.name] = lk.root_pose
            continue
        w = out[lk.parent] if lk.parent else np.array([0, 0, 0, 0, 0, 0, 1.0])
        xp = np.concatenate([lk.x_p[:3], unit(lk.x_p[3:])])
        xc = np.concatenate([lk.x_c[:3], unit(lk.x_c[3:])])
        out[lk.name] = np_transform_mul(np_transform_mul(w, xp), np_transform_inverse(xc))
    return out


def write_chain(stage, links: list[Link], *, root: str = "/robot", articulation: bool = True,
                exclude: tuple = ()) -> None:
    """Author the chain with pxr's UsdGeom/UsdPhysics schema classes."""
    from pxr import Gf, Sdf, UsdGeom, UsdPhysics

    top = UsdGeom.Xform.Define(stage, root)
    if articulation:
        UsdPhysics.ArticulationRootAPI.Apply(top.GetPrim())
    poses = world_poses(links)
    for lk in links:
        x = UsdGeom.Xform.Define(stage, f"{root}/{lk.name}")
        p = poses[lk.name]
        x.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*p[:3]))
        x.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Quatd(p[6], *p[3:6]))
        UsdPhysics.RigidBodyAPI.Apply(x.GetPrim())
        m = UsdPhysics.MassAPI.Apply(x.GetPrim())
        m.CreateMassAttr(lk.mass)
        m.CreateCenterOfMassAttr(Gf.Vec3f(*lk.com))
        m.CreateDiagonalInertiaAttr(Gf.Vec3f(*lk.diag))
        m.CreatePrincipalAxesAttr(Gf.Quatf(float(lk.principal[3]), *[float(v) for v in lk.principal[:3]]))
    for lk in links:
        if lk.jtype is None:
            continue
        cls = {"fixed": UsdPhysics.FixedJoint, "revolute": UsdPhysics.RevoluteJoint, "ball": UsdPhysics.SphericalJoint,
               "prismatic": UsdPhysics.PrismaticJoint, "d6": UsdPhysics.Joint}[lk.jtype]
        j = cls.Define(stage, f"{root}/j_{lk.name}")
        if lk.parent:
            j.CreateBody0Rel().SetTargets([Sdf.Path(f"{root}/{lk.parent}")])
        j.CreateBody1Rel().SetTargets([Sdf.Path(f"{root}/{lk.name}")])
        for k, x in ((0, lk.x_p), (1, lk.x_c)):
            getattr(j, f"CreateLocalPos{k}Attr")(Gf.Vec3f(*[float(v) for v in x[:3]]))
            getattr(j, f"CreateLocalRot{k}Attr")(Gf.Quatf(float(x[6]), *[float(v) for v in x[3:6]]))
        if lk.jtype in ("revolute", "prismatic"):
            j.CreateAxisAttr(lk.axis)
        if lk.jtype == "d6":
            for name in ("transX", "transY", "transZ", "rotX", "rotY", "rotZ"):
                if name not in lk.d6_free:
                    lim = UsdPhysics.LimitAPI.Apply(j.GetPrim(), name)
                    lim.CreateLowAttr(1.0)
                    lim.CreateHighAttr(-1.0)
        if lk.name in exclude:
            j.CreateExcludeFromArticulationAttr(True)


def chain_mjcf(links: list[Link]) -> str:
    """The MJCF twin of a chain (nested bodies; D6 = slides then hinges at the joint anchor)."""
    kids: dict = {}
    for lk in links:
        kids.setdefault(lk.parent, []).append(lk)

    def fmt(v):
        return " ".join(f"{float(x):.17g}" for x in v)

    def body(lk: Link) -> str:
        xp = np.concatenate([lk.x_p[:3], unit(lk.x_p[3:])])
        xc = np.concatenate([lk.x_c[:3], unit(lk.x_c[3:])])
        rel = lk.root_pose if lk.jtype is None else np_transform_mul(xp, np_transform_inverse(xc))
        q = rel[3:]
        out = [f'<body name="{lk.name}" pos="{fmt(rel[:3])}" quat="{fmt([q[3], *q[:3]])}">']
        pr = unit(lk.principal)
        out.append(f'<inertial pos="{fmt(lk.com)}" quat="{fmt([pr[3], *pr[:3]])}" mass="{lk.mass:.17g}" '
                   f'diaginertia="{fmt(lk.diag)}"/>')
        anchor = fmt(xc[:3])
        if lk.jtype is None:
            out.append('<freejoint name="free"/>')
        elif lk.jtype == "ball":
            out.append(f'<joint name="{lk.name}" type="ball" pos="{anchor}"/>')
        elif lk.jtype in ("revolute", "prismatic"):
            t = "hinge" if lk.jtype == "revolute" else "slide"
            out.append(f'<joint name="{lk.name}" type="{t}" pos="{anchor}" '
                       f'axis="{fmt(np_quat_rotate(xc[3:], np.array(_E[lk.axis])))}"/>')
        elif lk.jtype == "d6":
            for name in lk.d6_free:
                t = "slide" if name.startswith("trans") else "hinge"
                ax = np_quat_rotate(xc[3:], np.array(_E[name[-1]]))
                out.append(f'<joint name="{lk.name}_{name}" type="{t}" pos="{anchor}" axis="{fmt(ax)}"/>')
        out += [body(k) for k in kids.get(lk.name, [])]
        out.append("</body>")
        return "\n".join(out)

    return ('<mujoco><option gravity="0 0 0"/><worldbody>' + "\n".join(body(k) for k in kids[None])
            + "</worldbody></mujoco>")
