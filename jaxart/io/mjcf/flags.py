"""MuJoCo ``<option><flag>`` disable/enable bits → the model the importer reads.

The importer reads a copy of the compiled ``MjModel`` in which every feature a set flag switches off
is removed, so the rest of the importer needs no flag logic (the ``mj_model`` that ``add_mjcf``
returns is MuJoCo's own, unchanged). Honoured flags:

==================================  ===========================================================================
flag                                effect on the imported model
==================================  ===========================================================================
``gravity="disable"``               ``opt.gravity`` and ``body_gravcomp`` zero → ``builder.gravity = 0``
``contact="disable"``               every geom ``contype = conaffinity = 0`` (shapes get collision group 0 and
                                    no shape collisions) and no ``<contact><pair>`` is imported
``limit="disable"``                 joints and tendons unlimited (joint limits ±1e10)
``equality="disable"``              equality constraints added with ``enabled=False``
``frictionloss="disable"``          joint and tendon ``frictionloss`` zero
``constraint="disable"``            all four of contact, limit, equality and frictionloss above
``spring="disable"``                joint and tendon stiffness zero (nonlinear stiffness polynomials too)
``damper="disable"``                joint and tendon damping zero (nonlinear damping polynomials too)
``actuation="disable"``             no actuator becomes a drive (:func:`jaxart.io.mjcf.actuators.map_actuators`
                                    and ``map_tendon_actuators`` return none): every DOF keeps ``actuator_mode``
                                    NONE and zero ``target_ke``/``target_kd``; ``Control`` inputs still act
``clampctrl="disable"``             ``ctrlrange`` no longer bounds a motor's ``effort_limit`` nor a servo's
                                    default target (``actuator_ctrllimited`` off)
``filterparent="disable"``          parent–child contacts kept (read by the importer's collision filtering)
``refsafe="disable"``               ``solref`` time constants not clamped to 2·timestep
``override="enable"``               every geom and pair takes ``o_margin``, ``o_solref`` and ``o_friction`` (MuJoCo
                                    replaces the contact parameters of every contact by these)
==================================  ===========================================================================

Every native solver (``SolverFeatherstone``, ``SolverXPBD``, ``SolverSemiImplicit``) steps a model imported with
one of ``gravity``, ``limit``, ``equality``, ``frictionloss``, ``spring``, ``damper``, ``actuation`` or ``clampctrl``
disabled exactly like the same file without that feature; ``SolverXPBD`` and ``SolverSemiImplicit`` model no joint
friction and no effort limits at all (their documented feature tables), so ``frictionloss`` and ``clampctrl`` change
nothing there. ``Control`` inputs (``joint_act``, ``tendon_f``) still act with ``actuation`` disabled.

Not reported (no jaxart counterpart by design, like MuJoCo's other solver settings; they do not change
the model's physics): ``warmstart``, ``midphase``, ``nativeccd``, ``multiccd``, ``island``, ``eulerdamp``,
``autoreset``, ``sensor`` (sensors are reported anyway), and the enable flags ``energy``, ``fwdinv``,
``invdiscrete`` and ``diagexact``. Any other set bit (``sleep``, ``ipc``, ``speculative``, bits of later
MuJoCo versions) is reported as not honoured. An ``override`` with anisotropic ``o_friction`` (first two
values differ) is reported: jaxart uses ``o_friction[0]`` in every direction.
"""

from __future__ import annotations

import copy

import mujoco
import numpy as np

_D = mujoco.mjtDisableBit
_E = mujoco.mjtEnableBit

#: Disable bits the importer honours (this module, or the importer's own reads of the flags).
HONOURED_DISABLE = ("mjDSBL_GRAVITY", "mjDSBL_CONTACT", "mjDSBL_LIMIT", "mjDSBL_EQUALITY", "mjDSBL_FRICTIONLOSS",
                    "mjDSBL_CONSTRAINT", "mjDSBL_SPRING", "mjDSBL_DAMPER", "mjDSBL_ACTUATION", "mjDSBL_CLAMPCTRL",
                    "mjDSBL_FILTERPARENT", "mjDSBL_REFSAFE")
#: Disable bits without a jaxart counterpart that do not change the model's physics (not reported).
SILENT_DISABLE = ("mjDSBL_WARMSTART", "mjDSBL_MIDPHASE", "mjDSBL_NATIVECCD", "mjDSBL_MULTICCD", "mjDSBL_ISLAND",
                  "mjDSBL_EULERDAMP", "mjDSBL_AUTORESET", "mjDSBL_SENSOR")
