"""Convex hulls of collision meshes: tables, maxhullvert (checked against MuJoCo's compiler), import reports.

Meshes are generated here (``meshgen``): a geodesic sphere, a box whose faces are split into
~2,000 triangles and a non-convex L-shaped prism.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from meshgen import grid_box, icosphere, l_shape

import jaxart
from jaxart import collision as col
from jaxart.sim.mesh_hull import DEFAULT_MAXHULLVERT, convex_hull_tables

jax.config.update("jax_enable_x64", True)


def _euler_ok(h):
    return len(h.vertices) - len(h.edges) + len(h.planes) == 2


def _mjcf(verts, faces, *, maxhullvert=None, name="m"):
    cap = "" if maxhullvert is None else f' maxhullvert="{maxhullvert}"'
    v = " ".join(f"{x:.12g}" for x in np.asarray(verts).ravel())
    f = " ".join(str(int(i)) for i in np.asarray(faces).ravel())
    return f"""<mujoco><asset><mesh name="{name}" vertex="{v}" face="{f}"{cap}/></asset>
      <worldbody><body name="b"><freejoint/><geom name="g" type="mesh" mesh="{name}"/></body>
      <geom name="floor" type="plane" size="0 0 1"/></worldbody></mujoco>"""


def _mujoco_hull_vertex_count(xml: str) -> int:
    m = mujoco.MjModel.from_xml_string(xml)
    return int(m.mesh_graph[m.mesh_graphadr[0]])


def test_sphere_hull_caps_match_mujoco():
    v, f = icosphere(0.3, 3)  # 642 vertices, all on the hull
    full = jaxart.Mesh(v, f, maxhullvert=-1).hull
    assert len(full.vertices) == 642 and full.convex and not full.capped and _euler_ok(full)
    for cap in (8, 20, DEFAULT_MAXHULLVERT):
        h = jaxart.Mesh(v, f, maxhullvert=cap).hull
        assert h.capped and _euler_ok(h)
        assert len(h.vertices) == _mujoco_hull_vertex_count(_mjcf(v, f, maxhullvert=cap)) <= cap
        # every hull vertex is a mesh vertex; every face plane bounds all hull vertices
        assert np.min(np.linalg.norm(h.vertices[:, None] - v[None], axis=-1), axis=1).max() < 1e-12
        assert np.max(h.vertices @ h.planes[:, :3].T - h.planes[:, 3]) < 1e-12
    # default (nothing authored): DEFAULT_MAXHULLVERT vertices chosen greedily, closer than Qhull's early stop
    default = jaxart.Mesh(v, f).hull
    assert len(default.vertices) == DEFAULT_MAXHULLVERT and default.capped and _euler_ok(default)

    def outside(h):
        return np.max(v @ h.planes[:, :3].T - h.planes[:, 3], axis=1).max()

    assert outside(default) < outside(jaxart.Mesh(v, f, maxhullvert=DEFAULT_MAXHULLVERT).hull)
    with pytest.raises(ValueError, match="maxhullvert"):
        jaxart.Mesh(v, f, maxhullvert=3)
    # MJCF: an authored cap is MuJoCo's hull; MuJoCo's default (no cap) gets jaxart's default, reported
    for cap, noted in ((20, False), (None, True)):
        b = jaxart.ModelBuilder()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            res = b.add_mjcf(_mjcf(v, f, maxhullvert=cap))
        hull = next(m for m in b.shape_source if m is not None).hull
        assert len(hull.vertices) == (20 if cap else DEFAULT_MAXHULLVERT)
        assert any("capped at 32 vertices" in n for n in res["approximated"]) == noted


def test_fine_box_hull_is_the_box():
    v, f = grid_box([0.3, 0.2, 0.1], 13)  # 2,028 triangles
    assert len(f) == 2028
    h = jaxart.Mesh(v, f).hull
    assert h.convex and len(h.vertices) == 8 and h.planes.shape == (6, 4) and h.faces.shape == (6, 4)
    assert len(h.edges) == 12 and np.isclose(h.volume_ratio, 1.0)
    np.testing.assert_allclose(np.sort(np.abs(h.planes[:, 3])), [0.1, 0.1, 0.2, 0.2, 0.3, 0.3], atol=1e-12)
    # polygons are counter-clockwise about their outward normals
    for plane, face in zip(h.planes, h.faces, strict=True):
        p = h.vertices[face]
        area = 0.5 * sum(np.cross(p[k], p[(k + 1) % 4]) for k in range(4)) @ plane[:3]
        assert area > 0.0


def test_l_shape_is_reported_non_convex_and_hulled():
    v, f = l_shape(0.1)
    h = convex_hull_tables(v, f, -1)
    assert not h.convex and np.isclose(h.volume_ratio, 6.0 / 7.0) and len(h.vertices) == 10
    assert not convex_hull_tables(*grid_box([1, 1, 1], 2), -1).capped
    xml = _mjcf(v, f, name="ell")
    b = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match="not convex"):
        res = b.add_mjcf(xml)
    assert any("'ell'" in n and "not convex" in n for n in res["approximated"])
    assert res["unsupported"] == []
    b2 = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b2.add_mjcf(xml.replace('type="mesh"', 'type="mesh" contype="0" conaffinity="0"'))  # not colliding: silent


def test_urdf_mesh_report_and_maxhullvert(tmp_path):
    import trimesh

    trimesh.Trimesh(*l_shape(0.1), process=False).export(tmp_path / "ell.stl")
    trimesh.Trimesh(*icosphere(0.1, 2), process=False).export(tmp_path / "ball.stl")
    urdf = """<robot name="r"><link name="base"><collision><geometry><mesh filename="ell.stl"/></geometry>
      </collision></link><link name="tip"><collision><geometry><mesh filename="ball.stl"/></geometry></collision>
      </link><joint name="j" type="revolute"><parent link="base"/><child link="tip"/><axis xyz="0 0 1"/>
      <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""
    path = tmp_path / "r.urdf"
    path.write_text(urdf)
    b = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match="ell.stl.*not convex"):
        res = b.add_urdf(str(path), mesh_maxhullvert=12)
    assert len(res["approximated"]) == 1
    hulls = [m.hull for m in b.shape_source if m is not None]
    assert sorted(len(h.vertices) for h in hulls) == [10, 12]
    with pytest.raises(ValueError, match="mesh_maxhullvert"):
        jaxart.ModelBuilder().add_urdf(str(path), mesh_maxhullvert=2)


