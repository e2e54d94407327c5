"""Rangefinders against a finite MJCF plane vs MuJoCo C (``sensordata``): MuJoCo's rays stop at a plane's size
(half extents > 0) although its collision is infinite. Our own model: a tilted, offset plane of half size
0.6 × 0.4 m and a slide-mounted probe whose rays hit the plane inside the rectangle and miss it beyond each edge
(a world plane far below catches nothing: it faces away). float64.
"""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

import jaxart
from jaxart.sensors import eval_sensors

_XML = """
<mujoco>
  <worldbody>
    <geom name="panel" type="plane" size="0.6 0.4 0.1" pos="0.2 -0.1 0.3" euler="10 -15 20"/>
    <geom name="floor" type="plane" size="0 0 1" pos="0 0 -3" euler="180 0 0"/>
    <body name="probe" pos="0 0 1.5">
      <joint name="x" type="slide" axis="1 0 0"/><joint name="y" type="slide" axis="0 1 0"/>
      <geom type="sphere" size="0.05" contype="0" conaffinity="0"/>
      <site name="down" quat="0 1 0 0"/>
      <site name="tilt" euler="170 10 0"/>
    </body>
  </worldbody>
  <sensor><rangefinder name="rf_down" site="down"/><rangefinder name="rf_tilt" site="tilt"/></sensor>
</mujoco>
"""


def test_rangefinder_sees_the_finite_plane_size_like_mujoco():
    b = jaxart.ModelBuilder()
    info = b.add_mjcf(_XML)
    assert not info["unsupported"]
    model = b.finalize(dtype=jnp.float64)
    panel = info["shapes"]["panel"]
    np.testing.assert_allclose(np.asarray(model.shape_scale[panel]), 0.0)  # collision: infinite, as MuJoCo
    np.testing.assert_allclose(np.asarray(model.shape_ray_extent[panel]), [0.6, 0.4])
    m = info["mj_model"]
    sense = jax.jit(jax.vmap(lambda mm, q: eval_sensors(mm, jaxart.eval_fk(mm, q, jnp.zeros(2), mm.state())),
                             in_axes=(None, 0)))
    grid = np.stack(np.meshgrid(np.linspace(-0.7, 1.1, 7), np.linspace(-0.7, 0.5, 6)), -1).reshape(-1, 2)
    ref = []
    for q in grid:
        d = mujoco.MjData(m)
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        ref.append(d.sensordata.copy())
    ref = np.array(ref)
    got = np.asarray(sense(model, jnp.asarray(grid[:, info["coord_map"]])))
    np.testing.assert_allclose(got, ref, atol=1e-9)
    hit = ref > 0.0
    assert 0.2 * hit.size < hit.sum() < 0.8 * hit.size  # hits inside the rectangle, misses beyond its edges
    # the same plane unbounded (the builder's default for MJCF planes before: collision extent) hits everywhere
    unbounded = model.replace(shape_ray_extent=model.shape_ray_extent.at[panel].set(0.0))
    every = np.asarray(sense(unbounded, jnp.asarray(grid[:, info["coord_map"]])))  # same program: no recompile
    assert np.all(every[:, 0] > 0.0)
