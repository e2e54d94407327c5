"""Gradient-based tasks through SolverFeatherstone's implicit contact: a bank shot and a push.

* **Bank shot**: a ball of 5 cm radius (0.52 kg) launched from 0.3 m height toward a wall 1 m away bounces off
  the wall and then off the ground; the loss is the squared distance of its position (x, z) at ``T`` = 0.65 s, in flight
  after the ground bounce, to a target. Gradient descent on the launch velocity reaches the target. The 2 ms step
  resolves each impact over about ten steps; at 5 ms the backward-Euler spring's numerical damping leaves a
  restitution of about 0.35, the ball barely bounces and the impact-phase ripple of the outcome dominates its
  gradient (README, "Contact at the model's time step").
* **Push**: a 1 kg pusher on a prismatic joint, driven by a constant force, runs into an 8 kg box resting on
  the ground 15 cm ahead (touch/separate between two bodies, stick/slip of the box on the ground).

Oracles: the target is the simulator's own outcome of a reference launch (so it is reachable), and the loss
sampled finely along a line in parameter space has no jump larger than five times its neighbouring differences
(outcomes are continuous in the parameters, see ``test_impact_friction.py`` for a landing).
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
import pytest  # noqa: E402

import jaxart  # noqa: E402
from jaxart.sim.configs import ShapeConfig  # noqa: E402

# Bank shot: bouncy ball material (the discrete law's normal restitution at 2 ms is about 0.6), step and horizon.
BALL_CFG = ShapeConfig(ke=1e4, kd=5.0, mu=0.3, density=1000.0)
BANK_DT = 2e-3  # [s]
BANK_STEPS = 325  # T = 0.65 s
WALL_X = 1.0  # wall face [m]
REFERENCE_LAUNCH = (3.0, 2.0)  # (vx, vz) [m/s] whose position at T is the target
START_LAUNCH = (2.6, 2.5)  # (vx, vz) [m/s] where gradient descent starts
# Push: box and pusher material (μ = 0.5: the box slides once pushed with more than about 39 N).
PUSH_CFG = ShapeConfig(ke=1e4, kd=200.0, mu=0.5, density=1000.0)
PUSH_DT = 5e-3  # [s]
PUSH_STEPS = 100  # 0.5 s
PUSH_TARGET = 0.32  # box centre x the push should reach [m]


def _bank_shot():
    """Ground, a 0.2 m thick wall with its face at ``WALL_X`` and a ball at (0, 0, 0.3); returns (model, solver)."""
    b = jaxart.ModelBuilder()
    b.add_ground_plane(cfg=BALL_CFG)
    b.add_shape_box(-1, xform=((WALL_X + 0.1, 0, 0.5), (0, 0, 0, 1)), hx=0.1, hy=0.5, hz=0.5, cfg=BALL_CFG)
    ball = b.add_body(xform=((0, 0, 0.3), (0, 0, 0, 1)))
    b.add_shape_sphere(ball, radius=0.05, cfg=BALL_CFG)
    model = b.finalize(dtype=jnp.float64)
    return model, jaxart.solvers.SolverFeatherstone(model)


def _bank_trajectory(model, solver, launch):
    """Ball positions and velocities in the x–z plane at every step, ``(BANK_STEPS, 2)`` each, for a launch
    velocity ``(vx, vz)`` [m/s]."""
    s = model.state()
    s = s.replace(joint_qd=s.joint_qd.at[0].set(launch[0]).at[2].set(launch[1]),
                  body_qd=s.body_qd.at[0, 0].set(launch[0]).at[0, 2].set(launch[1]))
    xz = jnp.array([0, 2])

    def step(s, _):
        s = solver.step(s, None, model.collide(s), BANK_DT)
        return s, (s.body_q[0, xz], s.body_qd[0, xz])

    return jax.lax.scan(step, s, None, length=BANK_STEPS)[1]


def _push():
    """Ground, a 1 kg pusher cube (10 cm) on a prismatic x joint at 10 cm height, and an 8 kg box (20 cm cube)
    resting on the ground with its near face 15 cm ahead of the pusher's; returns (model, solver)."""
    b = jaxart.ModelBuilder()
    b.add_ground_plane(cfg=PUSH_CFG)
    pusher = b.add_link()
    b.add_shape_box(pusher, hx=0.05, hy=0.05, hz=0.05, cfg=PUSH_CFG)
    b.add_articulation([b.add_joint_prismatic(-1, pusher, parent_xform=((0, 0, 0.1), (0, 0, 0, 1)), axis=(1, 0, 0))])
    box = b.add_body(xform=((0.3, 0, 0.1), (0, 0, 0, 1)))
    b.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1, cfg=PUSH_CFG)
    model = b.finalize(dtype=jnp.float64)
    return model, jaxart.solvers.SolverFeatherstone(model)


