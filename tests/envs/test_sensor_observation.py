"""QuadrupedWalk(observation="sensors"): the bundled quadruped's MJCF sensors as an RL observation."""

import warnings

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxart import envs  # noqa: E402
from jaxart.assets import asset_path  # noqa: E402
from jaxart.sensors import sensor_dict, sensor_value  # noqa: E402
from jaxart.sim.builder import ModelBuilder  # noqa: E402

FEET = ("fl", "fr", "rl", "rr")


@pytest.fixture(scope="module")
def env():
    # one physics step per action keeps the compiled step small (the sensing path is the same at any repeat)
    return envs.QuadrupedWalk(observation="sensors", dtype=jnp.float64, action_repeat=1)


def test_asset_sensors_import_without_drops():
    """Every MJCF sensor of the bundled quadruped compiles in MuJoCo and is imported, in MuJoCo's layout."""
    mj = mujoco.MjModel.from_xml_path(asset_path("quadruped"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an import that drops a sensor warns
        b = ModelBuilder()
        b.add_mjcf(asset_path("quadruped"))
        model = b.finalize()
    names = [mj.sensor(i).name for i in range(mj.nsensor)]
    assert list(model.sensor.sensor_label) == names
    np.testing.assert_array_equal(model.sensor.sensor_adr.array, mj.sensor_adr)
    np.testing.assert_array_equal(model.sensor.sensor_dim.array, mj.sensor_dim)
    assert {"imu_acc", "imu_gyro", "imu_quat", "imu_vel"} <= set(names)
    assert {f"{f}_touch" for f in FEET} <= set(names)
    # sites carry no mass: the robot weighs what the geoms weigh in MuJoCo
    np.testing.assert_allclose(float(np.sum(np.asarray(model.body_mass))), mj.body_subtreemass[0], rtol=1e-6)


@pytest.fixture(scope="module")
def rollout(env):
    """A vmapped zero-action rollout of 2 worlds over 1 s: first observations, every step's observation, last
    states."""

    def run(key):
        def body(s, _):
            s = env.step(s, jnp.zeros(12))
            return s, s.obs

        s0 = env.reset(key)
        last, obs = jax.lax.scan(body, s0, None, length=250)  # 1 s
        return s0.obs, obs, last

    return jax.jit(jax.vmap(run))(jax.random.split(jax.random.PRNGKey(0), 2))


def test_sensor_observation_rollout_stands_and_reads_weight(env, rollout):
    """The observation has the declared size and stays finite; standing, the torso accelerometer reads +g along
    its z and the foot touch sensors carry the weight."""
    model = env.model
    n = model.sensor.sensor_data_count
    assert env.observation_size == n == 41
    first, obs, _ = rollout
    assert first.shape == (2, n) and obs.shape == (2, 250, n)
    assert np.all(np.isfinite(first)) and np.all(np.isfinite(obs))
    # At reset the feet are 2.5 cm above the floor: free fall, no touch, the accelerometer reads ~0 along z.
    assert np.all(np.abs(np.asarray(sensor_value(model, first, "imu_acc"))[:, 2]) < 1.0)
    assert all(np.all(np.asarray(sensor_value(model, first, f"{f}_touch")) == 0.0) for f in FEET)
    late = sensor_dict(model, obs[:, -50:])  # the last 0.2 s, standing
    g = 9.81
    weight = float(np.sum(np.asarray(model.body_mass))) * g
    acc = np.mean(np.asarray(late["imu_acc"]), axis=1)  # (2, 3), site axes
    np.testing.assert_allclose(acc[:, 2], g, rtol=0.03)
    assert np.all(np.linalg.norm(acc[:, :2], axis=-1) < 0.1 * g)
    touch = np.mean(sum(np.asarray(late[f"{f}_touch"])[..., 0] for f in FEET), axis=1)
    np.testing.assert_allclose(touch, weight, rtol=0.1)
    assert np.all(np.asarray(late["fl_touch"]) > 0.0) and np.all(np.asarray(late["rr_touch"]) > 0.0)
    # the joint encoders read the state's joint angles of the physics step's start (here: close to the standing pose)
    q_late = np.asarray(sensor_value(model, obs[:, -1], "fl_knee_pos"))[:, 0]
    assert np.all(np.abs(q_late - float(np.asarray(model.joint_q)[7 + 2])) < 0.1)


def test_sensor_observation_gradient_wrt_action(env, rollout):
    """The sensor observation of a step (standing, feet in contact) is differentiable in the action, with finite
    derivatives."""
    s0 = jax.tree_util.tree_map(lambda x: x[0], rollout[2])

    def summed(a):
        return jnp.sum(env.step(s0, a).obs)

    g = jax.jit(jax.grad(summed))(0.1 * jnp.ones(12))
    assert g.shape == (12,) and np.all(np.isfinite(g)) and float(jnp.max(jnp.abs(g))) > 0.0


def test_sensor_observation_options():
    """The default observation is unchanged; unknown observations and non-implicit contact laws are refused."""
    assert envs.QuadrupedWalk().observation == "state"
    with pytest.raises(ValueError, match="observation"):
        envs.QuadrupedWalk(observation="pixels")
    with pytest.raises(NotImplementedError, match="implicit"):
        envs.QuadrupedWalk(observation="sensors", solver_kwargs={"contact": "explicit"})
