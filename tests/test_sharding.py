"""jaxart.sharding: world-axis sharding over 4 forced host devices (in a subprocess: the device count is
fixed when JAX starts)."""

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent("""
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np
    import jaxart
    from jaxart import sharding

    assert len(jax.local_devices()) == 4, jax.local_devices()
    b = jaxart.ModelBuilder()
    b.add_mjcf(jaxart.assets.asset_path("double_pendulum"))
    model = b.finalize(dtype=jnp.float64)
    solver = jaxart.solvers.SolverFeatherstone(model)
    W, T = 8, 20
    q0 = jnp.linspace(-1.0, 1.0, W)[:, None] * jnp.array([1.0, 0.5])
    states = jax.vmap(lambda q: jaxart.eval_fk(model, q, jnp.zeros(2)))(q0)
    c0 = model.control()
    controls = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (W, T) + x.shape), c0)
    controls = controls.replace(joint_f=0.3 * jnp.ones((W, T, 2)))

    final, traj = sharding.sharded_rollout(solver, states, controls, dt=1e-3,
                                           output_fn=lambda s: s.joint_q)
    assert final.joint_q.sharding.device_set == set(jax.local_devices())
    shards = final.joint_q.addressable_shards
    assert len(shards) == 4 and all(s.data.shape == (2, 2) for s in shards)
    assert traj.shape == (W, T, 2)
    ref = jax.vmap(lambda s, c: jaxart.rollout(solver, s, c, dt=1e-3, output_fn=lambda x: x.joint_q))
    ref_final, ref_traj = jax.jit(ref)(states, controls)
    np.testing.assert_allclose(np.asarray(traj), np.asarray(ref_traj), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(final.body_q), np.asarray(ref_final.body_q), rtol=1e-12, atol=1e-12)

    # without controls (length=...), and the placement helper
    f2, _ = sharding.sharded_rollout(solver, states, None, dt=1e-3, length=5)
    assert f2.joint_q.shape == (W, 2)
    placed = sharding.shard_worlds(states)
    assert len(placed.body_q.addressable_shards) == 4
    try:
        sharding.shard_worlds(jax.tree_util.tree_map(lambda x: x[:6], states))
    except ValueError as e:
        assert "divisible" in str(e)
    else:
        raise AssertionError("6 worlds on 4 devices must be rejected")
    m2 = sharding.world_mesh(jax.local_devices()[:2])
    f3 = sharding.sharded_vmap(lambda q: jnp.sum(q**2), mesh=m2)(q0)
    np.testing.assert_allclose(np.asarray(f3), np.sum(np.asarray(q0) ** 2, axis=1))
    print("SHARDING-OK")
""")


def test_sharded_rollout_on_four_host_devices():
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert "SHARDING-OK" in out.stdout, out.stdout[-3000:] + out.stderr[-5000:]
