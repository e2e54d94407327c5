"""jaxart.envs: Brax's Env protocol, jit/vmap, determinism, reward sanity, gradients, domain randomisation."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxart import envs  # noqa: E402


@pytest.fixture(scope="module")
def pendulum():
    return envs.PendulumSwingup(dtype=jnp.float64)


@pytest.fixture(scope="module")
def cartpole():
    return envs.CartpoleSwingup(dtype=jnp.float64)


_JIT = {}


def _jit(env, name):
    """One compiled reset/step per environment object (each compile costs seconds)."""
    key = (id(env), name)
    if key not in _JIT:
        _JIT[key] = jax.jit(getattr(env, name))
    return _JIT[key]


def _protocol(env, steps=3):
    state = _jit(env, "reset")(jax.random.PRNGKey(0))
    assert state.obs.shape == (env.observation_size,)
    for _ in range(steps):
        state = _jit(env, "step")(state, 0.5 * jnp.ones(env.action_size))
    for x in (state.reward, state.done, *state.metrics.values()):
        assert x.shape == () and np.isfinite(float(x))
    assert state.obs.shape == (env.observation_size,) and np.all(np.isfinite(state.obs))
    assert env.backend == "jaxart" and env.unwrapped is env
    # reset and step carry the same metric keys (Brax's wrappers rely on it)
    assert set(_jit(env, "reset")(jax.random.PRNGKey(1)).metrics) == set(state.metrics)
    return state


def test_protocol_jit_and_vmap(pendulum):
    env = pendulum
    _protocol(env)
    keys = jax.random.split(jax.random.PRNGKey(3), 4)
    batch = jax.jit(jax.vmap(env.reset))(keys)
    assert batch.obs.shape == (4, env.observation_size)
    nxt = jax.jit(jax.vmap(env.step))(batch, jnp.zeros((4, env.action_size)))
    assert nxt.reward.shape == (4,)
    # vmapped worlds match single-world calls
    one = _jit(env, "step")(_jit(env, "reset")(keys[2]), jnp.zeros(env.action_size))
    np.testing.assert_allclose(nxt.obs[2], one.obs, rtol=1e-9, atol=1e-12)
    # different keys give different initial states; the same key the same one
    assert not np.allclose(batch.obs[0], batch.obs[1])
    again = jax.jit(jax.vmap(env.reset))(keys)
    np.testing.assert_array_equal(again.obs, batch.obs)


def test_determinism(cartpole):
    def run(key):
        s = cartpole.reset(key)

        def body(s, a):
            s = cartpole.step(s, a)
            return s, s.reward

        return jax.lax.scan(body, s, jnp.sin(jnp.arange(20.0))[:, None])[1]

    f = jax.jit(run)
    np.testing.assert_array_equal(f(jax.random.PRNGKey(7)), f(jax.random.PRNGKey(7)))


def test_swingup_rewards(pendulum, cartpole):
    _protocol(pendulum, steps=1)
    _protocol(cartpole, steps=1)
    pstep, cstep = _jit(pendulum, "step"), _jit(cartpole, "step")
    s = pendulum.reset(jax.random.PRNGKey(0))
    up = s.replace(pipeline_state=pendulum.pipeline_init(jnp.array([np.pi]), jnp.zeros(1)))
    down = s.replace(pipeline_state=pendulum.pipeline_init(jnp.zeros(1), jnp.zeros(1)))
    assert float(pstep(up, jnp.zeros(1)).reward) > 0.99
    assert abs(float(pstep(down, jnp.zeros(1)).reward)) < 1e-6
    # the torque limit is below the gravity torque at the horizontal: a swing-up is needed
    horiz = s.replace(pipeline_state=pendulum.pipeline_init(jnp.array([np.pi / 2]), jnp.zeros(1)))
    assert float(pstep(horiz, jnp.ones(1)).pipeline_state.joint_qd[0]) < 0.0
    c = cartpole.reset(jax.random.PRNGKey(0))
    c_up = c.replace(pipeline_state=cartpole.pipeline_init(jnp.array([0.0, np.pi]), jnp.zeros(2)))
    assert float(cstep(c_up, jnp.zeros(1)).reward) > 0.99
    # pushing the cart +x accelerates it +x
    assert float(cstep(c, jnp.ones(1)).pipeline_state.joint_qd[0]) > 0.1
    with pytest.raises(ValueError, match="action must have shape"):
        cartpole.step(c, jnp.zeros(2))


def test_reacher_reward_is_distance():
    env = envs.Reacher7(dtype=jnp.float64)
    _protocol(env, steps=1)
    step = _jit(env, "step")
    s = _jit(env, "reset")(jax.random.PRNGKey(4))
    s = step(s, jnp.zeros(7))
    ee = env.ee_position(s.pipeline_state)
    np.testing.assert_allclose(s.metrics["distance"], np.linalg.norm(ee - s.info["target"]), rtol=1e-9)
    np.testing.assert_allclose(s.obs[-3:], s.info["target"] - ee, rtol=1e-9, atol=1e-12)
    assert float(s.reward) <= -float(s.metrics["distance"]) + 1e-12

    # commanding the target configuration's joint angles brings the end-effector to the target
    ft = env.model.joint_q.dtype
    q_goal = jnp.asarray([0.3, 0.4, -0.2, 0.8, 0.1, -0.3, 0.2], ft)
    goal = env.ee_position(env.pipeline_init(q_goal, jnp.zeros(7, ft)))
    s = s.replace(info={**s.info, "target": goal})
    action = (q_goal - env._mid) / env._half
    for _ in range(60):
        s = step(s, action)
    assert float(s.metrics["distance"]) < 0.03


@pytest.mark.slow
def test_rollout_return_gradient_matches_finite_differences(pendulum):
    s0 = pendulum.reset(jax.random.PRNGKey(2))

    def ret(actions):
        def body(s, a):
            s = pendulum.step(s, a)
            return s, s.reward

        return jnp.sum(jax.lax.scan(body, s0, actions)[1])

    actions = 0.5 * jnp.sin(jnp.arange(8.0))[:, None]
    g = jax.jit(jax.grad(ret))(actions)
    f = jax.jit(ret)
    eps = 1e-6
    for i in (0, 4, 7):
        e = jnp.zeros_like(actions).at[i, 0].set(eps)
        fd = (f(actions + e) - f(actions - e)) / (2 * eps)
        np.testing.assert_allclose(g[i, 0], fd, rtol=1e-5, atol=1e-8)
    assert float(jnp.abs(g).max()) > 1e-3


def test_domain_randomization(cartpole):
    model = cartpole.sys
    scales = jnp.array([0.5, 1.0, 2.0])
    models = jax.vmap(lambda k: model.replace(body_mass=model.body_mass * k))(scales)
    denv = envs.DomainRandomization(cartpole, models)
    assert denv.worlds == 3 and denv.action_size == 1
    keys = jnp.stack([jax.random.PRNGKey(0)] * 3)
    s = jax.jit(denv.reset)(keys)
    s = jax.jit(denv.step)(s, jnp.ones((3, 1)))
    # heavier carts accelerate less under the same force
    xd = np.asarray(s.pipeline_state.joint_qd[:, 0])
    assert xd[0] > xd[1] > xd[2]
    # each world equals the environment run on its own model
    one_env = cartpole.with_model(jax.tree_util.tree_map(lambda x, a: x[2] if a == 0 else x, models, denv.axes,
                                                         is_leaf=lambda x: x is None))
    one = jax.jit(lambda k: one_env.step(one_env.reset(k), jnp.ones(1)))(keys[2])
    np.testing.assert_allclose(s.obs[2], one.obs, rtol=1e-10)
    with pytest.raises(ValueError, match="keys"):
        denv.reset(keys[:2])
    with pytest.raises(ValueError, match="shape"):
        envs.DomainRandomization(cartpole, model.replace(body_mass=jnp.ones((3, 5))))


def test_quadruped_stands_at_its_4ms_step():
    """At the default 4 ms implicit-contact step (50 Hz policy) the zero-action quadruped stays up."""
    env = envs.QuadrupedWalk()
    assert env.observation_size == 35 and env.action_size == 12

    def run(s):
        def body(s, _):
            s = env.step(s, jnp.zeros(12))
            return s, (s.metrics["height"], s.done, s.reward)

        return jax.lax.scan(body, s, None, length=50)[1]  # 1 s

    s0 = env.reset(jax.random.PRNGKey(0))
    assert set(s0.metrics) == {"forward_velocity", "height"}
    z, done, reward = jax.jit(run)(s0)
    assert float(done.max()) == 0.0
    assert 0.3 < float(z.min()) and float(z.max()) < 0.5
    assert abs(float(reward[-1]) - 0.5) < 0.2  # the healthy bonus, little speed
    with pytest.raises(ValueError, match="make"):
        envs.make("ant")


@pytest.mark.slow  # ~70 s: compiles MJX's quadruped step (a comparison tool, not the library's physics)
def test_mjx_quadruped_twin_matches_the_task():
    """The MJX twin has QuadrupedWalk's observation layout, reward and termination, and also stands."""
    from jaxart.envs.mjx_quadruped import MjxQuadrupedWalk

    twin, env = MjxQuadrupedWalk(action_repeat=2), envs.QuadrupedWalk(action_repeat=1, dtype=jnp.float64)
    assert twin.observation_size == env.observation_size == 35 and twin.action_size == 12
    key = jax.random.PRNGKey(3)
    s_mjx, s_jax = twin.reset(key), env.reset(key)
    # Same reset noise, same observation layout (height, xyzw quaternion, joint angles, twist, joint rates).
    np.testing.assert_allclose(np.asarray(s_mjx.obs), np.asarray(s_jax.obs), atol=1e-5)

    def run(s):
        def body(s, _):
            s = twin.step(s, jnp.zeros(12))
            return s, (s.metrics["height"], s.done, s.reward)

        return jax.lax.scan(body, s, None, length=25)[1]  # 0.1 s at 2 ms x 2

    z, done, reward = jax.jit(run)(s_mjx)
    assert float(done.max()) == 0.0 and 0.3 < float(z.min()) and float(z.max()) < 0.5
    assert abs(float(reward[-1]) - 0.5) < 0.3  # the healthy bonus, little speed
    with pytest.raises(ValueError, match="shape"):
        twin.step(s_mjx, jnp.zeros(3))
    with pytest.raises(ValueError, match="solver"):
        MjxQuadrupedWalk(solver="pgs")