def _bounces(velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step indices where the ball's x velocity turns negative (wall) and its z velocity turns positive (ground)."""
    vx, vz = velocity[:, 0], velocity[:, 1]
    return np.nonzero((vx[1:] < 0) & (vx[:-1] >= 0))[0], np.nonzero((vz[1:] > 0) & (vz[:-1] <= 0))[0]


def _assert_continuous(samples: np.ndarray, out: np.ndarray, ratio: float = 5.0):
    """No difference between neighbouring samples exceeds ``ratio`` times the larger of its two neighbouring
    differences (a kink passes, a jump does not); ``out`` is ``(n, k)``."""
    d = np.abs(np.diff(out, axis=0))
    left = np.pad(d, ((1, 0), (0, 0)))[:-1]
    right = np.pad(d, ((0, 1), (0, 0)))[1:]
    bound = ratio * np.maximum(left, right) + 1e-9 + 1e-6 * np.ptp(out, axis=0)
    bad = np.nonzero(np.any(d > bound, axis=1))[0]
    assert bad.size == 0, [(float(samples[i]), float(samples[i + 1]), d[i], np.maximum(left, right)[i]) for i in bad]


def test_continuity_check_flags_a_jump_but_not_a_kink():
    """The continuity criterion on synthetic data: a kink and a steep ramp pass, a step of the same size fails."""
    x = np.linspace(0.0, 1.0, 201)
    kink = np.abs(x - 0.5)[:, None]
    ramp = (np.clip((x - 0.5) / 0.02, 0.0, 1.0) + 0.1 * x)[:, None]
    _assert_continuous(x, kink)
    _assert_continuous(x, ramp)
    with pytest.raises(AssertionError):
        _assert_continuous(x, (np.where(x > 0.5, 1.0, 0.0) + 0.1 * x)[:, None])


@pytest.mark.slow
def test_bank_shot_gradient_descent_reaches_the_target():
    """Adam (lr 0.05) on the launch velocity from (2.6, 2.5) m/s: the ball hits the wall 0.38 s in (0.55 m high)
    and the ground at 0.63 s, missing the target (its position at T for a (3, 2) m/s launch: wall at 0.33 s,
    ground at 0.55 s, then rising at x = 0.44 m, z = 0.16 m) by 16 cm; 30 steps end under 10 % of the
    starting loss (the gradient flows through both bounces)."""
    model, solver = _bank_shot()
    run = jax.jit(lambda v: _bank_trajectory(model, solver, v))
    ref_p, ref_v = (np.asarray(a) for a in run(jnp.array(REFERENCE_LAUNCH)))
    start_p, start_v = (np.asarray(a) for a in run(jnp.array(START_LAUNCH)))
    for p, v in ((ref_p, ref_v), (start_p, start_v)):
        wall, ground = _bounces(v)
        assert wall.size == 1 and ground.size >= 1 and wall[0] < ground[0]  # off the wall, then off the ground
        assert p[wall[0], 1] > 0.3 and v[-1, 1] > 0.0  # the wall hit is in the air, the ball rises at T
    target = jnp.asarray(ref_p[-1])
    assert 0.1 < np.linalg.norm(start_p[-1] - ref_p[-1]) < 0.3

    loss_and_grad = jax.jit(jax.value_and_grad(lambda v: jnp.sum((_bank_trajectory(model, solver, v)[0][-1]
                                                                  - target) ** 2)))
    v = jnp.array(START_LAUNCH)
    opt = optax.adam(0.05)
    opt_state = opt.init(v)
    losses = []
    for _ in range(30):
        loss, g = loss_and_grad(v)
        losses.append(float(loss))
        updates, opt_state = opt.update(g, opt_state)
        v = optax.apply_updates(v, updates)
    final = float(loss_and_grad(v)[0])
    assert final < 0.1 * losses[0], (losses, final, np.asarray(v))


def test_bank_shot_outcome_is_continuous_in_the_launch_speed():
    """The ball's position at T and the bank shot's loss over 201 launch speeds vx in [2.95, 3.05] m/s (vz = 2):
    the wall impact's time moves by 10 ms (5 steps), so the impact phase sweeps the step grid; no jumps."""
    model, solver = _bank_shot()
    target = jnp.array([0.44, 0.16])

    def outcome(vx):
        p = _bank_trajectory(model, solver, jnp.stack([vx, jnp.asarray(REFERENCE_LAUNCH[1])]))[0][-1]
        return jnp.concatenate([p, jnp.sum((p - target) ** 2)[None]])

    speeds = np.linspace(2.95, 3.05, 201)
    out = np.asarray(jax.jit(jax.vmap(outcome))(jnp.asarray(speeds)))
    assert np.ptp(out[:, 0]) > 0.005  # the line moves the outcome
    _assert_continuous(speeds, out)


def test_push_outcome_is_continuous_in_the_drive_force():
    """The box's final x, the pusher's travel and the push loss ``(x − 0.32 m)²`` over 201 constant drive forces
    geometrically spaced in [0.5, 80] N: the pusher first misses the box (below ~1.2 N), then touches it and the box
    sticks, then slides (touch/separate between two bodies and stick/slip on the ground, each a kink, no jump)."""
    model, solver = _push()

    def outcome(force):
        control = model.control()
        control = control.replace(joint_f=control.joint_f.at[0].set(force))
        step = lambda s, _: (solver.step(s, control, model.collide(s), PUSH_DT), None)  # noqa: E731
        s = jax.lax.scan(step, model.state(), None, length=PUSH_STEPS)[0]
        return jnp.stack([s.body_q[1, 0], s.joint_q[0], (s.body_q[1, 0] - PUSH_TARGET) ** 2])

    forces = np.geomspace(0.5, 80.0, 201)  # finer where the pusher first reaches the box
    out = np.asarray(jax.jit(jax.vmap(outcome))(jnp.asarray(forces)))
    assert out[0, 1] < 0.1 and out[-1, 0] > PUSH_TARGET + 0.01  # misses at 0.5 N, pushes the box past the target
    _assert_continuous(forces, out)
