"""``SolverMuJoCo``: jaxart models stepped by MuJoCo XLA (``mujoco.mjx``).

The jaxart :class:`~jaxart.Model` is translated once (on the host) into ``mujoco.MjSpec`` →
``MjModel`` → ``mjx.Model`` following Newton's MuJoCo-integration mapping tables (see
:mod:`jaxart.solvers.mujoco.convert`). Each :meth:`SolverMuJoCo.step` maps the jaxart state and
control into an ``mjx.Data`` (:mod:`jaxart.solvers.mujoco.state`), runs ``mjx.step`` and maps
``qpos``/``qvel`` back; body poses and COM twists come from :func:`jaxart.eval_fk`.

Feature table:

======================  =====================================================================
jit / vmap              yes (``vmap`` over a leading batch axis of State/Control)
grad (reverse mode)     contact-free models: any options. With contacts or limits MJX's
                        constraint solver runs a ``while_loop`` unless ``iterations=1`` (its line
                        search is a fixed-length scan): ``jax.grad`` raises ``ValueError`` while
                        tracing with the default 100 iterations. ``iterations=1`` differentiates,
                        at a cost in physics, measured on raw ``mjx`` (a free 0.2 m box on a
                        plane, MuJoCo's default contact, pushed at its centre for 0.1 s, 2 ms
                        steps; ``benchmarks/mjx_pushed_box.py``): with friction 0.5 a 4 kg box
                        pushed by 8 N (41 % of its sliding friction) stays put with the default
                        solver (< 0.1 mm, as MuJoCo C with 1 or 100 iterations) but is thrown off
                        the floor with ``iterations=1`` (lowest corner 162 mm up in float32,
                        17–45 mm in float64 depending on XLA flags); 25 N throws it 3.4 m, a
                        1 kg box pushed by 15 N 1.1 m (float32). The default solver also lifts
                        light boxes that it slides fast (1 kg at 25 N: 8.7 mm, 0.25 kg at 15 N:
                        39 mm; MuJoCo C identical), heavier ones not (4 kg up to 50 N: < 0.2 mm).
                        The gradient ``d x_final / dF`` over 300 steps (1 kg, 25 N, friction 1)
                        is NaN in float32 (also with ``ls_iterations=4``) and finite in float64.
                        This bridge adds no warm start between steps (raw ``mjx`` carries
                        ``qacc_warmstart``).
contacts                MuJoCo's collision detection (``use_mujoco_contacts=True``; the
                        ``contacts`` argument of ``step`` is ignored, as in Newton), or
                        ``use_mujoco_contacts=False``: the ``Contacts`` from ``model.collide``
                        are fed to MJX's constraint solver (MJX's collision stage replaced,
                        :mod:`jaxart.solvers.mujoco.contacts`; Euler / implicit-fast only,
                        one condim for all rows, geom-pair material mixing; rows of explicit
                        pairs take their exported ``<pair>``'s friction, solref and margin).
explicit contact pairs  → MuJoCo ``<pair>`` with the pair's ``contact_pair_*`` friction, solref
                        (the geoms' mapping) and margin (:mod:`jaxart.solvers.mujoco.filter`).
solver warm start       none between steps (each step starts from ``qacc_smooth``).
gradients w.r.t. Model  not available: the MuJoCo model is built from the Model's values once;
                        differentiate w.r.t. State/Control (or ``mjx_model`` leaves).
equality constraints    CONNECT / WELD / JOINT / mimic and loop-closing FIXED / revolute / ball
                        joints → ``mjEQ_*`` rows (:mod:`jaxart.solvers.mujoco.equality`), loop
                        PRISMATIC / D6 joints and REVOLUTE / BALL ones with limits, passive terms
                        (or BALL drives) → an auxiliary body welded to the child, drives (and
                        with an auxiliary body damping) on one-DOF and BALL loop joints →
                        site-transmission actuators
                        (:mod:`jaxart.solvers.mujoco.loops`), velocity terms of multi-axis D6
                        loops and damping of loop FREE/DISTANCE joints → rate actuators with
                        per-step reference sites (:mod:`jaxart.solvers.mujoco.loop_rates`),
                        ``joint_f`` on loops without MuJoCo DOFs → body wrenches
                        (:mod:`jaxart.solvers.mujoco.loop_forces`), loop FREE joints → nothing; the
                        ``enabled`` flags set ``eq_active`` in every step (switch them with
                        ``set_constraints_enabled`` under ``jit``, no retrace). MuJoCo
                        4's C solver adds J̇q̇ to equality reference accelerations, MJX does not:
                        trajectories agree with C to ~1e-4 rather than round-off.
FREE / DISTANCE joints  tree, world parent, no per-DOF terms: free joint; below a body or with
                        terms: three slides + a ball about the child COM (damping, armature,
                        friction, drives, springs, limits; linear springs / limits / position
                        drives need the COM at the child anchor, angular terms follow the BALL
                        rules); DISTANCE tree or loop: finite distance limits → a limited spatial
                        tendon between the anchors
                        (:func:`jaxart.solvers.mujoco.tendons.add_distance_tendons`).
BALL joints             ball; drives, per-axis damping and springs with per-axis stiffness or a
                        rest rotation as actuators along the parent-anchor axes
                        (``mjTRN_JOINTINPARENT``; exact for any target); uniform damping /
                        zero-rest springs on the joint; per-axis limits (MuJoCo: one cone
                        angle), per-axis armature or friction raise ``NotImplementedError``.
tendons                 FIXED / SPATIAL → MuJoCo fixed / spatial tendons (sites, sphere /
                        cylinder wrap geoms with side sites, pulleys) with stiffness, damping,
                        springlength, range, frictionloss, armature and margin, and tendon
                        actuators (``Control.tendon_f`` → a motor, ``tendon_target_ke/kd`` →
                        position / velocity servos on the tendon)
                        (:mod:`jaxart.solvers.mujoco.tendons`).
sensors                 every sensor kind → MuJoCo's sensor of that name on a site at the sensed
                        frame (joints, tendons, subtree bodies directly), cutoffs and magnetic
                        field carried (:mod:`jaxart.solvers.mujoco.sensors`); ``sensor_data``
                        reads ``mjx.forward``'s ``sensordata`` in the model's layout. JOINTACTFRC
                        DOFs take ``joint_act`` through a unit motor (clamped with the drive).
mocap bodies            ``Model.mocap_joint`` (world parent) → MuJoCo mocap bodies; each step's
                        ``mocap_pos``/``mocap_quat`` are the joints' coordinates after
                        :func:`jaxart.sim.mocap.set_mocap` (``Control.mocap_pos/quat``).
ACCELERATION drives     tree joints: the position / velocity actuators' ``gainprm``/``biasprm``
                        are multiplied in every step by the DOF's effective inertia
                        ``1/(M⁻¹)_ii`` (jaxart's mass matrix with armature at the step's state,
                        :func:`~jaxart.dynamics.engine.drive_inertia.drive_inertia`; only models with
                        such drives pay for it); loop-closing joints: SolverFeatherstone's
                        constrained ``1/(J W Jᵀ)`` of the loop axis
                        (:mod:`jaxart.solvers.mujoco.step_model`).
======================  =====================================================================
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from mujoco import mjx

from jaxart.kinematics import eval_fk
from jaxart.sim import checks
from jaxart.sim.model import Control, Model, State
from jaxart.solvers.base import step_with_inputs
from jaxart.solvers.mujoco.contacts import ContactBridge, check_contacts, mjx_step_with_contacts
from jaxart.solvers.mujoco.convert import model_to_spec, resolve_options
from jaxart.solvers.mujoco.equality import apply_equality_data, eq_active, keep_unmapped
from jaxart.solvers.mujoco.layout import MjLayout
from jaxart.solvers.mujoco.loop_forces import loop_joint_wrenches
from jaxart.solvers.mujoco.loops import fix_aux_invweight, measure_loop_coords
from jaxart.solvers.mujoco.sensors import joint_actuator_forces, joint_force_rows
from jaxart.solvers.mujoco.state import (
    body_f_to_xfrc,
    control_to_ctrl,
    joint_f_to_qfrc,
    joint_q_to_qpos,
    joint_qd_to_qvel,
    mocap_to_data,
    qpos_to_joint_q,
    qvel_to_joint_qd,
)
from jaxart.solvers.mujoco.step_model import step_model_plan, update_step_model
from jaxart.solvers.mujoco.tendons import tendon_ctrl


class SolverMuJoCo:
    """Step a jaxart model with MuJoCo XLA (Newton's ``SolverMuJoCo``, functional).

    Args:
        model: The jaxart model (converted once, on construction).
        iterations: Constraint-solver iterations (default 100; use 1 for reverse-mode gradients
            through contacts/limits, at the physical cost measured in the module docstring).
        ls_iterations: Line-search iterations (default 50).
        solver: ``"newton"`` (default), ``"cg"`` or ``"pgs"``.
        integrator: ``"implicitfast"`` (default), ``"euler"``, ``"implicit"`` or ``"rk4"``.
        cone: ``"pyramidal"`` (default) or ``"elliptic"``.
        impratio: Frictional-to-normal impedance ratio (MuJoCo's default when ``None``).
        tolerance: Solver tolerance (MuJoCo's default when ``None``).
        jacobian: MuJoCo's ``"auto"`` (default), ``"dense"`` or ``"sparse"`` constraint Jacobian /
            mass-matrix layout. Batched (``vmap``) stepping on CPU: prefer ``solver="cg"``,
            ``integrator="euler"`` and ``jacobian="sparse"`` — MJX then avoids LAPACK Cholesky
            calls, whose batched XLA CPU kernel was seen to deadlock on small machines.
        use_mujoco_contacts: Use MuJoCo's collision detection (default). ``False``: ``step`` takes
            the :class:`~jaxart.Contacts` of jaxart's collision pipeline (``model.collide``) and
            runs MJX's constraint solver on them (integrator ``"euler"`` or ``"implicitfast"``).
        save_to_mjcf: Optional path; the converted model is written there as MJCF.
        timestep: Default step size stored in the MuJoCo model [s] (``step`` overrides it with
            its ``dt``).
        update_body_state: Recompute ``body_q``/``body_qd`` with :func:`jaxart.eval_fk` after each
            step (default). ``False`` leaves them untouched (only ``joint_q``/``joint_qd`` advance),
            which saves the FK pass — the bulk of the bridge's overhead under ``vmap``.

    Attributes:
        model: The jaxart model.
        mj_spec: The ``mujoco.MjSpec``.
        mj_model: The compiled ``mujoco.MjModel`` (MuJoCo conventions: wxyz quaternions).
        mjx_model: The ``mjx.Model``.
        layout: Static index mapping (:class:`~jaxart.solvers.mujoco.layout.MjLayout`).
        options: Resolved solver options.

    Raises:
        NotImplementedError: A model feature without mapping, or ``use_mujoco_contacts=False`` with
            the ``rk4``/``implicit`` integrator.
        ValueError: Bad option values, or MuJoCo rejected the converted model.
    """

    def __init__(self, model: Model, *, iterations: int | None = None, ls_iterations: int | None = None,
                 solver: str | None = None, integrator: str | None = None, cone: str | None = None,
                 impratio: float | None = None, tolerance: float | None = None, jacobian: str | None = None,
                 use_mujoco_contacts: bool = True,
                 save_to_mjcf: str | None = None, timestep: float | None = None,
                 update_body_state: bool = True) -> None:
        if not isinstance(model, Model):
            raise TypeError(f"SolverMuJoCo: model must be a jaxart.Model, got {type(model).__name__}")
        self.model = model
        self.options = resolve_options(iterations=iterations, ls_iterations=ls_iterations, solver=solver,
                                       integrator=integrator, cone=cone, impratio=impratio, tolerance=tolerance,
                                       jacobian=jacobian)
        self.mj_spec, recorder = model_to_spec(model, self.options)
        if timestep is not None:
            self.mj_spec.option.timestep = float(timestep)
        try:
            self.mj_model = self.mj_spec.compile()
        except ValueError as e:
            raise ValueError(f"SolverMuJoCo: MuJoCo rejected the converted model: {e}") from None
        apply_equality_data(self.mj_model, recorder)
        fix_aux_invweight(self.mj_model, recorder)
        self.layout: MjLayout = recorder.resolve(self.mj_model, model.body_count)
        self.mjx_model = mjx.put_model(self.mj_model)
        self._data0 = mjx.make_data(self.mjx_model)
        self.update_body_state = bool(update_body_state)
        self._accel = step_model_plan(model, self.layout, self.mj_model, recorder)
        self._step = jax.jit(functools.partial(_step, self.layout, self.update_body_state, mjx.step, self._accel))
        self._to_data = functools.partial(_to_data, self.layout)
        acc_sensors = bool(np.any(self.mj_model.sensor_needstage == int(mujoco.mjtStage.mjSTAGE_ACC)))
        plan = _SensorPlan(self.layout, self._accel, joint_force_rows(self.mj_model), acc_sensors)
        self._sensors = jax.jit(functools.partial(_sensor_data, plan))
        if self.layout.loop_axes:  # measuring loop coordinates op by op is slow
            self._to_data = jax.jit(self._to_data)
        self.use_mujoco_contacts = bool(use_mujoco_contacts)
        self._contact_bridge = None
        if not self.use_mujoco_contacts:
            self._contact_bridge = ContactBridge.build(self.mj_model, self.mjx_model, self._data0,
                                                       model.topology.shape_label)
            self._step_contacts = jax.jit(functools.partial(
                _step, self.layout, self.update_body_state,
                functools.partial(mjx_step_with_contacts, self._contact_bridge), self._accel))
        if save_to_mjcf is not None:
            self.save_to_mjcf(save_to_mjcf)

    # ------------------------------------------------------------------ stepping
    @property
    def detects_contacts(self) -> bool:
        """``True`` with MuJoCo's collision detection (``use_mujoco_contacts=True``): ``step`` ignores ``contacts``."""
        return self.use_mujoco_contacts

    def step(self, state: State, control: Control | None, contacts, dt: float) -> State:
        """Advance one step of ``dt`` seconds with ``mjx.step``; returns the new :class:`State`.

        Mocap poses, activation dynamics and fluid forces enter as in every solver
        (:func:`jaxart.solvers.base.step_with_inputs`: targets, ``joint_act``/``tendon_f`` and ``body_f``).

        Jittable and vmappable over a leading batch axis of ``state``/``control``. ``body_f``
        (world wrenches at COMs) is applied for this step. As in Newton with
        ``use_mujoco_contacts=True``, MuJoCo detects contacts itself and ``contacts`` is ignored
        (pass ``None`` or the output of ``model.collide``). With ``use_mujoco_contacts=False``
        ``contacts`` (``model.collide(state)`` at this state's ``body_q``) replaces MJX's collision;
        keep ``update_body_state=True`` so ``body_q`` stays current for ``model.collide``.

        Args:
            state: Current state.
            control: Drive targets and generalized forces (``model.control()`` when ``None``).
            contacts: Ignored with MuJoCo's collision pipeline; a :class:`~jaxart.Contacts`
                (any capacity) with ``use_mujoco_contacts=False``.
            dt: Step size [s] (replaces ``mjx_model.opt.timestep``; traced, no recompile).

        Raises:
            ValueError: ``contacts`` is ``None`` with ``use_mujoco_contacts=False``.
            TypeError: ``contacts`` is not a ``Contacts`` with ``use_mujoco_contacts=False``.
        """
        checks.check_step(self, state, control, contacts if self._contact_bridge is not None else None, dt)
        return step_with_inputs(self.model, lambda s, c: self._advance(s, c, contacts, dt), state, control, dt)

    def _advance(self, state: State, control: Control | None, contacts, dt) -> State:
        """The MJX step proper (arguments of :meth:`step`, already checked)."""
        if control is None:
            control = self.model.control()
        if self._contact_bridge is None:
            return self._step(self.model, self.mjx_model, self._data0, state, control, dt)
        contacts = check_contacts(contacts)
        data0 = self._contact_bridge.data_for(contacts.capacity)
        return self._step_contacts(self.model, self.mjx_model, data0, state, control, dt, contacts)

    def sensor_data(self, state: State, control: Control | None = None, time=0.0, dt=None) -> jax.Array:
        """The model's sensor values at ``state`` as MuJoCo computes them (``mjx.forward``'s ``sensordata``).

        The converted model carries the model's sensors in its order (:mod:`jaxart.solvers.mujoco.sensors`), so
        the result has :func:`jaxart.sensors.eval_sensors`' layout (``sensor_adr``/``sensor_dim``, cutoffs
        applied). Acceleration, force and touch sensors read MuJoCo's forward dynamics at this state: its
        constraint forces and contacts from MuJoCo's collision detection (also with ``use_mujoco_contacts=False``;
        MJX's rays miss cylinders); JOINTACTFRC rows are the joint's own actuators (drives and ``joint_act``, not
        tendon actuators through the joint, which MuJoCo's ``jointactuatorfrc`` adds);
        ``control`` enters as in :meth:`step`, without the step's stateful inputs (pass the mocap poses in
        ``state`` and the activation-driven control yourself). Jittable and vmappable.

        Args:
            state: The state (``body_q`` consistent with ``joint_q``).
            control: The control (``model.control()`` when ``None``).
            time: Simulation time [s] read by CLOCK sensors.
            dt: Step size [s] of MuJoCo's constraint impedances (the converted model's ``opt.timestep`` when
                ``None``).

        Returns:
            ``(sensor_data_count,)`` sensor values (float dtype of the MuJoCo data).

        Raises:
            NotImplementedError: The model has sensors the conversion left out (objects on folded massless links,
                loop-closing DOFs, touch on planes/meshes/height fields; warned at construction).
        """
        if self.layout.sensors_skipped:
            raise NotImplementedError("SolverMuJoCo.sensor_data: the converted model lacks sensors without a MuJoCo "
                                      "counterpart: " + "; ".join(self.layout.sensors_skipped))
        checks.check_state(self.model, state, "SolverMuJoCo.sensor_data: state")
        if control is None:
            control = self.model.control()
        elif not isinstance(control, Control):
            raise TypeError(f"SolverMuJoCo.sensor_data: control must be a Control or None, got "
                            f"{type(control).__name__}")
        dt = self.mj_model.opt.timestep if dt is None else dt
        return self._sensors(self.model, self.mjx_model, self._data0, state, control, jnp.asarray(time),
                             jnp.asarray(dt))

    def with_model(self, model: Model) -> SolverMuJoCo:
        """This solver (same compiled MuJoCo model and jitted step) stepping with ``model``'s run-time values.

        ``model`` must have the converted model's static structure (e.g. the result of
        :func:`jaxart.sim.equality.set_constraints_enabled`); it may be traced (inside ``jit``). Its
        ``equality_constraint_enabled`` / ``constraint_mimic_enabled`` flags set MuJoCo's ``eq_active``
        in every step, it is the model of the FK after each step and of the effective inertias that scale
        ``ACCELERATION`` drives; every other value MuJoCo uses
        (masses, gains, anchors, ...) stays the one converted at construction.

        Raises:
            TypeError: ``model`` is not a Model.
            ValueError: ``model``'s static structure differs from the converted model's.
        """
        import copy

        if not isinstance(model, Model):
            raise TypeError(f"SolverMuJoCo.with_model: model must be a jaxart.Model, got {type(model).__name__}")
        if jax.tree_util.tree_structure(model) != jax.tree_util.tree_structure(self.model):
            raise ValueError("SolverMuJoCo.with_model: model's static structure (topology, sizes) differs from the "
                             "converted model's; build a new SolverMuJoCo")
        out = copy.copy(self)
        out.model = model
        return out

    def to_mjx_data(self, state: State, control: Control | None = None) -> mjx.Data:
        """The ``mjx.Data`` (before ``mjx.step``) for ``state`` and ``control`` (pure, jittable)."""
        if control is None:
            control = self.model.control()
        return self._to_data(self._data0, state, control, self.model)

    def from_mjx_data(self, data: mjx.Data, state: State) -> State:
        """Map ``data.qpos``/``data.qvel`` back into ``state`` (joint coordinates + FK)."""
        return _from_data(self.layout, self.model, data.qpos, data.qvel, state, True)

    def to_mj_data(self, state: State, control: Control | None = None) -> mujoco.MjData:
        """A MuJoCo C ``MjData`` holding ``state``/``control`` (host copy, for oracles and viewers)."""
        dx = self.to_mjx_data(state, control)
        d = mujoco.MjData(self.mj_model)
        for field in ("qpos", "qvel", "ctrl", "qfrc_applied", "xfrc_applied", "eq_active", "mocap_pos", "mocap_quat"):
            getattr(d, field)[:] = np.asarray(getattr(dx, field))
        mujoco.mj_forward(self.mj_model, d)
        return d

    def save_to_mjcf(self, path: str) -> str:
        """Write the converted model as MJCF XML to ``path`` and return the XML text.

        MJCF cannot hold the ``body_invweight0``/``dof_invweight0`` overrides of loop joints' auxiliary bodies
        (:mod:`jaxart.solvers.mujoco.loops`): a recompiled file has much softer loop welds and limits (warns).
        """
        if self.layout.loop_axes:
            import warnings

            warnings.warn("SolverMuJoCo.save_to_mjcf: the auxiliary bodies' body/dof_invweight0 overrides of loop "
                          "joints are not expressible in MJCF; MuJoCo recompiling the file makes their welds and "
                          "limits much softer", stacklevel=2)
        xml = self.mj_spec.to_xml()
        with open(path, "w", encoding="utf-8") as f:
            f.write(xml)
        return xml

    def __repr__(self) -> str:
        m = self.mj_model
        return f"SolverMuJoCo(nq={m.nq}, nv={m.nv}, nu={m.nu}, ngeom={m.ngeom}, options={self.options})"


def _to_data(layout: MjLayout, data0: mjx.Data, state: State, control: Control, model: Model) -> mjx.Data:
    ft = data0.qpos.dtype
    jq, jqd = measure_loop_coords(layout, model, state.joint_q.astype(ft), state.joint_qd.astype(ft),
                                  state.body_q.astype(ft))
    force = (control.joint_f + control.joint_act).astype(ft)
    ctrl = tendon_ctrl(layout, control_to_ctrl(layout, control.joint_target_q.astype(ft),
                                               control.joint_target_qd.astype(ft), jq), control)
    joint_act = control.joint_act.astype(ft)
    if layout.act_motor.size:  # DOFs read by JOINTACTFRC sensors: joint_act through a motor (mujoco.sensors)
        ctrl = ctrl.at[layout.act_motor].set(joint_act[layout.act_motor_src])
        joint_act = joint_act.at[layout.act_motor_src].set(0.0)
    mocap_pos, mocap_quat = mocap_to_data(layout, jq, data0.mocap_pos, data0.mocap_quat)
    return data0.replace(
        mocap_pos=mocap_pos,
        mocap_quat=mocap_quat,
        qpos=joint_q_to_qpos(layout, jq),
        qvel=joint_qd_to_qvel(layout, jq, jqd),
        ctrl=ctrl,
        qfrc_applied=joint_f_to_qfrc(layout, jq, control.joint_f.astype(ft), state.body_q.astype(ft), joint_act),
        xfrc_applied=body_f_to_xfrc(layout, _with_loop_forces(layout, model, state, force), force),
        eq_active=eq_active(layout, model, data0.eq_active),
    )


def _with_loop_forces(layout: MjLayout, model: Model, state: State, force):
    """``state.body_f`` plus the wrenches of ``force`` on loop joints without MuJoCo DOFs (mujoco.loop_forces)."""
    body_f = state.body_f.astype(force.dtype)
    extra = loop_joint_wrenches(layout, model, state.body_q.astype(force.dtype), force)
    return body_f if extra is None else body_f + extra


def _from_data(layout: MjLayout, model: Model, qpos, qvel, state: State, fk: bool) -> State:
    dt = state.joint_q.dtype
    joint_q = qpos_to_joint_q(layout, qpos, model.joint_coord_count).astype(dt)
    joint_qd = qvel_to_joint_qd(layout, qpos, qvel, model.joint_dof_count).astype(dt)
    joint_q, joint_qd = keep_unmapped(layout, joint_q, joint_qd, state)
    if not fk:
        return state.replace(joint_q=joint_q, joint_qd=joint_qd)
    return eval_fk(model, joint_q, joint_qd, state)


class _SensorPlan(NamedTuple):
    """Static pieces of :meth:`SolverMuJoCo.sensor_data`: layout, acceleration-drive plan, JOINTACTFRC rows and
    whether the model has acceleration-stage sensors."""

    layout: MjLayout
    accel: object
    rows: object
    acc_sensors: bool


def _sensor_data(plan: _SensorPlan, model: Model, mjx_model: mjx.Model, data0: mjx.Data, state: State,
                 control: Control, time, dt) -> jax.Array:
    d = _to_data(plan.layout, data0, state, control, model)
    d = d.replace(time=time.astype(d.qpos.dtype))
    m = mjx_model.replace(opt=mjx_model.opt.replace(timestep=dt.astype(d.qpos.dtype)))
    if plan.accel is not None:
        m = update_step_model(m, plan.accel, model, state)
    d = mjx.forward(m, d)
    if plan.acc_sensors:  # without constraint rows mjx.forward returns before them; recomputing them is idempotent
        d = mjx.sensor_acc(m, d)
    return joint_actuator_forces(plan.rows, d.sensordata, d.actuator_force)


def _step(layout: MjLayout, fk: bool, advance, accel, model: Model, mjx_model: mjx.Model, data0: mjx.Data,
          state: State, control: Control, dt, *contacts) -> State:
    with jax.named_scope("jaxart.SolverMuJoCo.step"):
        d = _to_data(layout, data0, state, control, model)
        no_sensors = mjx_model.opt.disableflags | mjx.DisableBit.SENSOR  # SolverMuJoCo.sensor_data reads them
        opt = mjx_model.opt.replace(timestep=jnp.asarray(dt, d.qpos.dtype), disableflags=no_sensors)
        m = mjx_model.replace(opt=opt)
        if accel is not None:  # acceleration-drive gains, loop rate actuators (mujoco.step_model)
            m = update_step_model(m, accel, model, state)
        d = advance(m, d, *contacts)
        return _from_data(layout, model, d.qpos, d.qvel, state, fk)
