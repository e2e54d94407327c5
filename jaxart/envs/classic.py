"""Swing-up tasks: the bundled pendulum and a cart-pole built with the ModelBuilder."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.assets import asset_path
from jaxart.envs.base import Env, State
from jaxart.sim.builder import ModelBuilder
from jaxart.sim.configs import ShapeConfig


def _upright(angle: jax.Array) -> jax.Array:
    """1 when a pole hanging at angle 0 points straight up (angle = ±π), 0 when hanging."""
    return 0.5 * (1.0 - jnp.cos(angle))


class PendulumSwingup(Env):
    """Swing the bundled pendulum (hinge about Y, hanging at q = 0) up to q = ±π and hold it.

    A torque-limited task: ``max_torque`` (default 2.5 N·m) is about half of the 4.9 N·m gravity
    torque at the horizontal, so the pendulum must pump energy. Reward
    ``(1 - cos q)/2 - 1e-3 q̇² - 1e-2 a²`` (smooth, for analytic policy gradients); never done.

    Observation ``(cos q, sin q, q̇)``; action ``(1,)`` in [-1, 1] scaled to ``max_torque``.

    Args:
        dt: Physics step [s] (default 0.01).
        action_repeat: Physics steps per environment step (default 2).
        max_torque: Torque at ``|a| = 1`` [N·m].
        init_noise: Half-width of the uniform initial angle and velocity noise around hanging.
        dtype: Model float dtype.
    """

    def __init__(self, *, dt: float = 0.01, action_repeat: int = 2, max_torque: float = 2.5,
                 init_noise: float = 0.1, dtype=None) -> None:
        b = ModelBuilder()
        b.add_mjcf(asset_path("pendulum"))
        super().__init__(b.finalize(dtype=dtype), solver_kwargs={"angular_damping": 0.0}, dt=dt,
                         action_repeat=action_repeat)
        self.max_torque = float(max_torque)
        self.init_noise = float(init_noise)

    @property
    def action_size(self) -> int:
        return 1

    def reset(self, rng: jax.Array) -> State:
        ft = self.model.joint_q.dtype
        q, qd = self.init_noise * jax.random.uniform(rng, (2, 1), ft, -1.0, 1.0)
        ps = self.pipeline_init(q, qd)
        zero = jnp.zeros((), ft)
        return State(ps, self._obs(ps), zero, zero, {"upright": zero}, {"rng": rng})

    def step(self, state: State, action: jax.Array) -> State:
        a = self._check_action(action)
        control = self.model.control()
        control = control.replace(joint_f=(self.max_torque * a).astype(control.joint_f.dtype))
        ps = self.pipeline_step(state.pipeline_state, control)
        q, qd = ps.joint_q[0], ps.joint_qd[0]
        up = _upright(q)
        reward = up - 1e-3 * qd**2 - 1e-2 * jnp.sum(a**2)
        return state.replace(pipeline_state=ps, obs=self._obs(ps), reward=reward.astype(q.dtype),
                             metrics={**state.metrics, "upright": up})

    @staticmethod
    def _obs(ps) -> jax.Array:
        q, qd = ps.joint_q[0], ps.joint_qd[0]
        return jnp.stack([jnp.cos(q), jnp.sin(q), qd])


def cartpole_model(*, pole_length: float = 1.0, pole_mass: float = 0.1, cart_mass: float = 1.0,
                   rail: float = 2.0, dtype=None):
    """A cart on a rail along X (prismatic, soft limits at ``±rail``) with a pole hinged about Y.

    The pole hangs along -Z at ``q = 0`` (upright at ``q = ±π``); uniform rod inertia, massless
    visual shapes, no collisions.
    """
    b = ModelBuilder()
    visual = ShapeConfig(density=0.0, has_shape_collision=False, collision_group=0)
    cart = b.add_link(mass=cart_mass, inertia=np.diag([0.01, 0.02, 0.02]), lock_inertia=True, label="cart")
    b.add_shape_box(cart, hx=0.2, hy=0.1, hz=0.05, cfg=visual)
    L, m = float(pole_length), float(pole_mass)
    pole = b.add_link(mass=m, com=(0.0, 0.0, -0.5 * L), inertia=np.diag([m * L * L / 12, m * L * L / 12, 1e-5]),
                      lock_inertia=True, label="pole")
    b.add_shape_capsule(pole, xform=((0.0, 0.0, -0.5 * L), (0.0, 0.0, 0.0, 1.0)), radius=0.03, half_height=0.5 * L,
                        cfg=visual)
    j0 = b.add_joint_prismatic(-1, cart, axis=(1.0, 0.0, 0.0), limit_lower=-rail, limit_upper=rail, limit_ke=1e4,
                               limit_kd=1e2, label="slider")
    j1 = b.add_joint_revolute(cart, pole, axis=(0.0, 1.0, 0.0), label="hinge")
    b.add_articulation([j0, j1], label="cartpole")
    return b.finalize(dtype=dtype)


class CartpoleSwingup(Env):
    """Swing up and balance a pole on a cart (force on the cart only).

    Reward ``(1 - cos θ)/2 - 0.05 x² - 1e-3 θ̇² - 1e-2 a²`` (smooth, for analytic policy
    gradients); never done (the rail has soft limits at ±2 m).

    Observation ``(x, cos θ, sin θ, ẋ, θ̇)``; action ``(1,)`` in [-1, 1] scaled to ``max_force``.

    Args:
        dt: Physics step [s] (default 0.01).
        action_repeat: Physics steps per environment step (default 2).
        max_force: Cart force at ``|a| = 1`` [N] (default 10).
        init_noise: Half-width of the uniform initial state noise around hanging at the centre.
        dtype: Model float dtype.
    """

    def __init__(self, *, dt: float = 0.01, action_repeat: int = 2, max_force: float = 10.0,
                 init_noise: float = 0.1, dtype=None) -> None:
        super().__init__(cartpole_model(dtype=dtype), solver_kwargs={"angular_damping": 0.0}, dt=dt,
                         action_repeat=action_repeat)
        self.max_force = float(max_force)
        self.init_noise = float(init_noise)

    @property
    def action_size(self) -> int:
        return 1

    def reset(self, rng: jax.Array) -> State:
        ft = self.model.joint_q.dtype
        q, qd = self.init_noise * jax.random.uniform(rng, (2, 2), ft, -1.0, 1.0)
        ps = self.pipeline_init(q, qd)
        zero = jnp.zeros((), ft)
        return State(ps, self._obs(ps), zero, zero, {"upright": zero, "cart_x": zero}, {"rng": rng})

    def step(self, state: State, action: jax.Array) -> State:
        a = self._check_action(action)
        control = self.model.control()
        force = jnp.concatenate([self.max_force * a, jnp.zeros(1, a.dtype)])
        control = control.replace(joint_f=force.astype(control.joint_f.dtype))
        ps = self.pipeline_step(state.pipeline_state, control)
        x, th = ps.joint_q[0], ps.joint_q[1]
        up = _upright(th)
        reward = up - 0.05 * x**2 - 1e-3 * ps.joint_qd[1] ** 2 - 1e-2 * jnp.sum(a**2)
        return state.replace(pipeline_state=ps, obs=self._obs(ps), reward=reward.astype(x.dtype),
                             metrics={**state.metrics, "upright": up, "cart_x": x})

    @staticmethod
    def _obs(ps) -> jax.Array:
        x, th = ps.joint_q[0], ps.joint_q[1]
        return jnp.stack([x, jnp.cos(th), jnp.sin(th), ps.joint_qd[0], ps.joint_qd[1]])
