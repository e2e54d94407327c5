"""jaxart contacts → MJX constraint solver (``SolverMuJoCo(use_mujoco_contacts=False)``).

The seam: MJX's ``forward`` is ``fwd_position`` (kinematics, …, ``factor_m``, **collision**,
``make_constraint``, ``transmission``), then velocity, actuation, acceleration and ``solve``.
:func:`mjx_step_with_contacts` runs the same stages in the same order with MJX's collision call
replaced by an ``mjx.Contact`` built from a jaxart :class:`~jaxart.Contacts`
(:func:`contacts_to_mjx`), then MJX's Euler or implicit-fast integrator. MJX sizes the contact
array and the constraint (``efc_*``) arrays statically from ``Data.contact.dim`` (a numpy field);
:meth:`ContactBridge.data_for` allocates an ``mjx.Data`` whose contact array has exactly the
capacity of the jaxart ``Contacts`` (one static ``condim`` for every row) and whose
``efc_type``/``efc_address`` come from MJX's own ``make_efc_type``/``make_efc_address``.

Per-row mapping (the MuJoCo / Newton conventions; jaxart's shape A ↔ ``geom[0]``):

* ``frame = make_frame(normal)`` (normal A → B in the first row, MJX's tangent choice);
  ``pos = point`` (midway between the geometric surfaces);
* ``includemargin = margin_a + margin_b`` (MuJoCo ``geom_margin`` = ``shape_margin``, gap 0)
  and ``dist = separation + includemargin`` — so MJX's penetration ``dist − includemargin`` is
  jaxart's ``separation`` exactly;
* rows of an explicit contact pair (``Contacts.pair = k``) take MuJoCo pair ``k``'s ``friction``,
  ``solref``, ``solimp`` and ``includemargin = margin − gap`` (the exported pair carries the jaxart
  pair's parameters); other rows:
* friction, solref, solimp mixed from the two geoms exactly as MuJoCo does for geom pairs
  (priority, ``solmix``; friction = max, clamped to ``mjMINMU``; solref averaged or, for direct
  references, the minimum); the geoms carry the shape materials as converted by
  :func:`jaxart.solvers.mujoco.shapes.add_shapes` (``friction = (mu, mu_torsional,
  mu_rolling)``, ``solref`` from ke/kd);
* inactive rows (``active`` false, padding, shapes without a geom, or both geoms on immovable
  bodies — Newton skips those too) get ``dist = includemargin + 1``: MJX zeroes their Jacobian
  rows (``pos < 0`` test), so they produce no force.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from mujoco import mjx
from mujoco.mjx._src import constraint, forward, sensor, smooth, solver
from mujoco.mjx._src import math as mjx_math
from mujoco.mjx._src.types import Contact, IntegratorType

from jaxart.collision.contacts import Contacts

#: ``dist − includemargin`` written into inactive rows (any positive value disables a row).
INACTIVE_DISTANCE = 1.0


@dataclasses.dataclass(frozen=True, eq=False)
class ContactBridge:
    """Static bookkeeping to feed jaxart contacts to MJX (built once on the host).

    Attributes:
        mjx_model: The solver's ``mjx.Model`` (read on the host for MJX's constraint layout).
        data0: The solver's default ``mjx.Data`` (MJX's own contact sizing; re-sized per capacity).
        shape_geom: ``(shape_count,)`` MuJoCo geom id of each jaxart shape (−1: no geom, e.g. sites).
        geom_movable: ``(ngeom,)`` whether the geom's weld body has degrees of freedom.
        condim: Contact dimensionality of every row (max ``geom_condim`` of the mapped geoms).
        integrator: MuJoCo integrator id (Euler or implicit-fast).
    """

    mjx_model: mjx.Model
    data0: mjx.Data
    shape_geom: np.ndarray
    geom_movable: np.ndarray
    condim: int
    integrator: int
    _cache: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def build(cls, mj_model: mujoco.MjModel, mjx_model: mjx.Model, data0: mjx.Data, shape_labels) -> ContactBridge:
        """Map shapes to geoms (by name) and check the options.

        Raises:
            NotImplementedError: Integrators other than Euler / implicit-fast (MJX's RK4 reruns its
                own collision in every stage), or condim 1 with an elliptic cone (not in MJX).
        """
        integ = int(mj_model.opt.integrator)
        if integ not in (int(IntegratorType.EULER), int(IntegratorType.IMPLICITFAST)):
            name = mujoco.mjtIntegrator(integ).name
            raise NotImplementedError(f"SolverMuJoCo(use_mujoco_contacts=False): integrator {name} is not "
                                      "supported with jaxart contacts (use 'euler' or 'implicitfast')")
        shape_geom = np.array([mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_GEOM, str(label))
                               for label in shape_labels], np.int32).reshape(-1)
        mapped = shape_geom[shape_geom >= 0]
        condim = int(mj_model.geom_condim[mapped].max()) if mapped.size else 3
        if condim == 1 and mj_model.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC:
            raise NotImplementedError("SolverMuJoCo(use_mujoco_contacts=False): condim=1 with an elliptic cone "
                                      "is not implemented by MJX")
        weld = mj_model.body_weldid[mj_model.geom_bodyid]
        movable = np.asarray(mj_model.body_dofnum[weld] > 0, bool).reshape(-1)
        return cls(mjx_model=mjx_model, data0=data0, shape_geom=shape_geom, geom_movable=movable, condim=condim,
                   integrator=integ)

    def data_for(self, capacity: int) -> mjx.Data:
        """``data0`` with a contact array of ``capacity`` rows and matching ``efc_*`` sizes.

        Host-side numpy only (safe to call while tracing); cached per capacity.
        """
        capacity = int(capacity)
        if capacity not in self._cache:
            self._cache[capacity] = resize_contacts(self.mjx_model, self.data0, capacity, self.condim)
        return self._cache[capacity]


def resize_contacts(m: mjx.Model, data0: mjx.Data, capacity: int, condim: int) -> mjx.Data:
    """``data0`` re-sized for ``capacity`` contact rows of dimension ``condim``.

    ``Data.contact.dim``/``efc_address`` and ``ncon``/``nefc``/``efc_type`` are static (numpy /
    int) fields from which MJX derives every constraint shape; they are rebuilt with MJX's own
    ``make_efc_type``/``make_efc_address`` for ``dim = [condim] * capacity``.
    """
    impl = data0._impl
    ft = np.dtype(data0.qpos.dtype)
    it = np.dtype(impl.contact.geom.dtype)
    nv = int(data0.qvel.shape[0])
    dim = np.full((capacity,), condim, dtype=int)
    efc_type = constraint.make_efc_type(m, dim)
    ne, nf, nl, _ = constraint.counts(efc_type)
    efc_address = constraint.make_efc_address(m, dim, efc_type)
    nefc = int(efc_type.size)
    z1, zc = (lambda *s: np.zeros((capacity, *s), ft)), np.full((capacity,), -1, it)
    contact = Contact(dist=z1(), pos=z1(3), frame=z1(3, 3), includemargin=z1(), friction=z1(5),
                      solref=z1(mujoco.mjNREF), solreffriction=z1(mujoco.mjNREF), solimp=z1(mujoco.mjNIMP), dim=dim,
                      geom1=zc, geom2=zc, geom=np.full((capacity, 2), -1, it), efc_address=efc_address)
    efc = {f"efc_{k}": np.zeros((nefc,), ft) for k in ("pos", "margin", "frictionloss", "D", "aref", "force")}
    impl = impl.replace(ne=int(ne), nf=int(nf), nl=int(nl), nefc=nefc, ncon=capacity, contact=contact,
                        efc_type=efc_type, efc_J=np.zeros((nefc, nv), ft), **efc)
    return data0.replace(_impl=impl)


def contacts_to_mjx(bridge: ContactBridge, m: mjx.Model, template: Contact, contacts: Contacts) -> Contact:
    """An ``mjx.Contact`` (shapes/static fields of ``template``) holding jaxart ``contacts``.

    Pure and differentiable in the contact geometry and in ``m``'s geom parameters.
    """
    ft = template.dist.dtype
    shape_geom = jnp.asarray(bridge.shape_geom)
    sa, sb = contacts.shape_a, contacts.shape_b
    ga = jnp.where(sa >= 0, shape_geom[jnp.maximum(sa, 0)], -1)
    gb = jnp.where(sb >= 0, shape_geom[jnp.maximum(sb, 0)], -1)
    movable = jnp.asarray(bridge.geom_movable)
    valid = (ga >= 0) & (gb >= 0)
    ga, gb = jnp.maximum(ga, 0), jnp.maximum(gb, 0)
    use = contacts.active & valid & (movable[ga] | movable[gb])
    margin, friction, solref, solimp = _pair_params(m, contacts.pair, *_mix_params(m, ga, gb))
    sep = contacts.separation.astype(ft)
    dist = jnp.where(use, sep, INACTIVE_DISTANCE) + margin
    frame = jax.vmap(mjx_math.make_frame)(contacts.normal.astype(ft))
    geom = jnp.stack([ga, gb], -1).astype(template.geom.dtype)
    return template.replace(dist=dist, pos=contacts.point.astype(ft), frame=frame, includemargin=margin,
                            friction=friction, solref=solref, solreffriction=jnp.zeros_like(template.solreffriction),
                            solimp=solimp, geom1=geom[:, 0], geom2=geom[:, 1], geom=geom)


def _mix_params(m: mjx.Model, g1: jax.Array, g2: jax.Array):
    """MuJoCo's geom-pair contact parameters (``mj_contactParam``): margin, friction(5), solref, solimp."""
    eps = mujoco.mjMINVAL
    p1, p2 = jnp.asarray(m.geom_priority)[g1], jnp.asarray(m.geom_priority)[g2]
    s1, s2 = m.geom_solmix[g1], m.geom_solmix[g2]
    mix = s1 / jnp.where(s1 + s2 > 0, s1 + s2, 1.0)
    mix = jnp.where((s1 < eps) & (s2 < eps), 0.5, mix)
    mix = jnp.where((s1 < eps) & (s2 >= eps), 0.0, mix)
    mix = jnp.where((s1 >= eps) & (s2 < eps), 1.0, mix)
    mix = jnp.where(p1 > p2, 1.0, jnp.where(p2 > p1, 0.0, mix))[:, None]
    f1, f2 = m.geom_friction[g1], m.geom_friction[g2]
    fric = jnp.where((p1 > p2)[:, None], f1, jnp.where((p2 > p1)[:, None], f2, jnp.maximum(f1, f2)))
    fric = jnp.maximum(fric, mujoco.mjMINMU)[:, jnp.array([0, 0, 1, 2, 2])]
    r1, r2 = m.geom_solref[g1], m.geom_solref[g2]
    standard = (r1[:, :1] > 0) & (r2[:, :1] > 0)
    solref = jnp.where(standard, mix * r1 + (1 - mix) * r2, jnp.minimum(r1, r2))
    solimp = mix * m.geom_solimp[g1] + (1 - mix) * m.geom_solimp[g2]
    margin = m.geom_margin[g1] + m.geom_margin[g2]
    return margin, fric, solref, solimp


