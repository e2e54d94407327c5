"""Impact test scenes with rigid-Coulomb closed forms, for any solver with ``step(state, control, contacts, dt)``.

Scenes (z up, gravity ``-G``):

* **Sliding box landing**: a 0.2 m cube (density 1000 → 8 kg) whose bottom face starts ``DROP`` = 5 cm above the
  ground while sliding at ``SLIDE_SPEED`` = 2 m/s along +x, ``MU`` = 0.5. A rigid body with Coulomb friction loses
  ``μ·√(2 g h)`` of tangential speed in the impact impulse and then decelerates at ``μ g``:
  :func:`rigid_box_stop_distance` (≈ 0.433 m).
* **Backspin ball**: a ball dropped with forward speed and backspin; the impact's friction impulse is bounded by
  ``μ`` times the normal impulse ``m √(2 g h)`` (:func:`rigid_ball_impact`), afterwards it slides until it rolls
  (:func:`rigid_ball_x`).
* The sliding box as **MJCF** (:func:`sliding_box_mjcf`), so MuJoCo C runs the same scene
  (:func:`mujoco_box_stop_distance`) and jaxart imports it, with one of :data:`MATERIALS`.

Initial velocities are set through the free joint (``joint_qd``) and forward kinematics, so generalized-coordinate
and maximal-coordinate solvers start from the same :class:`~jaxart.State`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import jaxart
from jaxart.sim.configs import ShapeConfig

G = 9.81  # gravity [m/s²]
MU = 0.5  # Coulomb friction coefficient of both shapes
BOX_HALF = 0.1  # half extent of the cube [m]
DROP = 0.05  # height of the box's bottom face / the ball's lowest point above the ground at t = 0 [m]
SLIDE_SPEED = 2.0  # initial +x speed of the box [m/s]
DENSITY = 1000.0  # [kg/m³]


@dataclass(frozen=True)
class Material:
    """A contact material of both shapes of a scene, as MJCF ``solref = (timeconst, dampratio)``.

    The MJCF importer maps it to ``ke = m/(τ ζ)²`` [N/m] and ``kd = 2 m/τ`` [N·s/m] with ``m`` the box's mass;
    :func:`material_gains` gives the same gains to the builder scenes.

    Attributes:
        name: Key in :data:`MATERIALS`.
        timeconst: ``solref[0]`` [s].
        dampratio: ``solref[1]``.
        refsafe: MuJoCo's ``refsafe`` flag (``timeconst`` clamped to at least ``2 dt``); ``False`` writes
            ``<flag refsafe="disable"/>``.
    """

    name: str
    timeconst: float
    dampratio: float
    refsafe: bool = True


def _solref_of(ke: float, kd: float, mass: float) -> tuple[float, float]:
    """``(timeconst, dampratio)`` whose importer gains for ``mass`` are ``(ke, kd)``."""
    tc = 2.0 * mass / kd
    return tc, math.sqrt(mass / ke) / tc


def box_mass() -> float:
    """Mass of the cube [kg]."""
    return DENSITY * (2.0 * BOX_HALF) ** 3


_STIFF_KE = 1.0e6  # [N/m]


MATERIALS: dict[str, Material] = {
    # Newton's default ShapeConfig gains for the 8 kg box (ke = 2.5e3 N/m, kd = 100 N·s/m)
    "newton_default": Material("newton_default", *_solref_of(ShapeConfig.ke, ShapeConfig.kd, 8.0)),
    # stiff and critically damped for the 8 kg box: ke = 1e6 N/m, kd = 2 √(ke m) ≈ 5657 N·s/m (no refsafe clamp)
    "stiff": Material("stiff", math.sqrt(8.0 / _STIFF_KE), 1.0, refsafe=False),
    # MJCF's default solref (0.02, 1), clamped by refsafe (τ ≥ 2 dt)
    "mjcf_default": Material("mjcf_default", 0.02, 1.0),
}


def material_gains(material: Material | str, mass: float, dt: float) -> tuple[float, float]:
    """``(ke [N/m], kd [N·s/m])`` of ``material`` for a body of ``mass`` [kg] at step ``dt`` [s] (MJCF importer)."""
    from jaxart.io.mjcf.convert import solref_gains

    mat = MATERIALS[material] if isinstance(material, str) else material
    return solref_gains((mat.timeconst, mat.dampratio), mass, min_timeconst=2.0 * dt if mat.refsafe else 0.0)


# ----------------------------------------------------------------------------------------------- closed forms


def rigid_box_stop_distance(h: float = DROP, v0: float = SLIDE_SPEED, mu: float = MU, g: float = G) -> float:
    """Distance [m] a rigid box slides (flat landing, Coulomb friction) from release at height ``h`` until it stops.

    ``v0·t_fall + v1²/(2 μ g)`` with ``t_fall = √(2h/g)`` and ``v1 = max(v0 − μ √(2 g h), 0)`` (the impact's
    friction impulse is ``μ`` times its normal impulse ``m √(2 g h)``).

    Args:
        h: Drop height of the bottom face [m].
        v0: Initial horizontal speed [m/s].
        mu: Friction coefficient.
        g: Gravity magnitude [m/s²].
    """
    t_fall = math.sqrt(2.0 * h / g)
    v1 = max(v0 - mu * math.sqrt(2.0 * g * h), 0.0)
    return v0 * t_fall + v1 * v1 / (2.0 * mu * g)


def rigid_box_stop_time(h: float = DROP, v0: float = SLIDE_SPEED, mu: float = MU, g: float = G) -> float:
    """Time [s] from release until the rigid box of :func:`rigid_box_stop_distance` stops."""
    v1 = max(v0 - mu * math.sqrt(2.0 * g * h), 0.0)
    return math.sqrt(2.0 * h / g) + v1 / (mu * g)


class BallImpact(NamedTuple):
    """Rigid Coulomb impact of a solid ball on the ground (zero restitution).

    Attributes:
        vx: Horizontal COM velocity right after the impact [m/s] (world x).
        wy: Angular velocity about world y right after the impact [rad/s].
        rolling: Whether the impact ends with the contact point at rest (rolling, ``vx = wy·R``).
        friction_impulse: Horizontal friction impulse on the ball [N·s] (world x).
        normal_impulse: Normal impulse on the ball [N·s] (``m √(2 g h)``).
    """

    vx: float
    wy: float
    rolling: bool
    friction_impulse: float
    normal_impulse: float


def rigid_ball_impact(vx0: float, wy0: float, *, h: float = DROP, mu: float = MU, radius: float = 0.1,
                      mass: float = 1.0, g: float = G) -> BallImpact:
    """Velocities after a solid ball (``I = 2/5 m R²``) dropped from ``h`` hits the ground (rigid Coulomb).

    The contact point's slip is ``u = vx − wy R``; the friction impulse needed to stop it is ``m u / 3.5``; if that
    exceeds ``μ m √(2 g h)`` the ball leaves the impact still sliding with the impulse at the cone.

    Args:
        vx0: Initial horizontal speed [m/s] (world x).
        wy0: Initial spin about world y [rad/s] (backspin: ``wy0 < 0`` for ``vx0 > 0``).
        h: Drop height of the lowest point [m].
        mu: Friction coefficient.
        radius: Ball radius [m].
        mass: Ball mass [kg] (only scales the impulses).
        g: Gravity magnitude [m/s²].
    """
    pn = mass * math.sqrt(2.0 * g * h)
    u0 = vx0 - wy0 * radius
    stick = mass * u0 / 3.5
    rolling = abs(stick) <= mu * pn
    pt = -stick if rolling else -math.copysign(mu * pn, u0)
    inertia = 0.4 * mass * radius**2
    return BallImpact(vx0 + pt / mass, wy0 - radius * pt / inertia, rolling, pt, pn)


def rigid_ball_x(t: float, vx0: float, wy0: float, *, h: float = DROP, mu: float = MU, radius: float = 0.1,
                 g: float = G) -> float:
    """Horizontal COM displacement [m] at time ``t`` [s] of the ball of :func:`rigid_ball_impact`.

    Free flight until ``t_fall = √(2h/g)``; then sliding at deceleration ``μ g`` (slip shrinking at ``3.5 μ g``)
    until the ball rolls at ``(5 vx + 2 R wy)/7`` (rolling resistance neglected).
    """
    t_fall = math.sqrt(2.0 * h / g)
    if t <= t_fall:
        return vx0 * t
    imp = rigid_ball_impact(vx0, wy0, h=h, mu=mu, radius=radius, g=g)
    x1 = vx0 * t_fall
    u1 = imp.vx - imp.wy * radius
    t_roll = abs(u1) / (3.5 * mu * g)
    a = -math.copysign(mu * g, u1)
    ts = min(t - t_fall, t_roll)
    x_slide = imp.vx * ts + 0.5 * a * ts * ts
    v_roll = (5.0 * imp.vx + 2.0 * radius * imp.wy) / 7.0
    return x1 + x_slide + v_roll * max(t - t_fall - t_roll, 0.0)


# ----------------------------------------------------------------------------------------------- scenes


def _free_start(model, v, w):
    """The model's initial state with the first FREE joint's velocity ``(v, ω)`` (world) and FK applied."""
    qd = np.zeros(model.joint_dof_count)
    qd[:3], qd[3:6] = v, w
    return jaxart.eval_fk(model, model.joint_q, jnp.asarray(qd, model.joint_q.dtype))


def sliding_box_model(material: Material | str = "newton_default", dt: float = 5e-3, *, mu: float = MU,
                      h: float = DROP, v0: float = SLIDE_SPEED):
    """The sliding-box scene through :class:`~jaxart.ModelBuilder`: ``(model, state)`` (float64).

    Args:
        material: A :class:`Material` or a key of :data:`MATERIALS`.
        dt: Step [s] (sets the gains of ``mjcf_default`` as the MJCF importer would).
        mu: Friction coefficient of both shapes.
        h: Drop height of the bottom face [m].
        v0: Initial +x speed [m/s].
    """
    ke, kd = material_gains(material, box_mass(), dt)
    cfg = ShapeConfig(density=DENSITY, ke=ke, kd=kd, mu=mu, restitution=0.0)
    b = jaxart.ModelBuilder(gravity=-G)
    body = b.add_body(xform=(0.0, 0.0, BOX_HALF + h, 0.0, 0.0, 0.0, 1.0), label="box")
    b.add_shape_box(body, hx=BOX_HALF, hy=BOX_HALF, hz=BOX_HALF, cfg=cfg)
    b.add_ground_plane(cfg=ShapeConfig(density=0.0, ke=ke, kd=kd, mu=mu, restitution=0.0))
    model = b.finalize(dtype=jnp.float64)
    return model, _free_start(model, (v0, 0.0, 0.0), (0.0, 0.0, 0.0))


def backspin_ball_model(vx0: float, wy0: float, *, radius: float = 0.1, mu: float = MU, h: float = DROP,
                        ke: float = 1.0e5, kd: float = 1.0e3):
    """A solid ball (density 1000) whose lowest point is ``h`` above the ground: ``(model, state)`` (float64).

    Torsional and rolling friction are zero (the closed forms neglect them).

    Args:
        vx0: Initial +x speed [m/s].
        wy0: Initial spin about world y [rad/s].
        radius: Ball radius [m].
        mu: Friction coefficient of both shapes.
        h: Drop height [m].
        ke: Contact stiffness [N/m] (penalty and implicit solvers).
        kd: Contact damping [N·s/m].
    """
    cfg = ShapeConfig(density=DENSITY, ke=ke, kd=kd, mu=mu, restitution=0.0, mu_torsional=0.0, mu_rolling=0.0)
    b = jaxart.ModelBuilder(gravity=-G)
    body = b.add_body(xform=(0.0, 0.0, radius + h, 0.0, 0.0, 0.0, 1.0), label="ball")
    b.add_shape_sphere(body, radius=radius, cfg=cfg)
    b.add_ground_plane(cfg=ShapeConfig(density=0.0, ke=ke, kd=kd, mu=mu, restitution=0.0, mu_torsional=0.0,
                                       mu_rolling=0.0))
    model = b.finalize(dtype=jnp.float64)
    return model, _free_start(model, (vx0, 0.0, 0.0), (0.0, wy0, 0.0))


def sliding_box_mjcf(material: Material | str = "newton_default", dt: float = 5e-3, *, mu: float = MU,
                     h: float = DROP, refsafe: bool | None = None) -> str:
    """The sliding box as an MJCF string (timestep ``dt``, both geoms with ``material`` as ``solref``).

    ``refsafe`` overrides the material's ``refsafe`` flag (``None``: the material's).

    The initial velocity is not part of the XML (it has no keyframe): set it with
    :func:`mjcf_box_state` (jaxart) or ``data.qvel[0] = SLIDE_SPEED`` (MuJoCo C).
    """
    mat = MATERIALS[material] if isinstance(material, str) else material
    sr = f' solref="{mat.timeconst:.9g} {mat.dampratio:.9g}"'
    fr = f'friction="{mu:g} 0.005 0.0001"'
    flag = "" if (mat.refsafe if refsafe is None else refsafe) else '<flag refsafe="disable"/>'
    return f"""<mujoco model="sliding_box">
  <option timestep="{dt:g}" gravity="0 0 {-G:g}">{flag}</option>
  <worldbody>
    <geom name="ground" type="plane" size="5 5 0.1" {fr}{sr}/>
    <body name="box" pos="0 0 {BOX_HALF + h:g}">
      <freejoint name="box_free"/>
      <geom name="box" type="box" size="{BOX_HALF:g} {BOX_HALF:g} {BOX_HALF:g}" density="{DENSITY:g}" {fr}{sr}/>
    </body>
  </worldbody>
