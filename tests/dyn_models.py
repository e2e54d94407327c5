"""Twin models for dynamics oracles: the same tree built with ModelBuilder and written as MJCF.

A spec is a list of bodies ``dict(parent, pos, quat_xyzw, mass, com, inertia (3x3), joints)`` where
``joints`` lists ``(kind, axis)`` with kind in ``hinge/slide/ball/free`` (slides before hinges;
several scalar joints become one D6) and ``jpos`` is the joint anchor in the body frame. An empty
joint list is a FIXED joint (MuJoCo welds a jointless body to its parent).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

import jaxart
from jaxart.sim.validate import np_quat_mul


def _rotmat(q):
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _wxyz(q):
    return f"{q[3]:.17g} {q[0]:.17g} {q[1]:.17g} {q[2]:.17g}"


def _vec(v):
    return " ".join(f"{x:.17g}" for x in v)


def to_mjcf(spec, *, gravity=(0, 0, -9.81), timestep=1e-3, armature=0.0) -> str:
    """MJCF text of ``spec`` (contacts disabled, Euler integrator)."""
    children = {i: [k for k, b in enumerate(spec) if b["parent"] == i] for i in range(-1, len(spec))}

    def body_xml(i, indent):
        b = spec[i]
        pad = " " * indent
        inertia = np.asarray(b["inertia"])
        full = [inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2]]
        s = f'{pad}<body name="b{i}" pos="{_vec(b["pos"])}" quat="{_wxyz(b["quat"])}">\n'
        s += f'{pad}  <inertial pos="{_vec(b["com"])}" mass="{b["mass"]:.17g}" fullinertia="{_vec(full)}"/>\n'
        for k, (kind, axis) in enumerate(b["joints"]):
            if kind == "free":
                s += f'{pad}  <freejoint name="j{i}_{k}"/>\n'
            else:
                ax = "" if kind == "ball" else f' axis="{_vec(axis)}"'
                s += (f'{pad}  <joint name="j{i}_{k}" type="{kind}" pos="{_vec(b.get("jpos", (0, 0, 0)))}"{ax}'
                      f' armature="{armature:.17g}" limited="false"/>\n')
        for c in children[i]:
            s += body_xml(c, indent + 2)
        return s + f"{pad}</body>\n"

    bodies = "".join(body_xml(i, 4) for i in children[-1])
    return (f'<mujoco>\n  <option gravity="{_vec(gravity)}" timestep="{timestep}" integrator="Euler">\n'
            f'    <flag contact="disable"/>\n  </option>\n  <worldbody>\n{bodies}  </worldbody>\n</mujoco>\n')


def to_builder(spec, *, armature=0.0) -> jaxart.ModelBuilder:
    """ModelBuilder twin of ``spec`` (one articulation, bodies in spec order)."""
    b = jaxart.ModelBuilder()
    world = []
    for s in spec:
        x = np.concatenate([np.asarray(s["pos"], float), s["quat"]])
        if s["parent"] >= 0:
            p = world[s["parent"]]
            x = np.concatenate([p[:3] + _rotmat(p[3:]) @ x[:3], np_quat_mul(p[3:], x[3:])])
        world.append(x)
    J = jaxart.JointDofConfig
    joints = []
    for i, s in enumerate(spec):
        link = b.add_link(xform=(world[i][:3], world[i][3:]), com=s["com"], inertia=s["inertia"], mass=s["mass"],
                          lock_inertia=True)
        jpos = np.asarray(s.get("jpos", (0, 0, 0)), float)
        x_p = (np.asarray(s["pos"]) + _rotmat(s["quat"]) @ jpos, s["quat"])
        x_c = (jpos, (0, 0, 0, 1))
        kinds = [k for k, _ in s["joints"]]
        par = s["parent"]
        cfg = dict(limit_lower=-1e10, limit_upper=1e10, armature=armature)
        if kinds == ["free"]:
            joints.append(b.add_joint_free(link, parent=par))
        elif kinds == []:
            joints.append(b.add_joint_fixed(par, link, parent_xform=x_p, child_xform=x_c))
        elif kinds == ["ball"]:
            joints.append(b.add_joint_ball(par, link, parent_xform=x_p, child_xform=x_c, armature=armature))
        elif kinds == ["hinge"]:
            joints.append(b.add_joint_revolute(par, link, axis=s["joints"][0][1], parent_xform=x_p,
                                               child_xform=x_c, **cfg))
        elif kinds == ["slide"]:
            joints.append(b.add_joint_prismatic(par, link, axis=s["joints"][0][1], parent_xform=x_p,
                                                child_xform=x_c, **cfg))
        else:
            lin = [J(axis=a, **cfg) for k, a in s["joints"] if k == "slide"]
            ang = [J(axis=a, **cfg) for k, a in s["joints"] if k == "hinge"]
            joints.append(b.add_joint_d6(par, link, linear_axes=lin, angular_axes=ang, parent_xform=x_p,
                                         child_xform=x_c))
    b.add_articulation(joints)
    return b


def mj_to_jaxart(spec, qpos, qvel):
    """Map MuJoCo ``(qpos, qvel)`` to jaxart ``(joint_q, joint_qd, T)`` with ``joint_qd = T qvel``.

    Also returns ``Tdot_v`` (the velocity-product term of ``d/dt (T qvel)``).
    """
    q, qd, blocks, tdv = [], [], [], []
    a = b = 0
    for s in spec:
        kinds = [k for k, _ in s["joints"]]
        if kinds == ["free"]:
            p, quat = qpos[a:a + 3], np.r_[qpos[a + 4:a + 7], qpos[a + 3]]
            r = _rotmat(quat)
            c = r @ np.asarray(s["com"])
            wl = qvel[b + 3:b + 6]
            ww = r @ wl
            t = np.zeros((6, 6))
            t[:3, :3] = np.eye(3)
            t[:3, 3:] = -_skew(c) @ r
            t[3:, 3:] = r
            q += [*p, *quat]
            qd += list(t @ qvel[b:b + 6])
            blocks.append(t)
            tdv += list(np.cross(ww, np.cross(ww, c))) + [0, 0, 0]
            a, b = a + 7, b + 6
        elif kinds == ["ball"]:
            quat = np.r_[qpos[a + 1:a + 4], qpos[a]]
            r = _rotmat(quat)
            q += list(quat)
            qd += list(r @ qvel[b:b + 3])
            blocks.append(r)
            tdv += [0, 0, 0]
            a, b = a + 4, b + 3
        else:
            n = len(kinds)
            q += list(qpos[a:a + n])
            qd += list(qvel[b:b + n])
            blocks.append(np.eye(n))
            tdv += [0] * n
            a, b = a + n, b + n
    nd = sum(x.shape[0] for x in blocks)
    t = np.zeros((nd, nd))
    k = 0
    for blk in blocks:
        t[k:k + len(blk), k:k + len(blk)] = blk
        k += len(blk)
    return jnp.asarray(q), jnp.asarray(qd), t, np.asarray(tdv, float)


def _skew(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def _rq(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def _inertia(rng):
    r = _rotmat(_rq(rng))
    return r @ np.diag(rng.uniform(0.08, 0.15, 3)) @ r.T


def mixed_tree_spec(rng, *, floating=True):
    """Tree with free root (optional), hinge, slide, ball, D6 (2 slides + 2 hinges) and a fixed body."""
    def body(parent, joints, **kw):
        return dict(parent=parent, pos=rng.normal(size=3) * 0.3, quat=_rq(rng), mass=rng.uniform(0.5, 2.0),
                    com=rng.normal(size=3) * 0.1, inertia=_inertia(rng), joints=joints,
                    jpos=rng.normal(size=3) * 0.1, **kw)

    root = [("free", None)] if floating else [("hinge", (0.0, 0.0, 1.0))]
    # listed in depth-first order so that MuJoCo's body / DOF order equals the builder's
    return [
        body(-1, root),
        body(0, [("hinge", (0.0, 1.0, 0.0))]),
        body(1, [("slide", (1.0, 0.0, 0.0))]),
        body(2, [("ball", None)]),
        body(3, []),
        body(4, [("hinge", (0.6, 0.0, 0.8))]),
        body(1, [("slide", (0.0, 1.0, 0.0)), ("slide", (0.0, 0.0, 1.0)), ("hinge", (1.0, 0.0, 0.0)),
                 ("hinge", (0.0, 0.0, 1.0))]),
    ]


def chain_spec(n, *, length=0.5, mass=1.0):
    """Planar hinge chain along −Z (axis Y), link COM at the link midpoint."""
    spec = []
    for i in range(n):
        spec.append(dict(parent=i - 1, pos=(0.0, 0.0, 0.0 if i == 0 else -length), quat=np.array([0, 0, 0, 1.0]),
                         mass=mass, com=(0.0, 0.0, -length / 2), inertia=np.diag([0.02, 0.02, 0.01]),
                         joints=[("hinge", (0.0, 1.0, 0.0))], jpos=(0.0, 0.0, 0.0)))
    return spec