def _pair_params(m: mjx.Model, pair: jax.Array, margin, friction, solref, solimp):
    """The mixed geom parameters with the rows of explicit pairs replaced by MuJoCo pair ``pair``'s.

    MuJoCo pair ``k`` is jaxart's explicit pair ``k`` (:func:`~jaxart.solvers.mujoco.filter.add_contact_pairs`).
    """
    if int(m.npair) == 0:
        return margin, friction, solref, solimp
    on, k = pair >= 0, jnp.maximum(pair, 0)
    pick = lambda arr, mixed: jnp.where(on.reshape(-1, *([1] * (mixed.ndim - 1))), arr[k], mixed)  # noqa: E731
    return (pick(m.pair_margin - m.pair_gap, margin), pick(m.pair_friction, friction), pick(m.pair_solref, solref),
            pick(m.pair_solimp, solimp))


def mjx_forward_with_contacts(m: mjx.Model, d: mjx.Data, contact: Contact) -> mjx.Data:
    """``mjx.forward`` with MJX's collision stage replaced by ``contact`` (same stage order)."""
    d = smooth.kinematics(m, d)
    d = smooth.com_pos(m, d)
    d = smooth.camlight(m, d)
    d = smooth.tendon(m, d)
    d = smooth.crb(m, d)
    d = smooth.tendon_armature(m, d)
    d = smooth.factor_m(m, d)
    d = d.tree_replace({"_impl.contact": contact})
    d = constraint.make_constraint(m, d)
    d = smooth.transmission(m, d)
    d = sensor.sensor_pos(m, d)
    d = forward.fwd_velocity(m, d)
    d = sensor.sensor_vel(m, d)
    d = forward.fwd_actuation(m, d)
    d = forward.fwd_acceleration(m, d)
    if d._impl.efc_J.size == 0:
        return d.replace(qacc=d.qacc_smooth)
    d = solver.solve(m, d)
    return sensor.sensor_acc(m, d)