#: Enable bits honoured / not reported.
HONOURED_ENABLE = ("mjENBL_OVERRIDE",)
SILENT_ENABLE = ("mjENBL_ENERGY", "mjENBL_FWDINV", "mjENBL_INVDISCRETE", "mjENBL_DIAGEXACT")


def _bits(enum, names: tuple[str, ...]) -> int:
    return sum(int(getattr(enum, n)) for n in names if hasattr(enum, n))


def is_disabled(m, name: str) -> bool:
    """Whether MuJoCo disable flag ``name`` (e.g. ``"mjDSBL_CONTACT"``) is set in ``m.opt.disableflags``."""
    return bool(int(m.opt.disableflags) & int(getattr(_D, name)))


def contacts_disabled(m) -> bool:
    """MuJoCo detects no contact at all: ``contact`` or ``constraint`` disabled."""
    return is_disabled(m, "mjDSBL_CONTACT") or is_disabled(m, "mjDSBL_CONSTRAINT")


def actuation_disabled(m) -> bool:
    """MuJoCo applies no actuator force: ``actuation`` disabled."""
    return is_disabled(m, "mjDSBL_ACTUATION")


def _zero(m, *fields: str) -> None:
    for f in fields:
        if hasattr(m, f):
            getattr(m, f)[...] = 0


def _override(m) -> None:
    """MuJoCo's contact override: every geom and pair gets ``o_margin``/``o_solref``/``o_friction``."""
    fr = np.maximum(np.asarray(m.opt.o_friction, dtype=np.float64), mujoco.mjMINMU)
    m.geom_margin[:] = m.opt.o_margin
    m.geom_solref[:] = m.opt.o_solref
    m.geom_friction[:] = fr[[0, 2, 3]]
    if m.npair:
        m.pair_margin[:] = m.opt.o_margin
        m.pair_solref[:] = m.opt.o_solref
        m.pair_friction[:] = fr


def apply_option_flags(m) -> tuple[mujoco.MjModel, list[str]]:
    """A copy of ``m`` without what its set flags switch off, and the flags that are not honoured.

    Args:
        m: Compiled ``mujoco.MjModel`` (not modified).

    Returns:
        ``(model to import, issues)`` (see the module docstring).
    """
    e = copy.copy(m)
    constraint = is_disabled(m, "mjDSBL_CONSTRAINT")
    if is_disabled(m, "mjDSBL_GRAVITY"):
        e.opt.gravity[:] = 0.0
        _zero(e, "body_gravcomp")
    if contacts_disabled(m):
        _zero(e, "geom_contype", "geom_conaffinity")
    if constraint or is_disabled(m, "mjDSBL_LIMIT"):
        _zero(e, "jnt_limited", "tendon_limited")
    if constraint or is_disabled(m, "mjDSBL_EQUALITY"):
        _zero(e, "eq_active0")
    if constraint or is_disabled(m, "mjDSBL_FRICTIONLOSS"):
        _zero(e, "dof_frictionloss", "tendon_frictionloss")
    if is_disabled(m, "mjDSBL_SPRING"):
        _zero(e, "jnt_stiffness", "tendon_stiffness", "tendon_stiffnesspoly")
    if is_disabled(m, "mjDSBL_DAMPER"):
        _zero(e, "dof_damping", "tendon_damping", "tendon_dampingpoly")
    if is_disabled(m, "mjDSBL_CLAMPCTRL"):
        _zero(e, "actuator_ctrllimited")
    if int(m.opt.enableflags) & int(_E.mjENBL_OVERRIDE) and not contacts_disabled(m):
        _override(e)
    return e, flag_issues(m)


def flag_issues(m) -> list[str]:
    """One line per set flag the importer does not honour (see the module docstring)."""
    out = []
    for kind, enum, value, known in (
            ("disable", _D, int(m.opt.disableflags), _bits(_D, HONOURED_DISABLE + SILENT_DISABLE)),
            ("enable", _E, int(m.opt.enableflags), _bits(_E, HONOURED_ENABLE + SILENT_ENABLE))):
        names = {int(getattr(enum, n)): n for n in dir(enum) if n.startswith(("mjDSBL_", "mjENBL_"))}
        for bit in (1 << k for k in range(32)):
            if value & bit and not known & bit:
                label = names.get(bit, f"bit {bit}").split("_", 1)[-1].lower()
                out.append(f"option flag {label}=\"{kind}\" not honoured (jaxart has no counterpart)")
    fr = np.asarray(m.opt.o_friction, dtype=np.float64)
    if int(m.opt.enableflags) & int(_E.mjENBL_OVERRIDE) and not contacts_disabled(m) and fr[0] != fr[1]:
        out.append(f"option o_friction {fr[:2].tolist()} is anisotropic (jaxart uses o_friction[0] in every "
                   "direction)")
    return out
