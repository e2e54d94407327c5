"""The bundled quadruped trotting under ``SolverFeatherstone``: per-foot contact forces against MuJoCo C.

Scene. ``jaxart/assets/quadruped.xml`` with its position servos stiffened to ``kp = 100 N·m/rad`` and given
``kv = 2 N·m·s/rad`` and friction ``μ = 0.3`` on the feet and the floor (the same MJCF string for both
simulators), float64, at the model's own step (2 ms), jaxart's default implicit contact law (two solves per step).
The robot starts standing on its feet (torso at 0.385 m, the feet touching the floor) and trots at 2 Hz: diagonal
pairs (fl + rr, fr + rl) alternate, each foot in stance half the cycle, its path in the hip's frame a straight
8 cm stroke backwards 0.36 m below the hip, then a 4 cm high swing forward whose ends match the stance speed;
stride and lift ramp up over the first 0.5 s.

Controller. The open-loop trot falls over at different times in the two simulators (a trot on two diagonal feet
is unstable in roll), so the targets are corrected from the torso's state, by the same law evaluated from each
simulator's own state at every step (:func:`servo_targets`, written once for numpy and ``jax.numpy``): every
foot target moves with the height of its hip relative to the torso's centre (attitude feedback, proportional and
derivative), with the torso's height error and vertical speed, and forwards/sideways with the torso's velocity
(Raibert-style foot placement). Both simulators then trot for the whole 2 s at nearly the same torso height.

Forces. MuJoCo's are ``mj_contactForce`` of each foot's contacts, turned into world axes. jaxart's are the forces
the step applied: :func:`~jaxart.contact.implicit_contact_forces` evaluates the nonlinear law at the step's
end velocity, which the default two solves have not converged to for sticking rows (their friction is a stiff
damper, ``μ f_n / ε``), so in this trot its forces miss the robot's momentum balance by 5.4 % of the weight rms
along x (13 % max; more than the net tangential tolerance below). :func:`applied_foot_forces` rebuilds the affine
force of the step's last solve (:func:`~jaxart.contact.implicit.linearize` at the previous solve's row
velocities, evaluated at the returned ones); those balance the robot's momentum change to 0.1 % of its weight
(asserted to 1 %). The free joint's angular damping (applied after the solve, and a force MuJoCo does not have)
is turned off for that reason.

What the oracle pins, measured over 2 s (moving averages over 50 ms, relative to the weight ``W = 117.3 N``):

* per-foot normal forces: rms 6.0 % of ``W``, max 23 % (tolerances 8 % / 30 %). The largest errors are at
  touch-down: under load jaxart's contact is softer than MuJoCo's (the importer's ``ke = 3.0e4 N/m`` lets a foot
  carrying half the weight sink 2 mm; MuJoCo's feet sink 0.22 mm, median over the trot), so its swing feet touch
  down earlier. A 4x stiffer floor in jaxart agrees better (3.3 % / 16 %), a 4x softer one fails (14 % / 42 %);
* net tangential force on all feet: rms 3.0 % / 2.8 % (x / y), max 8.4 % / 7.4 % (tolerances 4 % / 11 %).
  Per-foot tangential forces are not compared: with two or four feet down they are statically indeterminate (the
  squeeze between feet depends on each model's tangential compliance) and differ 1.5-3x;
* torso height within 1.8 mm (tolerance 3 mm); forward speed averaged over one gait cycle within 0.032 m/s
  (jaxart's steady trot runs at 0.245 m/s, MuJoCo's at 0.213; tolerance 0.06 m/s). It depends on friction: with
  ``μ = 1`` in jaxart's model only, jaxart trots at 0.10 m/s and the check fails (as do the normal forces, 8.4 % /
  35 %); with ``μ = 0.15`` it trots at 0.29 m/s and fails too. The speed integrates the net force, so it resolves
  biases of the net force far below the force comparison's noise.
"""

import warnings

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402
from numpy.typing import ArrayLike  # noqa: E402

import jaxart  # noqa: E402
from jaxart.contact.implicit import contact_law, linearize  # noqa: E402
from jaxart.kinematics.fk import eval_fk  # noqa: E402

G = 9.81
DT = 0.002  # the model's own step [s]
LEGS = ("fl", "fr", "rl", "rr")
KP, KV = 100.0, 2.0  # servo gains [N·m/rad], [N·m·s/rad]
MU = 0.3  # friction coefficient of the feet and the floor
HEIGHT, STRIDE, LIFT, FREQ, RAMP = 0.36, 0.08, 0.04, 2.0, 0.5  # foot below hip, stroke, swing lift [m]; [Hz]; [s]
# hip pitch joints of fl, fr, rl, rr in the torso frame [m]
HIPS = np.array([[0.18, 0.15, 0.0], [0.18, -0.15, 0.0], [-0.18, 0.15, 0.0], [-0.18, -0.15, 0.0]])
GAINS = {"tilt": 1.0, "tilt_rate": 0.05, "height": 1.0, "climb": 0.05, "speed": 0.1}  # [-], [s], [-], [s], [s]
WINDOW = 25  # moving-average window of the compared forces [steps] (50 ms)


