"""``add_urdf(srdf=...)``: an SRDF's ``<disable_collisions>`` link pairs become collision-filter pairs.

The Panda of ``example-robot-data`` ships ``srdf/panda.srdf`` next to ``urdf/panda.urdf``; at its
``default`` group state (the home pose) its collision meshes overlap (hand against link 7, links 5 and
6...), which the SRDF disables.
"""

from __future__ import annotations

import importlib.metadata
import os
import warnings
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart import collision as col
from jaxart.math.quat import quat_rotate

jax.config.update("jax_enable_x64", True)

TWO_LINKS = """<robot name="two">
  <link name="a"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="b"><collision><geometry><sphere radius="0.1"/></geometry></collision></link>
  <link name="c"><collision><geometry><sphere radius="0.1"/></geometry></collision></link>
  <joint name="ab" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 0.15"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="bc" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0 0 0.15"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def _srdf(tmp_path, pairs) -> str:
    body = "".join(f'<disable_collisions link1="{a}" link2="{b}" reason="Never"/>' for a, b in pairs)
    path = tmp_path / "two.srdf"
    path.write_text(f'<?xml version="1.0"?><robot name="two">{body}</robot>')
    return str(path)


def test_srdf_pairs_become_filter_pairs(tmp_path):
    b = jaxart.ModelBuilder()
    res = b.add_urdf(TWO_LINKS, srdf=_srdf(tmp_path, [("a", "c")]))
    sa, sc = res["shapes"]["a"][0], res["shapes"]["c"][0]
    assert (min(sa, sc), max(sa, sc)) in b.shape_collision_filter_pairs
    assert res["srdf"]["disabled_links"] == [("a", "c")] and res["srdf"]["filtered_shape_pairs"] == 1
    plain = jaxart.ModelBuilder()
    plain.add_urdf(TWO_LINKS)
    assert len(b.shape_collision_filter_pairs) == len(plain.shape_collision_filter_pairs) + 1


def test_srdf_errors_name_the_problem(tmp_path):
    b = jaxart.ModelBuilder()
    with pytest.raises(ValueError, match="'no_such_link'"):
        b.add_urdf(TWO_LINKS, srdf=_srdf(tmp_path, [("a", "no_such_link")]))
    assert b.body_count == 0  # checked before anything was added
    with pytest.raises(ValueError, match="XML string"):
        b.add_urdf(TWO_LINKS, srdf=True)
    with pytest.raises(ValueError, match="does not exist"):
        b.add_urdf(TWO_LINKS, srdf=str(tmp_path / "missing.srdf"))
    bad = tmp_path / "bad.srdf"
    bad.write_text("<robot><disable_collisions link1='a'/></robot>")
    with pytest.raises(ValueError, match="link1 and link2"):
        b.add_urdf(TWO_LINKS, srdf=str(bad))
    with pytest.raises(TypeError, match="srdf"):
        b.add_urdf(TWO_LINKS, srdf=3)


def _panda(srdf):
    """(model, import result, home joint_q) of example-robot-data's Panda, home = the SRDF's default state."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data (part of the test extra) is not installed")
    share = os.path.abspath(str(dist.locate_file("cmeel.prefix/share")))
    pkg = os.path.join(share, "example-robot-data", "robots", "panda_description")
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = b.add_urdf(os.path.join(pkg, "urdf", "panda.urdf"), package_dirs=[share], srdf=srdf)
    model = b.finalize(dtype=jnp.float64)
    q = np.array(model.joint_q)
    state = ET.parse(os.path.join(pkg, "srdf", "panda.srdf")).getroot().find("group_state[@name='default']")
    for j in state.iter("joint"):
        q[int(model.joint_q_start[res["joints"][j.get("name")]])] = float(j.get("value"))
    return model, res, q


def test_panda_srdf_is_found_next_to_the_urdf():
    """``srdf=True``: every colliding shape pair of every disabled link pair is filtered (no compile)."""
    model, res, _ = _panda(True)
    assert res["srdf"]["path"].endswith(os.path.join("panda_description", "srdf", "panda.srdf"))
    filtered = {tuple(p) for p in np.asarray(model.topology.shape_collision_filter_pairs).reshape(-1, 2).tolist()}
    links = res["srdf"]["disabled_links"]
    assert len(links) > 20 and res["srdf"]["filtered_shape_pairs"] > 0
    top = model.topology
    colliding = lambda link: [s for s in res["shapes"][link] if int(top.shape_flags[s]) & 2]  # noqa: E731
    expected = {(min(sa, sb), max(sa, sb)) for a, b in links for sa in colliding(a) for sb in colliding(b)
                if top.shape_body[sa] != top.shape_body[sb]}
    assert expected and expected <= filtered
    assert len(expected) == res["srdf"]["filtered_shape_pairs"]


def _penetrating_self_contacts(model, q):
    st = model.state()
    st = jaxart.eval_fk(model, jnp.asarray(q), st.joint_qd, st)
    c = jax.jit(lambda s: col.collide(model, s))(st)
    pen = np.asarray(c.active) & (np.asarray(c.separation) < 0.0)
    return {(int(a), int(b)) for a, b in zip(np.asarray(c.shape_a)[pen], np.asarray(c.shape_b)[pen], strict=True)}


@pytest.mark.slow
def test_panda_home_pose_has_no_self_contact_with_its_srdf():
    model, _, q = _panda(None)
    assert _penetrating_self_contacts(model, q)  # the meshes of neighbouring links overlap at home
    model, _, q = _panda(True)
    assert not _penetrating_self_contacts(model, q)


def _energy(model, s, q_ref):
    """Kinetic + gravitational + drive-spring energy [J] (gravity along −Z; ``target_ke`` as a torsion spring)."""
    mass_matrix = jaxart.eval_mass_matrix(model, s)[0]
    com = s.body_q[:, :3] + jax.vmap(quat_rotate)(s.body_q[:, 3:], model.body_com)
    spring = 0.5 * jnp.sum(model.joint_target_ke * (s.joint_q - q_ref) ** 2)
    return (0.5 * s.joint_qd @ mass_matrix @ s.joint_qd - model.gravity[2] * jnp.sum(model.body_mass * com[:, 2])
            + spring)


@pytest.mark.slow
def test_panda_holding_at_home_with_srdf_gains_no_energy():
    """0.5 s at 2 ms with stiff, damped drives holding the home pose and self-collision on: energy never rises."""
    model, _, q = _panda(True)
    dof = model.joint_dof_count
    model = model.replace(joint_target_q=jnp.asarray(q), joint_target_ke=jnp.full(dof, 100.0),
                          joint_target_kd=jnp.full(dof, 10.0))
    solver = jaxart.solvers.SolverFeatherstone(model)
    st = model.state()
    st = jaxart.eval_fk(model, jnp.asarray(q), st.joint_qd, st)
    q_ref = jnp.asarray(q)

    @jax.jit
    def run(s):
        def step(s, _):
            c = col.collide(model, s)
            s = solver.step(s, None, c, 0.002)
            return s, (_energy(model, s, q_ref), jnp.sum(c.active & (c.separation < 0.0)))
        return jax.lax.scan(step, s, None, length=250)

    final, (energy, n_pen) = run(st)
    energy = np.asarray(energy)
    assert np.all(np.isfinite(np.asarray(final.body_q))) and np.all(np.isfinite(energy))
    assert int(np.max(np.asarray(n_pen))) == 0
    assert energy.max() <= float(_energy(model, st, q_ref)) + 1e-6
    assert np.all(np.diff(energy) <= 1e-6)