def mjx_step_with_contacts(bridge: ContactBridge, m: mjx.Model, d: mjx.Data, contacts: Contacts) -> mjx.Data:
    """``mjx.step`` driven by jaxart ``contacts`` (``d`` from :meth:`ContactBridge.data_for`)."""
    contact = contacts_to_mjx(bridge, m, d._impl.contact, contacts)
    d = mjx_forward_with_contacts(m, d, contact)
    if bridge.integrator == int(IntegratorType.EULER):
        return forward.euler(m, d)
    return forward.implicit(m, d)


def check_contacts(contacts) -> Contacts:
    """Validate the ``contacts`` argument of ``step`` for ``use_mujoco_contacts=False``.

    Raises:
        ValueError: ``contacts`` is ``None``.
        TypeError: ``contacts`` is not a :class:`~jaxart.Contacts`.
    """
    if contacts is None:
        raise ValueError("SolverMuJoCo(use_mujoco_contacts=False).step: contacts is None; pass the output of "
                         "model.collide(state) (jaxart's collision pipeline)")
    if not isinstance(contacts, Contacts):
        raise TypeError("SolverMuJoCo(use_mujoco_contacts=False).step: contacts must be a jaxart.Contacts, got "
                        f"{type(contacts).__name__}")
    return contacts
