"""URDF XML → small typed records (links, joints, inertials, geometry), with every ignored element reported.

The reader uses the standard library's ``xml.etree.ElementTree``. ``yourdfpy`` was evaluated and
not used: it rejects ``<capsule>`` geometry (a common extension Newton imports), silently
*recovers* from malformed XML instead of failing, and drops unknown elements without saying
which, so the importer would have to walk the raw XML again to produce its report.

Elements that have no jaxart counterpart are not dropped silently: each one is appended to
``UrdfRobot.issues`` (``<transmission>``, ``<gazebo>``, ``<ros2_control>``, joint
``<calibration>`` / ``<safety_controller>``, unknown link or joint children, ...). Purely visual
``<material>`` data is not imported and not reported (jaxart has no renderer materials).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from jaxart.sim.validate import np_quat_mul

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
GEOMETRY_TYPES = ("box", "sphere", "cylinder", "capsule", "mesh")
_LINK_CHILDREN = {"inertial", "visual", "collision"}
_JOINT_CHILDREN = {"parent", "child", "origin", "axis", "limit", "dynamics", "mimic"}
_JOINT_IGNORED = {"calibration", "safety_controller"}


@dataclass
class UrdfGeometry:
    """One ``<collision>`` or ``<visual>`` element.

    Attributes:
        kind: One of :data:`GEOMETRY_TYPES`.
        params: Geometry attributes as floats (``size`` (3,), ``radius``, ``length``, mesh ``scale`` (3,)).
        filename: Mesh URI as written in the URDF (meshes only).
        origin: Pose in the link frame (7 floats, ``xyzw``), unscaled.
        name: The element's ``name`` attribute, if any.
        visual: ``True`` for ``<visual>``.
    """

    kind: str
    params: dict
    origin: np.ndarray
    filename: str | None = None
    name: str | None = None
    visual: bool = False


@dataclass
class UrdfInertial:
    """``<inertial>``: mass [kg], COM frame pose in the link frame, inertia tensor in that frame."""

    mass: float
    origin: np.ndarray
    inertia: np.ndarray


@dataclass
class UrdfLink:
    """A ``<link>``.

    Attributes:
        name: The link's name.
        inertial: Its ``<inertial>``, if any.
        geoms: Its ``<collision>`` and ``<visual>`` geometry, in file order.
        visual_faults: Messages of elements ignored in ``<visual>`` elements (a stray ``<material>``, an
            unsupported geometry type).
        visual_errors: Messages of ``<visual>`` elements left out of ``geoms`` because they are malformed
            (what a ``<collision>`` element would raise); see :func:`parse_robot`.
    """

    name: str
    inertial: UrdfInertial | None = None
    geoms: list[UrdfGeometry] = field(default_factory=list)
    visual_faults: list[str] = field(default_factory=list)
    visual_errors: list[str] = field(default_factory=list)


@dataclass
class UrdfJoint:
    """A ``<joint>`` (limits/dynamics left ``None`` when absent)."""

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None
    damping: float | None = None
    friction: float | None = None
    mimic: tuple[str, float, float] | None = None  # (leader joint, multiplier, offset)


@dataclass
class UrdfRobot:
    """A parsed ``<robot>``: links in file order, joints in file order, unrepresentable elements."""

    name: str
    links: dict[str, UrdfLink]
    joints: list[UrdfJoint]
    issues: list[str]


def quat_from_rpy(rpy) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw → quaternion ``(x, y, z, w)``: ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    r, p, y = (0.5 * float(a) for a in rpy)
    qx = np.array([np.sin(r), 0.0, 0.0, np.cos(r)])
    qy = np.array([0.0, np.sin(p), 0.0, np.cos(p)])
    qz = np.array([0.0, 0.0, np.sin(y), np.cos(y)])
    return np_quat_mul(qz, np_quat_mul(qy, qx))


def _floats(text: str | None, n: int, what: str, default=None) -> np.ndarray:
    if text is None:
        if default is None:
            raise ValueError(f"{what} is missing")
        return np.asarray(default, dtype=np.float64)
    try:
        v = np.array([float(x) for x in text.split()], dtype=np.float64)
    except ValueError:
        raise ValueError(f"{what} must be {n} number(s), got {text!r}") from None
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{what} must be {n} finite number(s), got {text!r}")
    return v


def _float(el: ET.Element, attr: str, what: str, default: float | None = None) -> float | None:
    text = el.get(attr)
    return default if text is None else float(_floats(text, 1, f"{what} attribute {attr!r}")[0])


def _origin(el: ET.Element, what: str) -> np.ndarray:
    o = el.find("origin")
    if o is None:
        return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    xyz = _floats(o.get("xyz"), 3, f"{what} <origin xyz>", default=(0.0, 0.0, 0.0))
    rpy = _floats(o.get("rpy"), 3, f"{what} <origin rpy>", default=(0.0, 0.0, 0.0))
    return np.concatenate([xyz, quat_from_rpy(rpy)])


def _inertial(el: ET.Element, what: str) -> UrdfInertial:
    m = el.find("mass")
    mass = 0.0 if m is None else _float(m, "value", f"{what} <mass>", 0.0)
    if mass < 0.0:
        raise ValueError(f"{what} <mass value> must be >= 0, got {mass}")
    i = el.find("inertia")
    t = np.zeros((3, 3))
    if i is not None:
        names = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
        ixx, iyy, izz, ixy, ixz, iyz = (_float(i, k, f"{what} <inertia>", 0.0) for k in names)
        t = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return UrdfInertial(mass=float(mass), origin=_origin(el, what), inertia=t)


def _geometry(el: ET.Element, what: str, issues: list[str]) -> UrdfGeometry | None:
    g = el.find("geometry")
    shapes = [] if g is None else [c for c in g if isinstance(c.tag, str)]
    stray = [c for c in shapes if c.tag == "material"]
    if el.tag == "visual" and stray and len(shapes) == len(stray) + 1:
        issues.append(f"{what}: <material> inside <geometry> ignored")
        shapes = [c for c in shapes if c.tag != "material"]
    if len(shapes) != 1:
        raise ValueError(f"{what} needs one <geometry> with exactly one shape child, got "
                         f"{[c.tag for c in shapes] if g is not None else 'no <geometry>'}")
    s = shapes[0]
    if s.tag not in GEOMETRY_TYPES:
        issues.append(f"{what}: unsupported geometry <{s.tag}> (skipped)")
        return None
    params: dict = {}
    filename = None
    if s.tag == "box":
        params["size"] = _floats(s.get("size"), 3, f"{what} <box size>")
    elif s.tag == "sphere":
        params["radius"] = _float(s, "radius", f"{what} <sphere>")
    elif s.tag in ("cylinder", "capsule"):
        length_attr = "length" if s.get("length") is not None else "height"
        params["radius"] = _float(s, "radius", f"{what} <{s.tag}>")
        params["length"] = _float(s, length_attr, f"{what} <{s.tag}>")
    else:
        filename = s.get("filename")
        if not filename:
            raise ValueError(f"{what} <mesh> has no filename")
        params["scale"] = _floats(s.get("scale"), 3, f"{what} <mesh scale>", default=(1.0, 1.0, 1.0))
    for k, v in params.items():
        if v is None:
            raise ValueError(f"{what} <{s.tag}> is missing {k!r}")
    return UrdfGeometry(kind=s.tag, params=params, origin=_origin(el, what), filename=filename,
                        name=el.get("name"), visual=el.tag == "visual")


def _link(el: ET.Element, issues: list[str]) -> UrdfLink:
    name = el.get("name")
    if not name:
        raise ValueError("URDF <link> without a name attribute")
    link = UrdfLink(name=name)
    for child in el:
        if not isinstance(child.tag, str):
            continue
        what = f"link {name!r} <{child.tag}>"
        if child.tag == "inertial":
            link.inertial = _inertial(child, what)
        elif child.tag == "collision":
            geom = _geometry(child, what, issues)
            if geom is not None:
                link.geoms.append(geom)
        elif child.tag == "visual":
            what = f"{what[:-1]} {child.get('name')!r}>" if child.get("name") else what
            try:
                geom = _geometry(child, what, link.visual_faults)
            except ValueError as e:
                link.visual_errors.append(str(e))
                continue
            if geom is not None:
                link.geoms.append(geom)
        else:
            issues.append(f"link {name!r}: <{child.tag}> element ignored")
    return link


def _joint(el: ET.Element, issues: list[str]) -> UrdfJoint:
    name = el.get("name")
    if not name:
        raise ValueError("URDF <joint> without a name attribute")
    jtype = el.get("type")
    what = f"joint {name!r}"
    if jtype not in JOINT_TYPES:
        raise ValueError(f"{what}: unknown joint type {jtype!r}; URDF joint types are {', '.join(JOINT_TYPES)}")
    ends = {}
    for tag in ("parent", "child"):
        e = el.find(tag)
        if e is None or not e.get("link"):
            raise ValueError(f"{what}: missing <{tag} link=...>")
        ends[tag] = e.get("link")
    axis = _floats(el.find("axis").get("xyz") if el.find("axis") is not None else None, 3,
                   f"{what} <axis xyz>", default=(1.0, 0.0, 0.0))
    if jtype not in ("fixed", "floating"):
        n = np.linalg.norm(axis)
        if n < 1e-9:
            raise ValueError(f"{what}: <axis xyz> must be non-zero, got {axis.tolist()}")
        axis = axis / n
    j = UrdfJoint(name=name, type=jtype, parent=ends["parent"], child=ends["child"], origin=_origin(el, what),
                  axis=axis)
    lim, dyn, mim = el.find("limit"), el.find("dynamics"), el.find("mimic")
    if lim is not None:
        j.lower, j.upper = _float(lim, "lower", f"{what} <limit>"), _float(lim, "upper", f"{what} <limit>")
        j.effort, j.velocity = _float(lim, "effort", f"{what} <limit>"), _float(lim, "velocity", f"{what} <limit>")
    if dyn is not None:
        j.damping = _float(dyn, "damping", f"{what} <dynamics>")
        j.friction = _float(dyn, "friction", f"{what} <dynamics>")
    if mim is not None:
        if not mim.get("joint"):
            raise ValueError(f"{what}: <mimic> has no joint attribute")
        j.mimic = (mim.get("joint"), _float(mim, "multiplier", f"{what} <mimic>", 1.0),
                   _float(mim, "offset", f"{what} <mimic>", 0.0))
    for child in el:
        if isinstance(child.tag, str) and child.tag in _JOINT_IGNORED:
            issues.append(f"{what}: <{child.tag}> ignored")
        elif isinstance(child.tag, str) and child.tag not in _JOINT_CHILDREN:
            issues.append(f"{what}: <{child.tag}> element ignored")
    return j


def parse_robot(root: ET.Element) -> UrdfRobot:
    """Read a ``<robot>`` element.

    A fault in a ``<visual>`` element does not raise: malformed geometry is recorded in the link's
    ``visual_errors`` and the visual left out; a stray ``<material>`` inside ``<geometry>`` next to one
    shape, or an unsupported geometry type, in its ``visual_faults``. ``<collision>`` faults raise.

    Raises:
        ValueError: Not a ``<robot>``, duplicate or missing names, unknown joint types, bad numbers.
    """
    if root.tag != "robot":
        raise ValueError(f"URDF root element must be <robot>, got <{root.tag}>")
    issues: list[str] = []
    links: dict[str, UrdfLink] = {}
    joints: list[UrdfJoint] = []
    ignored: dict[str, list[str]] = {}
    for el in root:
        if not isinstance(el.tag, str):
            continue
        if el.tag == "link":
            link = _link(el, issues)
            if link.name in links:
                raise ValueError(f"URDF link name {link.name!r} is used twice")
            links[link.name] = link
        elif el.tag == "joint":
            joints.append(_joint(el, issues))
        elif el.tag != "material":
            ignored.setdefault(el.tag, []).append(el.get("name") or el.get("reference") or "")
    names = [j.name for j in joints]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"URDF joint name(s) {dup} are used more than once")
    for tag, which in ignored.items():
        shown = ", ".join(repr(n) for n in which if n)
        issues.insert(0, f"{len(which)} <{tag}> element(s) ignored" + (f": {shown}" if shown else ""))
    return UrdfRobot(name=root.get("name") or "robot", links=links, joints=joints, issues=issues)