def _two_meshes(mesh):
    b = jaxart.ModelBuilder()
    for z in (0.0, 0.199):
        body = b.add_body(xform=((0.0, 0.0, z), (0, 0, 0, 1)), mass=1.0, inertia=np.eye(3) * 1e-3)
        b.add_joint_free(body)
        b.add_shape_mesh(body, mesh=mesh)
    return b.finalize(dtype=jnp.float64)


def test_collide_program_independent_of_raw_triangle_count():
    """Two boxes of 12 and of 2,028 triangles have the same hull, hence the same collide program (jaxpr)."""
    coarse, fine = (jaxart.Mesh(*grid_box([0.2, 0.2, 0.1], n)) for n in (1, 13))
    programs = []
    for mesh in (coarse, fine):
        model = _two_meshes(mesh)
        st = model.state()
        jaxpr = jax.make_jaxpr(lambda q, model=model, st=st: col.collide(model, st.replace(body_q=q)))(st.body_q)
        programs.append(str(jaxpr))  # shapes and operations; the hull tables are constants (not printed)
        assert [a.shape for a in col.stack_hulls([mesh.hull], jnp.float64)] == [(1, 8, 3), (1, 8), (1, 6, 4),
                                                                                  (1, 6, 4), (1, 12, 4)]
    assert programs[0] == programs[1]
    out = jax.jit(col.collide)(model, model.state())
    assert int(out.count) == 4  # the upper box rests on the lower one (0.001 deep)
    np.testing.assert_allclose(np.asarray(out.separation)[np.asarray(out.active)], -0.001, atol=1e-12)


def robot_urdf(rel: str, **kwargs):
    """``(builder, import result)`` of an ``example-robot-data`` URDF (skips when the package is missing)."""
    import importlib.metadata
    import os

    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data (part of the test extra) is not installed")
    share = os.path.abspath(str(dist.locate_file("cmeel.prefix/share")))
    path = os.path.join(share, "example-robot-data", "robots", rel)
    if not os.path.isfile(path):
        pytest.skip(f"no URDF at {path}")
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = b.add_urdf(path, package_dirs=[share], **kwargs)
    return b, res


#: Bound on XLA's temporary buffers for one ``collide`` of the Panda (mesh collision geometry: 29 mesh–mesh
#: and 64 box–mesh candidate pairs). Measured 32 MB with 32-vertex hulls; colliding the raw triangles needed 3.9 GB.
PANDA_COLLIDE_TEMP_BYTES = 128 * 2**20


@pytest.mark.slow
def test_panda_collide_memory_is_bounded_and_ur5_meshes_reported():
    """The Panda's collision meshes collide through ≤ 32-vertex hulls in bounded memory; UR5's are reported."""
    b, res = robot_urdf("panda_description/urdf/panda.urdf")
    model = b.finalize(dtype=jnp.float64)
    colliding = [m for s, m in enumerate(b.shape_source) if m is not None and b.shape_cfg[s].has_shape_collision]
    assert len(colliding) == 9 and all(len(m.indices) >= 200 for m in colliding)
    assert all(len(m.hull.vertices) == DEFAULT_MAXHULLVERT and m.hull.convex for m in colliding)
    assert res["approximated"] == []  # Panda's collision meshes are convex
    st = model.state()
    compiled = jax.jit(lambda q: col.collide(model, st.replace(body_q=q))).lower(st.body_q).compile()
    assert compiled.memory_analysis().temp_size_in_bytes < PANDA_COLLIDE_TEMP_BYTES
    out = jax.jit(col.collide)(model, st)
    assert np.all(np.isfinite(np.asarray(out.separation)))
    _, res = robot_urdf("ur_description/urdf/ur5_robot.urdf")
    assert len(res["approximated"]) == 7 and all("not convex" in n for n in res["approximated"])
