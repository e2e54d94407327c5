"""Forward dynamics by the articulated-body algorithm, as a batch-minor lane kernel.

Solves ``(H + diag(e)) q̈ = τ − C q̇ − g + Jᵀ f_ext`` in ``O(n)`` without forming ``H``: the same
system as :func:`~jaxart.dynamics.mass_matrix.crba` + a dense Cholesky, where ``e`` is any per-DOF
diagonal (armature, the implicit drive/limit/damping terms of the Featherstone step). All spatial
quantities are world-origin Plücker coordinates (:mod:`jaxart.dynamics.motion`), so no frame
transforms appear between parent and child. The recursion runs on the DOF tree of
:mod:`jaxart.dynamics.engine.aba_schedule` (multi-DOF joints as chains of one-DOF joints through massless
virtual links, which is exact), so every pivot is a scalar:

* backward (leaves → roots), per DOF ``d`` with columns ``S``, velocity product ``c = Ṡ q̇``:
  ``I^A = I_d + Σ_children I^a``, ``p^A = p_d + Σ_children p^a``, ``U = I^A S``,
  ``D = Sᵀ U + e``, ``u = τ − Sᵀ p^A``, ``I^a = I^A − U Uᵀ / D``,
  ``p^a = p^A + I^a c + U u / D``;
* forward (roots → leaves): ``a' = a_parent + c``, ``q̈ = (u − Uᵀ a') / D``, ``a = a' + S q̈``;
* multi-DOF joints hanging from the world (root blocks of :mod:`jaxart.dynamics.engine.aba_schedule`) are
  solved between the passes as one SPD system each: ``(Sᵀ I^A S + diag e) q̈ = τ − Sᵀ (p^A + I^A c)``
  with the body's articulated inertia and bias from the backward pass, ``a = c + S q̈``.

``I_d``/``p_d`` are the rigid inertias and bias wrenches ``v ×* I v − f_gravity − f_ext`` of the bodies
attached to ``d``. DOFs of kinematic bodies are prescribed (``q̈ = 0``: ``1/D`` replaced by 0, so
their joint passes the whole articulated inertia on), like the dense solver's fixed rows.

Layout and speed: the kernel is wrapped by :func:`~jaxart.math.lanes.lanes`, so under ``vmap`` every
per-world scalar is one contiguous vector over the worlds; the two passes are ``lax.scan`` loops over
the tree levels (a loop boundary per level also keeps XLA from re-evaluating a level inside each of
its consumers). Pivots ``D ≤ 0`` are clamped to ``finfo.tiny`` as in
:mod:`jaxart.math.cholesky`: a singular system yields huge or non-finite accelerations in that
world only.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxart.dynamics.engine import lane_spatial as ls
from jaxart.dynamics.engine.aba_schedule import aba_schedule
from jaxart.dynamics.engine.dense_solve import dense_accelerations
from jaxart.dynamics.layout import dynamics_layout
from jaxart.kinematics.fk import base_bodies, fk_frames_lanes, fk_twists_lanes
from jaxart.math import soa
from jaxart.math.cholesky import spd_solve_batch_minor
from jaxart.math.lanes import col, lanes
from jaxart.math.static_index import take_rows
from jaxart.sim.gravity import gravity_mass


def _with_zero_row(values: tuple) -> tuple:
    return tuple(jnp.concatenate([x, jnp.zeros_like(x[:1])], axis=0) for x in values)


def _geometry(model, joint_q, joint_qd, base_q):
    """Stage 1: DOF columns ``S`` (6), rigid inertias (10), COMs (3) and body twists (6), SoA lanes."""
    k = len(base_bodies(model.schedule))
    fr = fk_frames_lanes(model, joint_q, joint_qd, base_q)
    lin, ang = fk_twists_lanes(model, fr, jnp.zeros((k, 6, 1), joint_q.dtype), unroll=joint_q.shape[-1] > 1)
    return ls.columns(model, fr), ls.rigid_inertia(model, fr.world, fr.com_w), fr.com_w, (*lin, *ang)


def _forces(model, geometry, joint_qd, joint_f, body_f):
    """Stage 2: velocity products ``c``, attached inertias and bias wrenches, generalized ``joint_f``."""
    lay = dynamics_layout(model)
    sched = aba_schedule(model)
    n, nd = model.body_count, model.joint_dof_count
    s, inertia, com, vel = geometry
    qd = jnp.concatenate([joint_qd, jnp.zeros_like(joint_qd[:1])], axis=0)
    sq = tuple(x * qd for x in s)
    dof_body = np.append(lay.dof_body, n)
    # Ṡ_d q̇_d = (V_child − Σ_rest S_m q̇_m) ×ₘ S_d q̇_d  (see DynamicsLayout.sdot_rest)
    rest = ls.sum_rows(sq, np.vstack([lay.sdot_rest, np.full((1, 6), nd)]))
    c = ls.cross_motion(tuple(take_rows(v, dof_body) - r for v, r in zip(vel, rest, strict=True)), sq)
    vel_n = tuple(v[:n] for v in vel)
    g = tuple(model.gravity[k] for k in range(3))
    gc = model.body_gravcomp
    weight = tuple(gravity_mass(x, gc) for x in inertia[:4])  # compensated (m, m c)
    f_grav = (*soa.scale(g, weight[0]), *soa.cross(weight[1:4], g))
    f_ext = ls.origin_wrench(tuple(body_f[:, k] for k in range(6)), com)
    bias = tuple(a - b - e for a, b, e in zip(ls.cross_force(vel_n, ls.apply_rigid(inertia, vel_n)), f_grav, f_ext,
                                              strict=True))
    i_dof = ls.sum_rows(_with_zero_row(inertia), sched.attach)
    p_dof = ls.sum_rows(_with_zero_row(bias), sched.attach)
    return c, i_dof, p_dof, _generalized(lay, s, com, joint_f, dof_body)


def _generalized(lay, s: tuple, com: tuple, joint_f, dof_body) -> jnp.ndarray:
    """``(nd + 1, L)`` generalized forces of ``joint_f`` (FREE/DISTANCE: world COM wrenches)."""
    fj = jnp.concatenate([joint_f, jnp.zeros_like(joint_f[:1])], axis=0)
    if not lay.is_free_dof.any():
        return fj
    idx = np.vstack([lay.free_joint_dofs, np.full((1, 6), lay.free_joint_dofs.shape[0])])
    com_d = tuple(take_rows(jnp.concatenate([x, jnp.zeros_like(x[:1])], axis=0), dof_body) for x in com)
    wrench = ls.origin_wrench(tuple(take_rows(fj, idx[:, k]) for k in range(6)), com_d)
    free = col(np.append(lay.is_free_dof, False))
    return jnp.where(free, ls.dot6(s, wrench), fj)


def _pad_rows(values: tuple, width: int, lanes_: int) -> tuple:
    """``(W, L')`` components → ``(W + 1, L)`` with a zero row (the padding slot)."""
    return tuple(jnp.concatenate([jnp.broadcast_to(x, (width, lanes_)), jnp.zeros((1, lanes_), x.dtype)])
                 for x in values)


def _scan(fn, init, xs, reverse=False):
    """``lax.scan`` over the levels (static numpy level tables become constants). Unrolled levels
    measured the same at batch 1024."""
    return jax.lax.scan(fn, init, jax.tree_util.tree_map(jnp.asarray, xs), reverse=reverse)


def _sym_inertia(i10: tuple, imp: tuple | None) -> tuple:
    """21-tuple of the attached rigid inertias plus the contact impedance ``imp`` (or none)."""
    sym = ls.rigid_to_sym(i10)
    return sym if imp is None else tuple(a + b for a, b in zip(sym, imp, strict=True))


def _backward_run(run, lv, init, lanes_: int, tiny):
    """Backward pass over one run of levels (deepest first) from the padded entry values ``init``.

    Returns the padded ``(I^a, p^a)`` of the run's first level and per-level ``(U (6), 1/D, u)``.
    Values are component tuples: XLA:CPU then materialises the shared intermediates (``I^A``,
    ``U``, ``1/D``) as separate loop fusions instead of re-evaluating them inside every entry of
    the projected inertia, which it does for stacked arrays (2× slower).
    """
    width = run.width

    def level(carry, xs):
        ia_prev, pa_prev = carry
        (s, c, i10, p, tau, extra, imp), cp, k = xs
        gather = lambda x: sum(x[cp[:, m]] for m in range(cp.shape[1]))  # noqa: E731
        ia = tuple(a + gather(b) for a, b in zip(_sym_inertia(i10, imp), ia_prev, strict=True))
        pa = tuple(a + gather(b) for a, b in zip(p, pa_prev, strict=True))
        u_vec = ls.sym_matvec(ia, s)
        d = ls.dot6(s, u_vec) + extra
        u = tau - ls.dot6(s, pa)
        inv = jnp.where(k, 0.0, 1.0 / jnp.maximum(d, tiny))
        ia_out = tuple(ia[m] - u_vec[i] * u_vec[j] * inv for m, (i, j) in enumerate(ls.SYM_PAIRS))
        # p^a = p^A + I^a c + U u / D = p^A + I^A c + U (u − Uᵀ c) / D  (no I^a entries re-evaluated)
        ui = (u - ls.dot6(u_vec, c)) * inv
        pa_out = tuple(a + b + uv * ui for a, b, uv in zip(pa, ls.sym_matvec(ia, c), u_vec, strict=True))
        return (_pad_rows(ia_out, width, lanes_), _pad_rows(pa_out, width, lanes_)), (u_vec, inv, u)

    return _scan(level, init, (lv, run.child_pos.astype(np.int32), run.kinematic[..., None]), reverse=True)


def _forward_run(run, xs, init, lanes_: int):
    """Forward pass over one run of levels (root side first); returns the padded accelerations of its
    last level and ``(V, W, L)`` joint accelerations."""
    width = run.width

    def level(a_prev, xs):
        s, c, uv, iv, uu, pp = xs
        a1 = tuple(ap[pp] + ck for ap, ck in zip(a_prev, c, strict=True))
        qdd = (uu - ls.dot6(uv, a1)) * iv
        return _pad_rows(tuple(x + sk * qdd for x, sk in zip(a1, s, strict=True)), width, lanes_), qdd

    return _scan(level, init, (*xs, run.parent_pos.astype(np.int32)))


def _loads_at(loads, table: np.ndarray, values: str) -> tuple | None:
    """``table.shape + (L,)`` components of ``loads.<values>`` placed at the entries of the static DOF ``table`` that
    carry a load (zero elsewhere), or ``None`` where none does. A concatenation of the few loaded rows and zero rows:
    one elementwise loop per component, not a gather over all DOFs."""
    if loads is None:
        return None
    slot = {d: i for i, d in enumerate(loads.dofs)}
    hits = [slot.get(int(d), -1) for d in np.asarray(table).reshape(-1)]
    if all(h < 0 for h in hits):
        return None

    def place(x):
        zero = jnp.zeros_like(x[:1])
        return jnp.concatenate([zero if h < 0 else x[h:h + 1] for h in hits]).reshape(*np.shape(table), x.shape[-1])

    return tuple(place(x) for x in getattr(loads, values))


def _plus(values: tuple, extra: tuple | None) -> tuple:
    return values if extra is None else tuple(a + b for a, b in zip(values, extra, strict=True))


def _solve(sched, per_dof, lanes_: int, tiny) -> jnp.ndarray:
    """Both passes over the runs of levels (and the root blocks); returns ``(nd, L)`` accelerations."""
    dtype = per_dof[0][0].dtype
    zeros = lambda k, w: tuple(jnp.zeros((w + 1, lanes_), dtype) for _ in range(k))  # noqa: E731
    runs = sched.runs
    level_vals = [None] * len(runs)
    carry = None
    for r in reversed(range(len(runs))):
        run = runs[r]
        take = lambda t, run=run: tuple(take_rows(x, run.level_dof) for x in t)  # noqa: E731
        imp = _loads_at(per_dof[6], run.level_dof, "impedance")
        p = _plus(take(per_dof[3]), _loads_at(per_dof[6], run.level_dof, "bias"))
        lv = (*(take(t) for t in per_dof[:3]), p, *(take_rows(x, run.level_dof) for x in per_dof[4:6]), imp)
        if carry is None:
            init = (zeros(21, run.width), zeros(6, run.width))
        else:
            ec = run.entry_child
            kids = lambda x, ec=ec: sum(take_rows(x, ec[:, m]) for m in range(ec.shape[1]))  # noqa: E731
            init = tuple(_pad_rows(tuple(kids(x) for x in t), run.width, lanes_) for t in carry)
        carry, out = _backward_run(run, lv, init, lanes_, tiny)
        level_vals[r] = (lv[0], lv[1], *out)
    acc, qdds, block_rows = None, [], []
    if sched.blocks is not None:
        block_qdd, block_acc = _root_blocks(sched.blocks, per_dof, carry, lanes_)
        block_rows = [jnp.swapaxes(block_qdd, 0, 1).reshape(-1, lanes_)]
        acc = tuple(jnp.concatenate([jnp.broadcast_to(x, (x.shape[0], lanes_)), jnp.zeros((1, lanes_), dtype)])
                    for x in block_acc)
    for r, run in enumerate(runs):
        if acc is None:
            init = zeros(6, run.width)
        else:
            entry = sched.blocks.slot_block if r == 0 else run.entry_parent
            init = _pad_rows(tuple(take_rows(x, entry) for x in acc), run.width, lanes_)
        acc, qdd = _forward_run(run, level_vals[r], init, lanes_)
        qdds.append(jnp.broadcast_to(qdd, (*qdd.shape[:2], lanes_)).reshape(-1, lanes_))
    flat = jnp.concatenate([*qdds, *block_rows, jnp.zeros((1, lanes_), dtype)], axis=0)
    return take_rows(flat, sched.dof_pos)


def _root_blocks(blocks, per_dof, first_level, lanes_: int) -> tuple[jnp.ndarray, tuple]:
    """Multi-DOF root joints solved as blocks (``aba_schedule`` module docstring).

    With the body's articulated inertia ``I^A``/bias ``p^A`` (its own plus its children's from the
    first level), columns ``S`` and the summed velocity products ``c`` of the joint's DOFs:
    ``(Sᵀ I^A S + diag(e)) q̈ = τ − Sᵀ (p^A + I^A c)`` and the body acceleration ``a = c + S q̈``.
    The small SPD systems are solved by :mod:`jaxart.math.cholesky`'s batch-minor kernel.

    Returns:
        ``(q̈ (M, R, L), body accelerations (6-tuple of (R, L)))``.
    """
    s, c, i_dof, p_dof, tau, extra, loads = per_dof
    ch, dof = blocks.children, blocks.dof
    m, r = dof.shape[1], dof.shape[0]
    kids = lambda x: sum(take_rows(x, ch[:, k]) for k in range(ch.shape[1]))  # noqa: E731
    last = lambda t: tuple(take_rows(x, blocks.last) for x in t)  # noqa: E731
    own_i = _sym_inertia(last(i_dof), _loads_at(loads, blocks.last, "impedance"))
    own_p = _plus(last(p_dof), _loads_at(loads, blocks.last, "bias"))
    ia = tuple(a + kids(b) for a, b in zip(own_i, first_level[0], strict=True))
    pa = tuple(a + kids(b) for a, b in zip(own_p, first_level[1], strict=True))
    cols = [tuple(take_rows(x, dof[:, k]) for x in s) for k in range(m)]
    c_sum = tuple(sum(take_rows(x, dof[:, k]) for k in range(m)) for x in c)
    # padding columns (S = 0, τ = 0) get a unit pivot: their q̈ is 0
    diag = [take_rows(extra, dof[:, k]) + col(dof[:, k] == len(tau) - 1) for k in range(m)]
    mat, rhs = _block_system(ia, pa, cols, c_sum, [take_rows(tau, dof[:, k]) for k in range(m)], diag)
    qdd = spd_solve_batch_minor(mat.reshape(m, m, -1), rhs.reshape(m, 1, -1)).reshape(m, r, lanes_)
    qdd = jnp.where(col(blocks.kinematic), 0.0, qdd)
    acc = tuple(a + sum(sk[i] * qdd[k] for k, sk in enumerate(cols)) for i, a in enumerate(c_sum))
    return qdd, acc


def _block_system(ia, pa, cols, c_sum, tau, diag) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Stacked ``(M, M, R, L)`` matrices ``Sᵀ I^A S + diag`` and ``(M, R, L)`` right-hand sides of the blocks.

    Stacked arrays with the 6-sums unrolled: each product is one elementwise XLA loop over all entries.
    """
    shape = jnp.broadcast_shapes(*(x.shape for x in jax.tree_util.tree_leaves((ia, pa, cols, c_sum, tau, diag))))
    stack = lambda xs: jnp.stack([jnp.broadcast_to(x, shape) for x in xs])  # noqa: E731
    i_full = stack([ia[ls.SYM[i, k]] for i in range(6) for k in range(6)]).reshape(6, 6, *shape)
    s = jnp.stack([stack(sk) for sk in cols])  # (M, 6, R, L)
    u = sum(i_full[None, :, k] * s[:, None, k] for k in range(6))  # (M, 6, R, L): I^A S_m
    eye = jnp.eye(len(cols), dtype=s.dtype)[..., None, None]
    mat = sum(s[:, None, i] * u[None, :, i] for i in range(6)) + eye * stack(diag)[None]
    bias = stack(pa) + sum(i_full[:, k] * stack(c_sum)[k] for k in range(6))  # (6, R, L): p^A + I^A c
    return mat, stack(tau) - sum(s[:, i] * bias[i] for i in range(6))


class AbaTerms(NamedTuple):
    """Everything the two passes of one ABA solve read, in the lane layout (components ``(rows, L)``).

    Attributes:
        s: DOF columns ``S`` (world-origin Plücker), 6-tuple of ``(nd + 1, L)`` (last row padding).
        vel: Body twists ``(v_at_world_origin, ω)``, 6-tuple of ``(≥ n, L)``.
        c: Velocity products ``Ṡ q̇`` per DOF, 6-tuple of ``(nd + 1, L)``.
        i_dof: Attached rigid inertias per DOF, 10-tuple of ``(nd + 1, L)``.
        p_dof: Attached bias wrenches per DOF, 6-tuple of ``(nd + 1, L)``.
        tau: ``(nd + 1, L)`` generalized forces (with the extra forces).
        extra: ``(nd + 1, L)`` the diagonal ``e`` added to ``H``.
    """

    s: tuple
    vel: tuple
    c: tuple
    i_dof: tuple
    p_dof: tuple
    tau: jnp.ndarray
    extra: jnp.ndarray


def aba_terms(model, joint_q, joint_qd, base_q, joint_f, tau_extra, d_extra, body_f) -> AbaTerms:
    """Stages 1–2 of :func:`aba_kernel` (geometry, velocity products, inertias, biases, forces), lane layout.

    Arguments as :func:`aba_kernel`.
    """
    geometry = _geometry(model, joint_q, joint_qd, base_q)
    c, i_dof, p_dof, tau = _forces(model, geometry, joint_qd, joint_f, body_f)
    tau = tau + jnp.concatenate([tau_extra, jnp.zeros_like(tau_extra[:1])], axis=0)
    extra = jnp.concatenate([d_extra, jnp.zeros_like(d_extra[:1])], axis=0)
    return AbaTerms(s=geometry[0], vel=geometry[3], c=c, i_dof=i_dof, p_dof=p_dof, tau=tau, extra=extra)


@struct.dataclass
class DofLoads:
    """Inertias and bias wrenches added to the attached ones of a few DOFs, in the lane layout.

    Attributes:
        dofs: Static tuple of the ``k`` distinct DOFs that carry them (not a pytree leaf).
        impedance: 21-tuple (:data:`~jaxart.dynamics.engine.lane_spatial.SYM_PAIRS` order) of ``(k, L)`` symmetric
            6×6 inertias added to the DOFs' attached inertias (world-origin Plücker), e.g. implicit contact
            impedances (:mod:`jaxart.solvers.featherstone.aba_contact`).
        bias: 6-tuple of ``(k, L)`` wrenches added to the DOFs' attached bias wrenches.
    """

    dofs: tuple = struct.field(pytree_node=False)
    impedance: tuple = ()
    bias: tuple = ()


def aba_solve(model, terms: AbaTerms, loads: DofLoads | None = None) -> jnp.ndarray:
    """Both passes of the algorithm over :func:`aba_terms`, optionally with inertias added on a few DOFs.

    Args:
        model: The model.
        terms: :class:`AbaTerms`.
        loads: Optional :class:`DofLoads`.

    Returns:
        ``(nd, L)`` joint accelerations.
    """
    per_dof = (terms.s, terms.c, terms.i_dof, terms.p_dof, terms.tau, terms.extra, loads)
    lanes_ = max(x.shape[-1] for x in (*terms.s, *terms.c, *terms.i_dof, *terms.p_dof, terms.tau, terms.extra,
                                        *(() if loads is None else (*loads.impedance, *loads.bias))))
    return _solve(aba_schedule(model), per_dof, lanes_, jnp.finfo(terms.tau.dtype).tiny)


def aba_kernel(model, joint_q, joint_qd, base_q, joint_f, tau_extra, d_extra, body_f):
    """Lane kernel of :func:`aba_accelerations` (``base_q``: ``(k, 7, L)`` poses of the base bodies)."""
    return aba_solve(model, aba_terms(model, joint_q, joint_qd, base_q, joint_f, tau_extra, d_extra, body_f))


def body_q_from_base(model, base_q) -> jnp.ndarray:
    """``(n, 7)`` body poses holding the ``(k, 7)`` poses of the base bodies (identity elsewhere, not read)."""
    base = base_bodies(model.schedule)
    slot = np.full(model.body_count, len(base))
    slot[base] = np.arange(len(base))
    ident = jnp.asarray([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]], base_q.dtype)
    return take_rows(jnp.concatenate([base_q, ident]), slot)


def dense_from_base(model, joint_q, joint_qd, base_q, joint_f, tau_extra, d_extra, body_f, *, dyad=None,
                    contact=None, constraints=None, dt=None, lowrank=None, contact_iterations: int = 1):
    """:func:`dense_accelerations` with the base-body poses only (other rows are not read)."""
    body_q = body_q_from_base(model, base_q)
    return dense_accelerations(model, joint_q, joint_qd, body_q, joint_f, tau_extra, d_extra, body_f, dyad=dyad,
                               contact=contact, constraints=constraints, dt=dt, lowrank=lowrank,
                               contact_iterations=contact_iterations)


#: :func:`aba_accelerations` from the ``(k, 7)`` poses of the :func:`~jaxart.kinematics.fk.base_bodies`.
aba_from_base = lanes(aba_kernel, plain=dense_from_base)


def aba_accelerations(model, joint_q, joint_qd, body_q_base, joint_f, tau_extra, d_extra, body_f) -> jnp.ndarray:
    """Joint accelerations of one world by the articulated-body algorithm (batch-minor under ``vmap``).

    Only batched (``vmap``) evaluation runs the lane kernel; unbatched calls, batches of one and all
    derivatives use :func:`~jaxart.dynamics.engine.dense_solve.dense_accelerations` (the same values): at one
    lane the kernel's many small operations cost more than the dense solve (humanoid step at batch 1:
    354 vs 236 µs), and the dense solve's ``custom_linear_solve`` derivative is cheaper than reverse
    mode through the two level scans.

    Args:
        model: The model.
        joint_q: ``(nq,)`` coordinates.
        joint_qd: ``(nd,)`` velocities.
        body_q_base: ``(n, 7)`` poses; only bodies without a tree joint (static roots) are read.
        joint_f: ``(nd,)`` forces in the ``Control.joint_f`` convention (FREE/DISTANCE entries are
            world wrenches at the child COM).
        tau_extra: ``(nd,)`` further generalized forces.
        d_extra: ``(nd,)`` the diagonal ``e`` added to ``H``.
        body_f: ``(n, 6)`` world wrenches ``(f, τ)`` at the COMs (gravity is added inside).

    Returns:
        ``(nd,)`` accelerations, zero for non-tree and kinematic DOFs.
    """
    base_q = body_q_base[base_bodies(model.schedule)]
    return aba_from_base(model, joint_q, joint_qd, base_q, joint_f, tau_extra, d_extra, body_f)
