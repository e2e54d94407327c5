"""Domain randomisation: ``vmap`` over a batch of Models (per-world masses and friction) for every solver.

The RL pattern ``jax.vmap(step, in_axes=(model_axes, None))`` batches Model leaves; the batch-minor
kernels must treat batched model arrays like any other lane input. Each world must match a run with
its own unbatched model.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxart  # noqa: E402

STEPS = {jaxart.solvers.SolverFeatherstone: 2e-4, jaxart.solvers.SolverXPBD: 2e-3,
         jaxart.solvers.SolverSemiImplicit: 5e-5}


def _model():
    """A double pendulum (revolute joints) beside a free box resting just inside a ground plane."""
    b = jaxart.ModelBuilder()
    b.add_mjcf(jaxart.assets.asset_path("double_pendulum"))
    box = b.add_body(xform=((2.0, 0.0, 0.099), (0.0, 0.0, 0.0, 1.0)), label="box")
    b.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1)
    b.add_ground_plane()
    return b.finalize(dtype=jnp.float64)


@pytest.mark.slow
@pytest.mark.parametrize("solver_cls", list(STEPS), ids=lambda c: c.__name__)
def test_vmap_over_randomised_models(solver_cls):
    model = _model()
    scale = jnp.asarray([0.7, 1.0, 1.6])
    models = jax.vmap(lambda s: model.replace(body_mass=model.body_mass * s,
                                              shape_material_mu=model.shape_material_mu * s))(scale)
    s0 = model.state()
    s0 = jaxart.eval_fk(model, s0.joint_q.at[0].add(0.4), s0.joint_qd.at[-3].set(1.0), s0)
    dt = STEPS[solver_cls]

    def run(m):
        solver = solver_cls(m)
        control = m.control().replace(joint_f=jnp.full_like(m.control().joint_f, 0.2))
        s = solver.step(s0, control, m.collide(s0), dt)
        return s.body_q, s.body_qd

    got = jax.jit(jax.vmap(run))(models)
    one = jax.jit(run)
    for i in range(scale.shape[0]):
        want = one(jax.tree_util.tree_map(lambda x: x[i], models))  # noqa: B023
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g[i]), np.asarray(w), rtol=1e-9, atol=1e-12)
    assert not np.allclose(got[1][0], got[1][-1])  # the randomised parameters change the motion
