"""MJCF ``<option><flag>`` import, URDF visual faults, and the importers' contact-stiffness hint."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest

import jaxart
from jaxart.collision import candidate_pairs

jax.config.update("jax_enable_x64", True)

# A two-link pendulum hanging over a floor: limits, passive terms, an explicit pair with the floor, a joint
# equality and two actuators (a position servo with a ctrlrange, a motor whose ctrlrange bounds its effort).
PENDULUM = """
<mujoco>
  <option><flag {flags}/></option>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <body name="a" pos="0 0 1">
      <joint name="h" axis="0 1 0" range="-30 30" damping="2" stiffness="3" frictionloss="0.5"/>
      <geom name="ga" type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>
      <body name="b" pos="0 0 -0.5">
        <joint name="h2" axis="0 1 0" range="-30 30"/>
        <geom name="gb" type="sphere" size="0.1" pos="0 0 -0.3"/>
      </body>
    </body>
  </worldbody>
  <contact><pair geom1="gb" geom2="floor"/></contact>
  <equality><joint joint1="h" joint2="h2"/></equality>
  <actuator>
    <position joint="h" kp="10" ctrlrange="-1 1" ctrllimited="true"/>
    <motor joint="h2" gear="2" ctrlrange="-3 3" ctrllimited="true"/>
  </actuator>
