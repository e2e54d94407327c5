"""Model factories and numeric helpers shared by the tests."""

from __future__ import annotations

import os
import warnings

import jax.numpy as jnp
import mujoco
import numpy as np

import jaxart
from jaxart.sim.validate import np_quat_mul

#: The humanoid that ships with MuJoCo's MJX test data (loaded in place, never copied).
TEST_ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")  # model files made for the tests
MJX_HUMANOID = os.path.join(os.path.dirname(mujoco.__file__), "mjx", "test_data", "humanoid", "humanoid.xml")


def mjcf_model(path: str, dtype=jnp.float64) -> jaxart.Model:
    """Import an MJCF file and finalize it (import warnings are silenced)."""
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.add_mjcf(path)
    return b.finalize(dtype=dtype)


def rand_quat(rng: np.random.Generator) -> np.ndarray:
    """Uniform random unit quaternion (xyzw)."""
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def quat_from_axis_angle_np(axis, angle) -> np.ndarray:
    """Quaternion (xyzw) of a rotation about a unit axis."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([axis * np.sin(angle / 2), [np.cos(angle / 2)]])


def all_joints_builder() -> jaxart.ModelBuilder:
    """A tree holding every joint type, rotated anchors and COM offsets (one articulation)."""
    b = jaxart.ModelBuilder()
    rot = quat_from_axis_angle_np([1, 2, 3], 0.7)
    rot2 = quat_from_axis_angle_np([0, 1, -1], -1.1)
    links = []
    for i in range(9):
        links.append(b.add_link(com=(0.05 * i, -0.02, 0.1), inertia=np.diag([0.1, 0.2, 0.3]) + 0.01, mass=1.0 + i,
                                label=f"L{i}"))
    J = jaxart.JointDofConfig
    js = [
        b.add_joint_free(links[0], parent_xform=((0.1, 0.2, 0.3), rot), child_xform=((0.0, 0.1, 0.0), rot2)),
        b.add_joint_revolute(links[0], links[1], axis=(0.0, 0.6, 0.8), parent_xform=((0.3, 0, 0), rot),
                             child_xform=((0, 0, -0.2), rot2)),
        b.add_joint_prismatic(links[1], links[2], axis=(1.0, 1.0, 0.0), parent_xform=((0, 0.4, 0), rot2)),
        b.add_joint_ball(links[2], links[3], parent_xform=((0, 0, 0.5), rot), child_xform=((0.1, 0, 0), rot)),
        b.add_joint_d6(links[3], links[4], linear_axes=[J(axis=(1, 0, 0)), J(axis=(0, 0, 1))],
                       angular_axes=[J(axis=(0, 1, 0)), J(axis=(0, 0, 1)), J(axis=(1, 0, 0))],
                       parent_xform=((0.2, 0, 0), rot2)),
        b.add_joint_d6(links[4], links[5], angular_axes=[J(axis=(1, 0, 0)), J(axis=(0, 0, 1))],
                       child_xform=((0, 0.3, 0), rot)),
        # left-handed 3-axis set (X, Z, Y)
        b.add_joint_d6(links[5], links[6], angular_axes=[J(axis=(1, 0, 0)), J(axis=(0, 0, 1)), J(axis=(0, 1, 0))],
                       parent_xform=((0, 0, 0.2), rot)),
        b.add_joint_fixed(links[6], links[7], parent_xform=((0.1, 0.1, 0.1), rot2)),
        b.add_joint_distance(links[7], links[8], parent_xform=((0, 0.2, 0), rot)),
    ]
    b.add_articulation(js, label="tree")
    return b


def random_coords(model, rng: np.random.Generator, scale: float = 1.0):
    """Random joint_q (unit quaternions where needed, angles in (-pi/2, pi/2) for Euler middles) and joint_qd."""
    q = np.array(model.joint_q, dtype=np.float64)
    types = model.joint_type
    qs = model.joint_q_start
    dims = model.joint_dof_dim
    for j, t in enumerate(types):
        a, e = qs[j], qs[j + 1]
        if t in (jaxart.JointType.FREE, jaxart.JointType.DISTANCE):
            q[a:a + 3] = rng.normal(size=3) * scale
            q[a + 3:a + 7] = rand_quat(rng)
        elif t == jaxart.JointType.BALL:
            q[a:e] = rand_quat(rng)
        else:
            q[a:e] = rng.uniform(-1.2, 1.2, size=e - a) * scale
            if t == jaxart.JointType.D6 and dims[j][1] >= 2:
                # keep the middle Euler angle away from gimbal lock
                nl = dims[j][0]
                q[a + nl + 1] = rng.uniform(-0.9, 0.9)
    qd = rng.normal(size=model.joint_dof_count)
    return jnp.asarray(q), jnp.asarray(qd)


def quat_close(a, b, atol=1e-8) -> bool:
    """Quaternions equal up to sign."""
    a, b = np.asarray(a), np.asarray(b)
    return bool(np.allclose(a, b, atol=atol) or np.allclose(a, -b, atol=atol))


__all__ = ["all_joints_builder", "np_quat_mul", "quat_close", "quat_from_axis_angle_np", "rand_quat", "random_coords"]