def trot_mjcf(mu: float = MU) -> str:
    """The bundled quadruped's MJCF with the servos at ``KP``/``KV`` and friction ``mu`` on the feet and the floor
    (the same string for both simulators)."""
    with open(jaxart.assets.asset_path("quadruped")) as f:
        text = f.read()
    edits = {'<position kp="60"/>': f'<position kp="{KP}" kv="{KV}"/>',
             'friction="1.0 0.005 0.0001"': f'friction="{mu} 0.005 0.0001"',
             '<geom name="floor" type="plane"': f'<geom name="floor" friction="{mu} 0.005 0.0001" type="plane"'}
    for old, new in edits.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def leg_ik(x: ArrayLike, z: ArrayLike, xp=np) -> tuple:
    """Hip pitch and knee angles [rad] that put the foot at ``(x, z)`` [m] in the hip's frame (leg in its plane).

    Thigh ``(-0.08, -0.2)`` and calf ``(0.08, -0.2)`` at zero angles; a negative knee folds the leg.
    """
    dot, cross, sq = 0.0336, 0.032, 0.08 ** 2 + 0.2 ** 2  # thigh·calf, thigh×calf, |thigh|² [m²]
    cos = ((x * x + z * z) / 2 - sq) / np.hypot(dot, cross)
    knee = np.arctan2(cross, dot) - xp.arccos(xp.clip(cos, -1.0, 1.0))
    vx = -0.08 + 0.08 * xp.cos(knee) - 0.2 * xp.sin(knee)
    vz = -0.2 - 0.08 * xp.sin(knee) - 0.2 * xp.cos(knee)
    return xp.arctan2(vz, vx) - xp.arctan2(z, x), knee


def foot_path(t: ArrayLike, xp=np) -> tuple:
    """``(x, z, ramp)``: ``(4,)`` nominal foot positions [m] in the hips' frames at time ``t`` [s], the ramp [-].

    Stance (first half of a leg's cycle): straight back from ``+s/2`` to ``-s/2``; swing: a cubic forward whose end
    speeds equal the stance speed, lifted by ``LIFT (1 - cos 2πw)/2``. Stride and lift ramp up over ``RAMP``.
    """
    ramp = xp.clip(t / RAMP, 0.0, 1.0)
    stride, lift = STRIDE * ramp, LIFT * ramp
    phase = (FREQ * t + xp.asarray([0.0, 0.5, 0.5, 0.0])) % 1.0
    w = xp.clip(2.0 * phase - 1.0, 0.0, 1.0)
    swing_x = stride * (-0.5 * (2 * w ** 3 - 3 * w ** 2 + 1) - (w ** 3 - 2 * w ** 2 + w)
                        + 0.5 * (-2 * w ** 3 + 3 * w ** 2) - (w ** 3 - w ** 2))
    stance = phase < 0.5
    x = xp.where(stance, stride * (0.5 - 2.0 * phase), swing_x)
    z = xp.where(stance, -HEIGHT, -HEIGHT + lift * 0.5 * (1.0 - xp.cos(2.0 * np.pi * w)))
    return x, z, ramp


def servo_targets(t: ArrayLike, torso: tuple, xp=np) -> ArrayLike:
    """``(12,)`` servo targets [rad] (legs fl, fr, rl, rr; abduction, hip pitch, knee) from the torso's state.

    Args:
        t: Time [s].
        torso: ``(p (3,), R (3, 3), v (3,), ω (3,))``: world position [m], rotation (torso to world), COM
            velocity [m/s] and angular velocity [rad/s] of the torso.
        xp: ``numpy`` or ``jax.numpy``.
    """
    p, rot, v, w = torso
    x, z, ramp = foot_path(t, xp)
    hips = xp.asarray(HIPS) @ rot.T  # hip offsets in world axes
    rise_rate = xp.cross(w[None, :], hips)[:, 2]
    z = z + GAINS["tilt"] * hips[:, 2] + GAINS["tilt_rate"] * rise_rate  # a raised hip shortens its leg
    z = z - GAINS["height"] * (HEIGHT + 0.02 - p[2]) + GAINS["climb"] * v[2]  # a sinking torso extends all
    vb = rot.T @ v
    x = x + GAINS["speed"] * (vb[0] - 2.0 * STRIDE * FREQ * ramp)
    y = GAINS["speed"] * vb[1] * xp.ones(4)
    pitch, knee = leg_ik(x, z, xp)
    abduction = xp.arcsin(xp.clip(y / HEIGHT, -0.5, 0.5))
    return xp.stack([abduction, pitch, knee], axis=1).reshape(12)