</mujoco>
"""


def _import(flags: str = "", builder=None, **kw):
    b = builder or jaxart.ModelBuilder()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = b.add_mjcf(PENDULUM.format(flags=flags), **kw)
    return b, b.finalize(), r, [str(w.message) for w in rec]


def test_default_flags_import_everything():
    b, m, r, msgs = _import()
    assert msgs == [] and r["unsupported"] == []
    assert b.gravity == pytest.approx(-9.81)
    assert len(candidate_pairs(m.topology)) == 2  # floor-capsule (groups), floor-sphere (groups + explicit)
    np.testing.assert_allclose(np.asarray(m.joint_limit_upper), np.radians([30.0, 30.0]))
    assert np.asarray(m.equality_constraint_enabled).tolist() == [True]
    np.testing.assert_allclose(np.asarray(m.joint_target_ke), [10.0, 0.0])
    np.testing.assert_allclose(np.asarray(m.joint_effort_limit), [1e6, 6.0])  # motor: |gear| · max|ctrlrange|
    np.testing.assert_allclose(np.asarray(m.joint_damping), [2.0, 0.0])
    np.testing.assert_allclose(np.asarray(m.joint_stiffness), [3.0, 0.0])
    np.testing.assert_allclose(np.asarray(m.joint_friction), [0.5, 0.0])


def test_gravity_and_contact_disabled():
    b, m, r, msgs = _import('gravity="disable" contact="disable"')
    assert msgs == []
    assert b.gravity == 0.0 and float(m.gravity[2]) == 0.0
    assert candidate_pairs(m.topology).shape == (0, 2)  # the explicit <pair> is off too
    assert len(b.shape_explicit_contact_pairs) == 0
    assert r["mj_model"].opt.disableflags  # MuJoCo's own model is returned unchanged
    assert float(r["mj_model"].opt.gravity[2]) == pytest.approx(-9.81)


def test_limit_and_equality_disabled():
    _, m, _, msgs = _import('limit="disable" equality="disable"')
    assert msgs == []
    np.testing.assert_allclose(np.asarray(m.joint_limit_lower), -1e10)
    np.testing.assert_allclose(np.asarray(m.joint_limit_upper), 1e10)
    assert np.asarray(m.equality_constraint_enabled).tolist() == [False]
    assert len(candidate_pairs(m.topology)) == 2


def test_constraint_disabled_turns_off_contacts_limits_equalities_frictionloss():
    _, m, _, _ = _import('constraint="disable"')
    assert candidate_pairs(m.topology).shape == (0, 2)
    np.testing.assert_allclose(np.asarray(m.joint_limit_upper), 1e10)
    assert np.asarray(m.equality_constraint_enabled).tolist() == [False]
    np.testing.assert_allclose(np.asarray(m.joint_friction), 0.0)
    np.testing.assert_allclose(np.asarray(m.joint_damping), [2.0, 0.0])  # passive terms stay


def test_passive_terms_actuation_and_clampctrl_disabled():
    _, m, _, _ = _import('spring="disable" damper="disable" frictionloss="disable" actuation="disable"')
    for name in ("joint_stiffness", "joint_damping", "joint_friction", "joint_target_ke", "joint_target_kd"):
        np.testing.assert_allclose(np.asarray(getattr(m, name)), 0.0, err_msg=name)
    assert np.asarray(m.joint_target_mode).tolist() == [int(jaxart.JointTargetMode.NONE)] * 2
    _, m, _, _ = _import('clampctrl="disable"')
    np.testing.assert_allclose(np.asarray(m.joint_effort_limit), 1e6)  # ctrlrange no longer bounds the motor


def test_tendon_passive_terms_limits_and_drives_follow_the_flags():
    xml = """<mujoco><option><flag {flags}/></option><worldbody>
      <body><joint name="a" axis="0 1 0"/><geom size=".1"/>
        <body pos="0 0 -.3"><joint name="b" axis="0 1 0"/><geom size=".1"/></body></body></worldbody>
      <tendon><fixed name="t" stiffness="5" damping="2" frictionloss="1" limited="true" range="-1 1">
        <joint joint="a" coef="1"/><joint joint="b" coef="-1"/></fixed></tendon>
      <actuator><position tendon="t" kp="7"/></actuator></mujoco>"""
    fields = ("tendon_stiffness", "tendon_damping", "tendon_frictionloss", "tendon_target_ke", "tendon_limit_upper")
    values = {}
    for flags in ("", 'spring="disable" damper="disable" frictionloss="disable" limit="disable" actuation="disable"'):
        b = jaxart.ModelBuilder()
        b.add_mjcf(xml.format(flags=flags))
        m = b.finalize()
        values[flags] = [float(np.asarray(getattr(m, f))[0]) for f in fields]
    assert values[""] == pytest.approx([5.0, 2.0, 1.0, 7.0, 1.0])
    assert list(values.values())[1] == pytest.approx([0.0, 0.0, 0.0, 0.0, 1e10])


def test_override_contact_parameters_and_unhonoured_flags_reported():
    flags = 'override="enable" sleep="enable" warmstart="disable" energy="enable"'
    xml = PENDULUM.replace("<option>", '<option o_margin="0.01" o_solref="0.05 1" o_friction="0.4 0.4 0.01 1e-4 1e-4">')
    b = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match='sleep="enable" not honoured'):
        r = b.add_mjcf(xml.format(flags=flags))
    assert len(r["unsupported"]) == 1  # warmstart / energy have no physics to import: not reported
    m = b.finalize()
    np.testing.assert_allclose(np.asarray(m.shape_material_mu), 0.4)
    np.testing.assert_allclose(np.asarray(m.shape_margin), 0.01)
    ke = np.asarray(m.shape_material_ke)
    np.testing.assert_allclose(ke[1:], ke[1] * np.ones(2))  # one solref, one tree mass for the pendulum geoms
    with pytest.raises(ValueError, match="sleep"):
        jaxart.ModelBuilder().add_mjcf(xml.format(flags=flags), strict=True)


def test_gravity_disabled_pendulum_stays_put():
    """A horizontal pendulum (its centre of mass 0.25 m off the hinge) stays put with gravity disabled.

    With gravity it would fall (|q| ≈ 0.57 rad after these 0.2 s with SolverFeatherstone); one rollout
    only, to keep the compile cheap.
    """
    xml = """<mujoco><option><flag gravity="disable"/></option><worldbody><body pos="0 0 1">
             <joint name="h" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
             </body></worldbody></mujoco>"""
    b = jaxart.ModelBuilder()
    b.add_mjcf(xml)
    model = b.finalize()
    np.testing.assert_allclose(np.asarray(model.gravity), 0.0)
    final, _ = jaxart.rollout(jaxart.solvers.SolverFeatherstone(model), model.state(), dt=1e-2, length=20)
    np.testing.assert_allclose(np.asarray(final.joint_q), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(final.joint_qd), 0.0, atol=1e-12)


def _robot(link_body: str, *, mass: float = 1.0) -> str:
    """A two-link URDF: ``base`` (a 0.1 m tall box centred on the root origin) and ``toe`` holding ``link_body``."""
    inertial = f'<inertial><mass value="{mass}"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>'
    return (f'<robot name="r"><link name="base">{inertial}</inertial><collision><geometry><box size="0.4 0.2 0.1"/>'
            '</geometry></collision></link>'
            f'<link name="toe">{inertial}</inertial>{link_body}</link>'
            '<joint name="j" type="revolute"><parent link="base"/><child link="toe"/><origin xyz="0.3 0 0"/>'
            '<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')


GOOD_TOE = '<collision><geometry><sphere radius="0.02"/></geometry></collision>'


@pytest.mark.parametrize("visual, what", [
    ('<visual name="tip"><geometry><sphere radius="0"/></geometry></visual>', r"<visual> 'tip'.*sizes must be > 0"),
    ('<visual><geometry><mesh filename="gone.stl"/></geometry></visual>', r"<visual>.*'gone\.stl' not found"),
    ('<visual><geometry><mesh filename="BROKEN"/></geometry></visual>', r"<visual>.*(cannot load mesh|no triangles)"),
    ('<visual><geometry><sphere/></geometry></visual>', r"<visual>.*missing 'radius'"),
    ('<visual><geometry/></visual>', r"<visual> needs one <geometry>"),
])
def test_urdf_visual_fault_warns_and_skips_that_visual(tmp_path, visual, what):
    broken = tmp_path / "broken.stl"
    broken.write_text("solid nothing\nendsolid nothing\n")
    path = tmp_path / "r.urdf"
    path.write_text(_robot(GOOD_TOE + visual.replace("BROKEN", str(broken))))
    b = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match=r"link 'toe' " + what) as rec:
        out = b.add_urdf(str(path), floating=True)
    assert any("(visual skipped)" in str(w.message) for w in rec)
    assert len(out["shapes"]["toe"]) == 1 and b.shape_cfg[out["shapes"]["toe"][0]].has_shape_collision
    with pytest.raises(ValueError, match="toe"):
        jaxart.ModelBuilder().add_urdf(str(path), floating=True, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # hidden visuals are not read, so their faults are not reported
        jaxart.ModelBuilder().add_urdf(str(path), floating=True, hide_visuals=True)


def test_urdf_material_inside_visual_geometry_is_ignored():
    visual = ('<visual name="v"><geometry><sphere radius="0.03"/><material name="red"><color rgba="1 0 0 1"/>'
              '</material></geometry></visual>')
    b = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match=r"link 'toe' <visual 'v'>: <material> inside <geometry> ignored"):
        out = b.add_urdf(_robot(GOOD_TOE + visual), floating=True)
    collides = [b.shape_cfg[s].has_shape_collision for s in out["shapes"]["toe"]]
    assert collides == [True, False]  # the visual sphere is kept


@pytest.mark.parametrize("collision, what", [
    ('<collision><geometry><sphere radius="0"/></geometry></collision>', "sizes must be > 0"),
    ('<collision><geometry><sphere radius="0.1"/><material name="m"/></geometry></collision>', "exactly one shape"),
    ('<collision><geometry><mesh filename="gone.stl"/></geometry></collision>', "not found"),
])
def test_urdf_collision_fault_still_raises(collision, what):
    b = jaxart.ModelBuilder()
    with pytest.raises(ValueError, match=r"link 'toe' <collision>.*" + what):
        b.add_urdf(_robot(collision), floating=True)
    assert b.body_count == 0
    if "material" in collision:
        return  # a stray <material> in a visual's <geometry> is ignored (test above), even for a collider
    visual_as_collider = collision.replace("collision>", "visual>")
    with pytest.raises(ValueError, match=r"link 'toe' <visual>.*" + what):
        jaxart.ModelBuilder().add_urdf(_robot(visual_as_collider), floating=True, parse_visuals_as_colliders=True)


def test_contact_stiffness_hint_on_heavy_floating_robot_only():
    from jaxart.io.contact_hint import sinking_depth

    heavy = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match=r"default_shape_cfg\.ke") as rec:
        out = heavy.add_urdf(_robot(GOOD_TOE, mass=40.0), floating=True)
    assert len(rec) == 1 and "sink it about" in str(rec[0].message)
    # 2 x 40 kg resting on the lowest shape only: the box (bottom at -0.05 m; the toe sphere's is at -0.02 m)
    shapes = [s for ss in out["shapes"].values() for s in ss]
    depth, n, ke = sinking_depth(heavy, shapes, 80.0)
    assert ke == 2.5e3 and n == 1
    np.testing.assert_allclose(depth, 80.0 * 9.81 / 2.5e3)
    for kw in (dict(mass=0.05), dict(mass=40.0, fixed=True), dict(mass=40.0, stiff=True)):
        b = jaxart.ModelBuilder()
        if kw.get("stiff"):
            b.default_shape_cfg.ke = 1e6
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            b.add_urdf(_robot(GOOD_TOE, mass=kw["mass"]), floating=not kw.get("fixed"))
