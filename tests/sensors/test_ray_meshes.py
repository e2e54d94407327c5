"""Rays against meshes and height fields vs MuJoCo C (``mj_rayMesh``, ``mj_rayHfield``, rangefinder ``sensordata``).

Our own model: a concave mesh (two boxes as one triangle set, rotated and offset; MuJoCo casts against its
triangles, so a ray through the gap passes), a rotated height field, and a free probe carrying three
rangefinders. Random rays (inside and outside both geometries) are compared one by one, then the rangefinder
sensors over random probe poses, then the gradient of a hit distance against central finite differences. float64.
"""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from jaxart.math import quat_rotate_inv
from jaxart.sensors import eval_sensors
from jaxart.sensors.contact_values import triangle_table
from jaxart.sensors.ray_triangles import ray_triangle_set


def _box(c, h):
    return np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float) * h + c


_QUADS = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
_VERT = np.concatenate([_box(np.array([-0.5, 0.0, 0.0]), np.array([0.2, 0.3, 0.25])),
                        _box(np.array([0.5, 0.0, 0.1]), np.array([0.25, 0.2, 0.3]))])
_FACE = np.array([(a + o, b + o, c + o) for o in (0, 8) for q in _QUADS for (a, b, c) in
                  ((q[0], q[1], q[2]), (q[0], q[2], q[3]))])
_ELEV = np.random.default_rng(0).uniform(0.0, 1.0, 5 * 6)

_XML = f"""
<mujoco>
  <asset>
    <mesh name="twin" vertex="{' '.join(map(str, _VERT.ravel()))}" face="{' '.join(map(str, _FACE.ravel()))}"/>
    <hfield name="terrain" nrow="5" ncol="6" size="1.2 0.8 0.4 0.15" elevation="{' '.join(map(str, _ELEV))}"/>
  </asset>
  <worldbody>
    <geom name="twin" type="mesh" mesh="twin" pos="0.1 -2 0.6" euler="10 -20 30"/>
    <geom name="terrain" type="hfield" hfield="terrain" pos="0.2 1.5 0" euler="0 0 15"/>
    <body name="probe" pos="0 0 1.5">
      <freejoint/>
      <geom type="sphere" size="0.05" contype="0" conaffinity="0"/>
      <site name="down" quat="0 1 0 0"/>
      <site name="tilt" euler="160 20 0"/>
      <site name="side" euler="0 150 0"/>
    </body>
  </worldbody>
  <sensor>
    <rangefinder name="rf_down" site="down"/><rangefinder name="rf_tilt" site="tilt"/>
    <rangefinder name="rf_side" site="side"/>
  </sensor>
</mujoco>
"""


def _imported():
    import jaxart

    b = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match="mesh is not convex"):  # collision only: rays use the triangles
        info = b.add_mjcf(_XML)
    return b.finalize(dtype=jnp.float64), info, info["mj_model"]


def _rays(rng, centre, n=120):
    """Rays from around (and inside) the geometry toward random points of its bounding region."""
    origin = centre + rng.uniform(-1.3, 1.3, (n, 3)) * np.array([1.0, 1.0, 0.6])
    direction = centre + rng.uniform(-0.7, 0.7, (n, 3)) * np.array([1.0, 1.0, 0.5]) - origin
    return origin, direction / np.linalg.norm(direction, axis=1, keepdims=True)


def test_rays_match_mj_ray_on_mesh_and_heightfield():
    model, info, m = _imported()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert not any("rangefinder" in s for s in info["unsupported"])
    rng = np.random.default_rng(1)
    cast = jax.jit(ray_triangle_set)
    for name, fn in (("twin", mujoco.mj_rayMesh), ("terrain", mujoco.mj_rayHfield)):
        g, s = m.geom(name).id, info["shapes"][name]
        origin, direction = _rays(rng, d.geom_xpos[g])
        ref = np.array([fn(m, d, g, o, v) for o, v in zip(origin, direction, strict=True)])
        pose = np.asarray(model.shape_transform[s])  # a world shape: its pose is its transform
        q = jnp.broadcast_to(jnp.asarray(pose[3:]), (len(origin), 4))
        o = quat_rotate_inv(q, jnp.asarray(origin - pose[:3]))
        v = quat_rotate_inv(q, jnp.asarray(direction))
        got = np.asarray(cast(jnp.asarray(triangle_table(model, np.array([s]))[0]), model.shape_scale[s], o, v))
        got = np.where(np.isfinite(got), got, -1.0)
        np.testing.assert_allclose(got, ref, atol=1e-9, err_msg=name)
        assert 0.3 * len(ref) < np.sum(ref >= 0.0) < len(ref)  # hits and misses
    # a ray through the gap between the two boxes passes (MuJoCo casts against triangles, not the convex hull)
    g, s = m.geom("twin").id, info["shapes"]["twin"]
    v = np.asarray(model.meshes[s].vertices)
    mid = 0.5 * (v[:8].mean(0) + v[8:].mean(0))  # inside the hull, between the boxes (MuJoCo keeps the order)
    across = np.cross(v[8:].mean(0) - v[:8].mean(0), [0.3, 0.2, 1.0])
    across /= np.linalg.norm(across)
    start = mid - 2.0 * across
    rot = d.geom_xmat[g].reshape(3, 3)
    assert mujoco.mj_rayMesh(m, d, g, d.geom_xpos[g] + rot @ start, rot @ across) == -1.0
    assert not np.isfinite(cast(jnp.asarray(triangle_table(model, np.array([s]))[0]), model.shape_scale[s],
                                jnp.asarray(start), jnp.asarray(across)))


def test_rangefinders_and_their_gradient_match_mujoco():
    import jaxart

    model, info, m = _imported()
    rng = np.random.default_rng(2)
    sense = jax.jit(lambda q: eval_sensors(model, jaxart.eval_fk(model, q, jnp.zeros(6), model.state())))
    hits = 0
    for k in range(6):
        d = mujoco.MjData(m)
        d.qpos[:3] = [rng.uniform(-0.3, 0.3), (-2.0, 1.5)[k % 2] + rng.uniform(-0.2, 0.2), rng.uniform(1.0, 1.4)]
        quat = np.array([1.0, *rng.normal(scale=0.1, size=3)])
        d.qpos[3:] = quat / np.linalg.norm(quat)
        mujoco.mj_forward(m, d)
        got = np.asarray(sense(jnp.asarray(d.qpos[info["coord_map"]])))
        np.testing.assert_allclose(got, d.sensordata, atol=1e-9)
        hits += int(np.sum(d.sensordata > 0.0))
    assert hits >= 9, hits
    # gradient of the down-looking distance w.r.t. the probe's coordinates, at the last pose
    q0 = jnp.asarray(d.qpos[info["coord_map"]])
    f = jax.jit(lambda q: jnp.sum(sense(q)))
    grad = np.asarray(jax.grad(f)(q0))
    eps = 1e-6
    for i in range(3):  # translations (rotations move the hit point across triangle edges less gently)
        e = jnp.zeros(7).at[i].set(eps)
        fd = (float(f(q0 + e)) - float(f(q0 - e))) / (2.0 * eps)
        np.testing.assert_allclose(grad[i], fd, rtol=1e-5, atol=1e-6)
    assert np.abs(grad[:3]).max() > 0.1
    shifted = q0.at[2].add(0.05)
    batch = np.asarray(jax.vmap(sense)(jnp.stack([q0, shifted])))
    np.testing.assert_allclose(batch, np.stack([sense(q0), sense(shifted)]), atol=1e-12)
