"""Tests for the bundled MJCF models in ``jaxart.assets``."""

from __future__ import annotations

import os

import numpy as np
import pytest

from jaxart.assets import ASSET_NAMES, asset_path

mujoco = pytest.importorskip("mujoco")

# name: (nbody incl. world, njnt, nq, nv, nu)
EXPECTED_SIZES: dict[str, tuple[int, int, int, int, int]] = {
    "pendulum": (2, 1, 1, 1, 1),
    "double_pendulum": (3, 2, 2, 2, 2),
    "arm7": (9, 7, 7, 7, 7),
    "quadruped": (14, 13, 19, 18, 12),
    "humanoid": (13, 21, 27, 26, 20),
}


def test_asset_names_cover_expected() -> None:
    assert set(ASSET_NAMES) == set(EXPECTED_SIZES)


@pytest.mark.parametrize("name", ASSET_NAMES)
def test_asset_path_exists(name: str) -> None:
    path = asset_path(name)
    assert os.path.isabs(path)
    assert os.path.isfile(path)
    assert path.endswith(f"{name}.xml")


def test_asset_path_unknown_name() -> None:
    with pytest.raises(ValueError, match="no_such_model"):
        asset_path("no_such_model")


@pytest.mark.parametrize("name", ASSET_NAMES)
def test_asset_compiles_with_expected_sizes(name: str) -> None:
    model = mujoco.MjModel.from_xml_path(asset_path(name))
    sizes = (model.nbody, model.njnt, model.nq, model.nv, model.nu)
    assert sizes == EXPECTED_SIZES[name]


@pytest.mark.parametrize("name", ASSET_NAMES)
def test_asset_names_are_unique(name: str) -> None:
    model = mujoco.MjModel.from_xml_path(asset_path(name))
    bodies = [model.body(i).name for i in range(1, model.nbody)]
    joints = [model.joint(i).name for i in range(model.njnt)]
    actuators = [model.actuator(i).name for i in range(model.nu)]
    labels = bodies + joints + actuators
    assert all(labels)
    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize("name", ASSET_NAMES)
def test_asset_simulates_finite(name: str) -> None:
    model = mujoco.MjModel.from_xml_path(asset_path(name))
    data = mujoco.MjData(model)
    for _ in range(200):
        mujoco.mj_step(model, data)
    assert np.all(np.isfinite(data.qpos))
    assert np.all(np.isfinite(data.qvel))
    assert not np.any(data.warning.number)


def test_pendulum_closed_form_inertia() -> None:
    model = mujoco.MjModel.from_xml_path(asset_path("pendulum"))
    data = mujoco.MjData(model)
    data.qpos[0] = 0.3
    mujoco.mj_forward(model, data)
    # Uniform 1 m, 1 kg rod about its end: I = 1/3, gravity torque -m g L/2 sin(q).
    expected = -(9.81 * 0.5 * np.sin(0.3)) / (1.0 / 3.0)
    np.testing.assert_allclose(data.qacc[0], expected, rtol=1e-9)


def test_arm7_has_ee_site() -> None:
    model = mujoco.MjModel.from_xml_path(asset_path("arm7"))
    assert model.site("ee").id >= 0