def standing_targets() -> np.ndarray:
    """Servo targets of the stance pose at ``t = 0`` [rad]."""
    return servo_targets(0.0, (np.array([0.0, 0.0, HEIGHT + 0.02]), np.eye(3), np.zeros(3), np.zeros(3)))


def mujoco_trot(xml: str, steps: int) -> dict:
    """MuJoCo C's trot: ``{"pos", "vel"}`` ``(steps, 3)`` torso position/velocity, ``"feet"`` ``(steps, 4, 3)``
    world contact force on each foot [N] during each step."""
    mj = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mj)
    d.qpos[2], d.qpos[7:] = HEIGHT + 0.025, standing_targets()
    feet = [mj.geom(f"{leg}_foot").id for leg in LEGS]
    out = {"pos": np.zeros((steps, 3)), "vel": np.zeros((steps, 3)), "feet": np.zeros((steps, 4, 3))}
    rot, wrench = np.zeros(9), np.zeros(6)
    for i in range(steps):
        mujoco.mju_quat2Mat(rot, d.qpos[3:7])
        r = rot.reshape(3, 3)
        d.ctrl[:] = servo_targets(i * DT, (d.qpos[:3].copy(), r, d.qvel[:3].copy(), r @ d.qvel[3:6]))
        mujoco.mj_step(mj, d)  # the forces of mj_contactForce are those of this step's solve
        for c in range(d.ncon):
            con = d.contact[c]
            mujoco.mj_contactForce(mj, d, c, wrench)
            force = con.frame.reshape(3, 3).T @ wrench[:3]  # on geom2, world axes
            for j, g in enumerate(feet):
                out["feet"][i, j] += force * ((con.geom2 == g) - (con.geom1 == g))
        out["pos"][i], out["vel"][i] = d.qpos[:3], d.qvel[:3]
    return out


def applied_foot_forces(model: jaxart.Model, solvers: tuple, step: tuple, calves: list) -> jax.Array:
    """``(4, 3)`` world force [N] the step ``s → nxt`` applied to each foot (summed over its rows).

    The step's last solve applies the law linearised at the previous solve's row velocities, evaluated at the
    returned ones; ``solvers[1]`` (one solve fewer) gives the previous solve's velocities. ``step`` is
    ``(s, control, contacts, nxt)``: the step's state, control, contacts and returned state.
    """
    solver, first = solvers
    s, control, contacts, nxt = step
    law, _ = contact_law(model, s, contacts, DT, stiction_velocity=solver.stiction_velocity,
                         activation_length=solver.contact_activation_length)

    def row_velocity(joint_qd):
        moved = eval_fk(model, s.joint_q, joint_qd, s)

        def at(body):
            b = jnp.maximum(body, 0)
            com = jaxart.math.transform_point(moved.body_q[b], model.body_com[b])
            vel = moved.body_qd[b, :3] + jnp.cross(moved.body_qd[b, 3:], law.point - com)
            return jnp.where((jnp.asarray(body) < 0)[:, None], 0.0, vel)

        return at(law.body_b) - at(law.body_a)

    rows = linearize(law, row_velocity(first.step(s, control, contacts, DT).joint_qd))
    u = row_velocity(nxt.joint_qd)
    un = jnp.sum(u * law.normal, axis=1)
    f = rows.force0 - (rows.alpha * un)[:, None] * law.normal - rows.beta[:, None] * (u - un[:, None] * law.normal)
    on = contacts.active[:, None]
    return jnp.stack([jnp.sum(jnp.where(on & (law.body_b == b)[:, None], f, 0.0)
                              - jnp.where(on & (law.body_a == b)[:, None], f, 0.0), axis=0) for b in calves])