</mujoco>
"""


def mjcf_box_state(model, v0: float = SLIDE_SPEED):
    """Initial state of the imported :func:`sliding_box_mjcf` model: the box sliding at ``v0`` [m/s] along +x."""
    return _free_start(model, (v0, 0.0, 0.0), (0.0, 0.0, 0.0))


def mujoco_box_stop_distance(material: Material | str = "newton_default", dt: float = 5e-3, *,
                             t_end: float | None = None, v0: float = SLIDE_SPEED) -> float:
    """x displacement [m] of the box in MuJoCo C (default solver and integrator) after ``t_end`` [s].

    ``t_end`` defaults to the rigid stopping time plus 0.3 s. MuJoCo C always runs with its ``refsafe`` clamp
    (``timeconst ≥ 2 dt``): without it its soft contact is unstable for the ``stiff`` material at 5 ms and beyond.
    """
    import mujoco

    m = mujoco.MjModel.from_xml_string(sliding_box_mjcf(material, dt, refsafe=True))
    d = mujoco.MjData(m)
    d.qvel[0] = v0
    t_end = rigid_box_stop_time(v0=v0) + 0.3 if t_end is None else t_end
    x0 = float(d.qpos[0])
    for _ in range(int(round(t_end / dt))):
        mujoco.mj_step(m, d)
    return float(d.qpos[0]) - x0


# ----------------------------------------------------------------------------------------------- simulation

StepFn = Callable[[object, object, object], object]  # (model, state, dt) -> state


def solver_step_fn(solver) -> StepFn:
    """``(model, state, dt) -> state``: collide at ``state`` and take one ``solver.step`` (no control)."""

    def step(model, state, dt):
        return solver.step(state, None, model.collide(state), dt)

    return step


def simulate(step_fn: StepFn, model, state, dt: float, t_end: float, *, body: int = 0):
    """Run ``round(t_end/dt)`` steps under one ``jit`` (``lax.scan``).

    Args:
        step_fn: ``(model, state, dt) -> state`` (e.g. :func:`solver_step_fn`).
        model: The model.
        state: Initial state.
        dt: Step [s].
        t_end: Simulated time [s].
        body: Body whose COM x is traced.

    Returns:
        ``(final_state, x)``: the final :class:`~jaxart.State` and ``(n_steps,)`` COM x of ``body`` after each
        step [m] (numpy).
    """
    n = int(round(t_end / dt))
    com = model.body_com[body]

    def one(s, _):
        s = step_fn(model, s, dt)
        q = s.body_q[body]
        return s, q[0] + _rotate(q[3:], com)[0]

    final, xs = jax.jit(lambda s: jax.lax.scan(one, s, None, length=n))(state)
    return final, np.asarray(xs)


def _rotate(quat, v):
    """Rotate ``v`` by the unit quaternion ``quat = (x, y, z, w)``."""
    u, w = quat[:3], quat[3]
    t = 2.0 * jnp.cross(u, v)
    return v + w * t + jnp.cross(u, t)


def stop_distance(step_fn: StepFn, model, state, dt: float, t_end: float | None = None, *, body: int = 0) -> float:
    """COM x displacement [m] of ``body`` after ``t_end`` [s] (default: rigid stopping time + 0.3 s)."""
    t_end = rigid_box_stop_time() + 0.3 if t_end is None else t_end
    q0 = state.body_q[body]
    x0 = float(q0[0] + _rotate(q0[3:], model.body_com[body])[0])
    _, xs = simulate(step_fn, model, state, dt, t_end, body=body)
    return float(xs[-1]) - x0
