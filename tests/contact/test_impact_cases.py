"""The impact scenes' closed forms, their MJCF twin and MuJoCo C on it."""

import math

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from impact_cases import (  # noqa: E402
    MATERIALS,
    backspin_ball_model,
    box_mass,
    material_gains,
    mjcf_box_state,
    mujoco_box_stop_distance,
    rigid_ball_impact,
    rigid_ball_x,
    rigid_box_stop_distance,
    sliding_box_mjcf,
    sliding_box_model,
)

import jaxart  # noqa: E402


def test_rigid_closed_forms():
    assert rigid_box_stop_distance() == pytest.approx(0.4327, abs=1e-4)
    assert rigid_box_stop_distance(v0=0.3) == pytest.approx(0.3 * math.sqrt(2 * 0.05 / 9.81))  # stops at impact
    # a ball barely slipping ends the impact rolling; the friction impulse is then below the cone
    roll = rigid_ball_impact(1.0, -5.0)
    assert roll.rolling and roll.vx == pytest.approx(roll.wy * 0.1) and abs(roll.friction_impulse) < 0.5 * 0.99
    slide = rigid_ball_impact(2.0, -30.0)
    assert not slide.rolling and slide.friction_impulse == pytest.approx(-0.5 * slide.normal_impulse)
    # (5 vx + 2 R wy)/7 is conserved by friction: the late rolling speed does not depend on the impact
    t1, t2 = 2.0, 3.0
    v_late = (rigid_ball_x(t2, 2.0, -30.0) - rigid_ball_x(t1, 2.0, -30.0)) / (t2 - t1)
    assert v_late == pytest.approx((5 * 2.0 + 2 * 0.1 * -30.0) / 7)


@pytest.mark.parametrize("name", list(MATERIALS))
def test_mjcf_twin_matches_builder_scene(name):
    dt = 0.016
    b = jaxart.ModelBuilder()
    b.add_mjcf(sliding_box_mjcf(name, dt))
    imported = b.finalize()
    model, state = sliding_box_model(name, dt)
    np.testing.assert_allclose(imported.body_mass, [box_mass()])
    np.testing.assert_allclose(imported.shape_material_ke, model.shape_material_ke, rtol=1e-6)
    np.testing.assert_allclose(imported.shape_material_kd, model.shape_material_kd, rtol=1e-6)
    np.testing.assert_allclose(imported.shape_material_mu, model.shape_material_mu)
    np.testing.assert_allclose(mjcf_box_state(imported).body_qd, state.body_qd)
    np.testing.assert_allclose(mjcf_box_state(imported).body_q, state.body_q)
    assert material_gains("stiff", box_mass(), dt)[0] == pytest.approx(1.0e6)


def test_mujoco_c_stops_near_rigid_coulomb():
    for dt in (0.002, 0.005):
        assert mujoco_box_stop_distance("mjcf_default", dt) == pytest.approx(rigid_box_stop_distance(), rel=0.015)


def test_ball_scene_starts_with_backspin():
    model, state = backspin_ball_model(2.0, -30.0)
    np.testing.assert_allclose(state.body_qd[0], [2.0, 0.0, 0.0, 0.0, -30.0, 0.0])
    assert float(state.body_q[0, 2]) == pytest.approx(0.15)
