"""Broad phase of ``collide``: culled groups give the full evaluation's active contacts, overflow is counted and
warned about, batches, gradients and a Featherstone step on culled contacts."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart.collision import (
    NARROW_PHASE,
    CollisionOverflowWarning,
    collide,
    collide_with_stats,
    default_capacity,
    pair_capacities,
    pair_groups,
    shape_bounding_radius,
    shape_world_transforms,
)
from jaxart.collision.bounds import pair_bound
from jaxart.sim.enums import GeoType

FULL = 10**9  # a pair capacity above every group's pair count: no culling


def mixed_scene(n: int, kinds: str = "sbc"):
    """A ground plane and ``n`` free bodies cycling through ``kinds`` (s sphere, b box, c capsule; gap 1 cm)."""
    b = jaxart.ModelBuilder()
    cfg = jaxart.ShapeConfig(gap=0.01)
    b.add_ground_plane(cfg=cfg)
    for i in range(n):
        body = b.add_body(xform=((0, 0, 1), (0, 0, 0, 1)), mass=1.0)
        kind = kinds[i % len(kinds)]
        if kind == "s":
            b.add_shape_sphere(body, radius=0.06, cfg=cfg)
        elif kind == "b":
            b.add_shape_box(body, hx=0.05, hy=0.04, hz=0.06, cfg=cfg)
        else:
            b.add_shape_capsule(body, radius=0.04, half_height=0.05, cfg=cfg)
    return b.finalize(dtype=jnp.float64)


def random_poses(model, batch: int, seed: int, half: float = 0.15):
    """``(batch, body_count, 7)`` random poses of the bodies in a box of half width ``half`` above the ground."""
    rng = np.random.default_rng(seed)
    n = model.body_count
    p = rng.uniform([-half, -half, 0.0], [half, half, 1.7 * half], (batch, n, 3))
    q = rng.normal(size=(batch, n, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return jnp.asarray(np.concatenate([p, q], -1))


def active_rows(c, world=None):
    """Active rows as ``(shape_a, shape_b, separation, point)`` sorted by pair (slot order kept)."""
    pick = (lambda x: np.asarray(x)) if world is None else (lambda x: np.asarray(x[world]))
    a = pick(c.active)
    sa, sb, sep, pt = pick(c.shape_a)[a], pick(c.shape_b)[a], pick(c.separation)[a], pick(c.point)[a]
    o = np.lexsort((sb, sa))
    return sa[o], sb[o], sep[o], pt[o]


def assert_same_active(c_full, c_cull, world=None):
    fa, fb, fs, fp = active_rows(c_full, world)
    ca, cb, cs, cp = active_rows(c_cull, world)
    np.testing.assert_array_equal(fa, ca)
    np.testing.assert_array_equal(fb, cb)
    np.testing.assert_allclose(fs, cs, atol=1e-12)
    np.testing.assert_allclose(fp, cp, atol=1e-12)


def test_default_capacities_cull_only_large_groups():
    model = mixed_scene(60)  # 20 spheres, 20 boxes, 20 capsules
    groups = pair_groups(model.topology)
    caps = dict(zip(((g.type_a, g.type_b) for g in groups), pair_capacities(groups), strict=True))
    counts = {(g.type_a, g.type_b): len(g.shape_a) for g in groups}
    assert caps[(GeoType.PLANE, GeoType.SPHERE)] == counts[(GeoType.PLANE, GeoType.SPHERE)] == 20  # linear: all
    assert counts[(GeoType.SPHERE, GeoType.SPHERE)] == 190 and caps[(GeoType.SPHERE, GeoType.SPHERE)] == 128
    assert counts[(GeoType.SPHERE, GeoType.BOX)] == 400 and caps[(GeoType.SPHERE, GeoType.BOX)] == 160  # 4 × 40
    full = default_capacity(model, pair_capacity=FULL)
    assert full == 20 * (1 + 4 + 2) + 190 * (1 + 2 + 8) + 400 * (1 + 1 + 3)  # slots of every candidate pair
    assert default_capacity(model) == 20 * (1 + 4 + 2) + 128 * (1 + 2 + 8) + 160 * (1 + 1 + 3)
    small = mixed_scene(30)  # 45 pairs per same-type group, 100 per mixed one: all in full
    small_groups = pair_groups(small.topology)
    assert pair_capacities(small_groups) == tuple(len(g.shape_a) for g in small_groups)
    by_type = pair_capacities(groups, {(GeoType.BOX, GeoType.SPHERE): 7})
    assert by_type[[(g.type_a, g.type_b) for g in groups].index((GeoType.SPHERE, GeoType.BOX))] == 7


def test_pair_capacity_validation():
    model = mixed_scene(3)
    with pytest.raises(ValueError, match="pair_capacity must be >= 0"):
        collide(model, model.state(), pair_capacity=-1)
    with pytest.raises(TypeError, match="pair_capacity must be an int"):
        collide(model, model.state(), pair_capacity=2.5)
    with pytest.raises(TypeError, match="pairs of GeoType"):
        collide(model, model.state(), pair_capacity={"box": 3})


def test_culled_batch_matches_full_evaluation():
    """Random dense scenes of 12 bodies, 4 worlds under vmap: culled groups keep every active contact."""
    model = mixed_scene(12)
    state = model.state()
    poses = random_poses(model, 4, seed=0)

    def run(pc):
        fn = jax.jit(jax.vmap(lambda q: collide_with_stats(model, state.replace(body_q=q), pair_capacity=pc)))
        return fn(poses)

    c_full, s_full = run(FULL)
    c_cull, s_cull = run(10)
    assert c_cull.capacity < c_full.capacity and c_cull.slot_bodies is None and c_full.slot_bodies is not None
    np.testing.assert_array_equal(s_cull.pair_overflow, 0)
    assert np.all(np.asarray(s_cull.pairs_overlapping) > 0) and np.all(np.asarray(s_full.pairs_overlapping) == 0)
    np.testing.assert_array_equal(s_full.contacts_active, s_cull.contacts_active)
    assert np.all(np.asarray(s_full.contacts_active) > 10)
    for w in range(4):
        assert_same_active(c_full, c_cull, w)
        active = np.asarray(c_cull.active[w])  # traced bodies agree with the shapes' owners
        body = np.asarray(model.topology.shape_body)
        np.testing.assert_array_equal(np.asarray(c_cull.body_a[w])[active], body[np.asarray(c_cull.shape_a[w])[active]])


def overlapping_spheres():
    """Five spheres of radius 0.1 around the origin, centre offsets growing: all pairs overlap."""
    b = jaxart.ModelBuilder()
    cfg = jaxart.ShapeConfig(gap=0.0)
    for i in range(5):
        body = b.add_body(xform=((0.02 * i * (i + 1), 0, 0), (0, 0, 0, 1)), mass=1.0)
        b.add_shape_sphere(body, radius=0.1, cfg=cfg)
    return b.finalize(dtype=jnp.float64)


def test_overflow_counted_warned_and_closest_kept():
    model = overlapping_spheres()
    state = model.state()
    x = np.asarray(state.body_q[:, 0])
    dist = {(i, j): abs(x[j] - x[i]) - 0.2 for i in range(5) for j in range(i + 1, 5)}
    n_over = sum(d < 0 for d in dist.values())
    assert 3 < n_over < 10
    fn = jax.jit(lambda s: collide_with_stats(model, s, pair_capacity=3))
    with pytest.warns(CollisionOverflowWarning, match=rf"{n_over - 3} overlapping shape pairs exceeded"):
        c, st = jax.block_until_ready(fn(state))
    assert int(st.pair_overflow) == n_over - 3 and int(st.pairs_overlapping) == n_over
    kept = {(int(a), int(b)) for a, b in zip(c.shape_a[c.active], c.shape_b[c.active], strict=True)}
    assert kept == set(sorted(dist, key=dist.get)[:3])  # the deepest three pairs
    # the contact capacity: deepest kept, overflow counted
    c2, st2 = jax.jit(lambda s: collide_with_stats(model, s, capacity=2, overflow_warning=False))(state)
    assert int(st2.contacts_active) == n_over and int(st2.contact_overflow) == n_over - 2
    np.testing.assert_allclose(np.sort(np.asarray(c2.separation)), sorted(dist.values())[:2], atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.block_until_ready(jax.jit(lambda s: collide(model, s, pair_capacity=3, overflow_warning=False))(state))
        jax.block_until_ready(jax.jit(lambda s: collide(model, s, pair_capacity=FULL))(state))


def test_rows_follow_capacity_not_candidate_pairs():
    """40 spheres spread on a ground plane: 780 candidate sphere pairs, rows bounded by the default capacity."""
    b = jaxart.ModelBuilder()
    cfg = jaxart.ShapeConfig(gap=0.005)
    b.add_ground_plane(cfg=cfg)
    for i in range(40):
        body = b.add_body(xform=((0.25 * (i % 8), 0.25 * (i // 8) + 0.01 * (i % 2), 0.05), (0, 0, 0, 1)), mass=1.0)
        b.add_shape_sphere(body, radius=0.05, cfg=cfg)
    model = b.finalize(dtype=jnp.float64)
    state = model.state()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow
        c = jax.block_until_ready(jax.jit(lambda s: collide(model, s))(state))
    assert c.capacity == 40 + 4 * 40 < 40 + 780
    assert int(c.count) == 40  # every sphere rests on the ground, none touches another
    c_full = jax.jit(lambda s: collide(model, s, pair_capacity=FULL))(state)
    assert c_full.capacity == 40 + 780
    assert_same_active(c_full, c)


SPHERE_CAPSULE = {(GeoType.SPHERE, GeoType.CAPSULE): 6}


def test_grad_through_culled_collide_matches_full():
    """Spheres and capsules (cheap narrow phases); the sphere-capsule group (12 pairs) culled to 6."""
    model = mixed_scene(7, "sc")
    body_q = random_poses(model, 1, seed=1, half=0.15)[0]
    state = model.state()

    def loss(q, pc):
        c, st = collide_with_stats(model, state.replace(body_q=q), pair_capacity=pc, overflow_warning=False)
        w = jnp.where(c.active, 1.0, 0.0)
        return jnp.sum(w * c.separation) + jnp.sum(w[:, None] * c.point * c.normal), (c.count, c.capacity, st)

    (g_full, (n_full, cap_full, _)) = jax.jit(jax.grad(lambda q: loss(q, FULL), has_aux=True))(body_q)
    (g_cull, (n_cull, cap_cull, st)) = jax.jit(jax.grad(lambda q: loss(q, SPHERE_CAPSULE), has_aux=True))(body_q)
    assert int(st.pair_overflow) == 0 and int(st.pairs_overlapping) > 2
    assert cap_cull < cap_full and int(n_cull) == int(n_full) > 5
    assert float(jnp.max(jnp.abs(g_full))) > 0.1
    np.testing.assert_allclose(g_cull, g_full, atol=1e-10)


def test_featherstone_step_on_culled_contacts():
    model = mixed_scene(5, "sc")
    body_q = random_poses(model, 1, seed=1, half=0.12)[0]
    joint_q, joint_qd = jaxart.eval_ik(model, model.state().replace(body_q=body_q))
    state = model.state().replace(body_q=body_q, joint_q=joint_q, joint_qd=joint_qd)
    solver = jaxart.solvers.SolverFeatherstone(model)

    @jax.jit
    def run(s):
        c_full = collide(model, s, pair_capacity=FULL)
        c_cull, st = collide_with_stats(model, s, pair_capacity={(GeoType.SPHERE, GeoType.CAPSULE): 3})
        assert c_cull.slot_bodies is None and c_full.slot_bodies is not None and c_cull.capacity < c_full.capacity
        return solver.step(s, None, c_full, 1e-3), solver.step(s, None, c_cull, 1e-3), c_full.count, st

    s_full, s_cull, n_full, st = run(state)
    assert int(st.pair_overflow) == 0 and int(st.contacts_active) == int(n_full) > 4
    assert np.all(np.isfinite(np.asarray(s_cull.joint_qd)))
    np.testing.assert_allclose(s_cull.joint_qd, s_full.joint_qd, atol=1e-9)
    np.testing.assert_allclose(s_cull.body_q, s_full.body_q, atol=1e-12)


def _group(model, ta, tb):
    return next(g for g in pair_groups(model.topology) if (g.type_a, g.type_b) == (ta, tb))


def test_box_face_bound_never_exceeds_box_box_distance():
    """The box-box bound is below every slot distance of the SAT narrow phase (bounding spheres are not)."""
    rng = np.random.default_rng(5)
    b = jaxart.ModelBuilder()
    for _ in range(16):
        body = b.add_body(mass=1.0)
        hx, hy, hz = rng.uniform(0.02, 0.2, 3)
        b.add_shape_box(body, hx=hx, hy=hy, hz=hz)
    model = b.finalize(dtype=jnp.float64)
    body_q = random_poses(model, 1, seed=6, half=0.4)[0]
    xw = shape_world_transforms(model, body_q)
    g = _group(model, GeoType.BOX, GeoType.BOX)
    radius = shape_bounding_radius(model, jnp.float64)
    bound = np.asarray(pair_bound(model, xw, radius, g))
    scale = model.shape_scale
    res = jax.jit(jax.vmap(NARROW_PHASE[(GeoType.BOX, GeoType.BOX)]))(xw[g.shape_a], scale[g.shape_a],
                                                                      xw[g.shape_b], scale[g.shape_b])
    dmin = np.min(np.where(np.asarray(res.valid), np.asarray(res.dist), np.inf), axis=1)
    assert np.all(bound <= dmin + 1e-9)
    assert np.any(bound > 0.05) and np.any(bound < 0)  # separated and overlapping pairs both occur
    d = np.linalg.norm(np.asarray(xw[g.shape_b, :3] - xw[g.shape_a, :3]), axis=1)
    sphere = d - np.asarray(radius)[g.shape_a] - np.asarray(radius)[g.shape_b]
    assert np.any(sphere > dmin + 1e-3)  # why boxes use their face axes


def test_plane_and_heightfield_bounds():
    b = jaxart.ModelBuilder()
    b.add_ground_plane(height=0.1)
    b.add_shape_heightfield(heightfield=jaxart.Heightfield(np.zeros((3, 3)), hx=1.0, hy=2.0, min_z=0.0, max_z=0.3),
                            xform=((5.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)))
    body = b.add_body(mass=1.0)
    b.add_shape_capsule(body, radius=0.1, half_height=0.2)
    model = b.finalize(dtype=jnp.float64)
    radius = shape_bounding_radius(model, jnp.float64)
    np.testing.assert_allclose(radius, [0.0, 0.0, 0.3])
    for pos, plane, hfield in (((0.0, 0.0, 1.0), 0.6, np.hypot(4.0, 1.0 - 0.3) - 0.3),
                               ((6.5, 1.0, 0.2), -0.2, 0.5 - 0.3), ((5.5, -3.0, 2.3), 1.9, np.hypot(1.0, 2.0) - 0.3)):
        body_q = jnp.asarray([[*pos, 0.0, 0.0, 0.0, 1.0]])
        xw = shape_world_transforms(model, body_q)
        got_plane = pair_bound(model, xw, radius, _group(model, GeoType.PLANE, GeoType.CAPSULE))
        got_hfield = pair_bound(model, xw, radius, _group(model, GeoType.HFIELD, GeoType.CAPSULE))
        np.testing.assert_allclose(got_plane, [plane], atol=1e-12)
        np.testing.assert_allclose(got_hfield, [hfield], atol=1e-12)