def jaxart_trot(model: jaxart.Model, steps: int, iterations: int = 2) -> dict:
    """jaxart's trot (``SolverFeatherstone``, implicit contact law with ``iterations`` solves, 2 by default): the
    fields of :func:`mujoco_trot` and ``"momentum"`` ``(steps, 3)``: the robot's rate of linear momentum minus its
    weight [N]."""
    solvers = tuple(jaxart.solvers.SolverFeatherstone(model, angular_damping=0.0, contact_iterations=k)
                    for k in (iterations, iterations - 1))
    labels = model.topology.body_label
    calves = [labels.index(f"{leg}_calf") for leg in LEGS]
    q = model.joint_q.at[2].set(HEIGHT + 0.025).at[7:].set(standing_targets())
    qd = jnp.zeros_like(model.joint_qd)
    s0 = eval_fk(model, q, qd, model.state()).replace(joint_q=q, joint_qd=qd)
    control0 = model.control()
    mass = jnp.sum(model.body_mass)

    def step(s, i):
        torso = (s.body_q[0, :3], jaxart.math.quat_to_matrix(s.body_q[0, 3:]), s.body_qd[0, :3], s.body_qd[0, 3:])
        control = control0.replace(joint_target_q=control0.joint_target_q.at[7:].set(servo_targets(i * DT, torso, jnp)))
        contacts = model.collide(s)
        nxt = solvers[0].step(s, control, contacts, DT)
        feet = applied_foot_forces(model, solvers, (s, control, contacts, nxt), calves)
        momentum = lambda x: jnp.sum(model.body_mass[:, None] * x.body_qd[:, :3], axis=0)  # noqa: E731
        return nxt, {"pos": nxt.body_q[0, :3], "vel": nxt.body_qd[0, :3], "feet": feet,
                     "momentum": (momentum(nxt) - momentum(s)) / DT - mass * model.gravity}

    out = jax.jit(lambda s: jax.lax.scan(step, s, jnp.arange(steps))[1])(s0)
    return {k: np.asarray(v) for k, v in out.items()}


def trot_model(xml: str) -> jaxart.Model:
    """jaxart's model of ``xml`` (float64; import warnings silenced)."""
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.add_mjcf(xml)
    return b.finalize(dtype=jnp.float64)


def moving_average(x: np.ndarray, window: int = WINDOW) -> np.ndarray:
    """Moving average along axis 0 (``valid`` part)."""
    c = np.cumsum(np.concatenate([np.zeros((1,) + x.shape[1:]), x]), axis=0)
    return (c[window:] - c[:-window]) / window


def agreement(ours: dict, theirs: dict, weight: float) -> dict:
    """Errors of jaxart's trot against MuJoCo's: per-foot normal and net tangential forces (filtered, relative to
    ``weight``), torso height [m] and forward speed averaged over one gait cycle [m/s]."""
    normal = moving_average(ours["feet"][:, :, 2]) - moving_average(theirs["feet"][:, :, 2])
    net = moving_average(ours["feet"][:, :, :2].sum(1)) - moving_average(theirs["feet"][:, :, :2].sum(1))
    cycle = int(round(1.0 / (FREQ * DT)))
    speed = moving_average(ours["vel"][:, 0], cycle) - moving_average(theirs["vel"][:, 0], cycle)
    return {"normal_rms": np.sqrt(np.mean(normal ** 2)) / weight, "normal_max": np.abs(normal).max() / weight,
            "net_rms": np.sqrt(np.mean(net ** 2, axis=0)) / weight, "net_max": np.abs(net).max(axis=0) / weight,
            "height": np.abs(ours["pos"][:, 2] - theirs["pos"][:, 2]).max(), "speed": np.abs(speed).max()}


def check_trot(seconds: float, tol: dict, model: jaxart.Model | None = None) -> dict:
    """Run both trots for ``seconds`` and assert the agreement within ``tol``; returns the measured errors."""
    xml = trot_mjcf()
    model = trot_model(xml) if model is None else model
    steps = int(round(seconds / DT))
    ours, theirs = jaxart_trot(model, steps), mujoco_trot(xml, steps)
    weight = float(np.sum(model.body_mass)) * G
    # the rebuilt forces are those the step applied: the robot's momentum balance, and nothing else touches
    np.testing.assert_allclose(ours["feet"].sum(1), ours["momentum"], atol=0.01 * weight)
    assert theirs["pos"][:, 2].min() > 0.36 and ours["pos"][:, 2].min() > 0.36  # the torso stays up
    err = agreement(ours, theirs, weight)
    assert err["normal_rms"] < tol["normal_rms"] and err["normal_max"] < tol["normal_max"], err
    assert np.all(err["net_rms"] < tol["net_rms"]) and np.all(err["net_max"] < tol["net_max"]), err
    assert err["height"] < tol["height"] and err["speed"] < tol["speed"], err
    return err


def test_two_second_trot_foot_forces_match_mujoco():
    """Tolerances and what they pin: the module docstring (a 4x softer floor or a wrong friction coefficient in
    jaxart's model fails; the first half second alone measured 2.7 % / 16 % per-foot normal rms / max, 2.1 % / 1.5 %
    net tangential rms). 30-40 s on two cores, most of it compiling the step."""
    check_trot(2.0, {"normal_rms": 0.08, "normal_max": 0.30, "net_rms": 0.04, "net_max": 0.11, "height": 3e-3,
                     "speed": 0.06})
