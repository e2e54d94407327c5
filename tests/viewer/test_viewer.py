"""jaxart.viewer: offscreen frames of trajectories (MUJOCO_GL=egl, set in conftest) and video files."""

import os
import subprocess
import sys

import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart import viewer
from jaxart.assets import asset_path

imageio = pytest.importorskip("imageio.v3")


@pytest.fixture(scope="module")
def pendulum():
    b = jaxart.ModelBuilder()
    b.add_mjcf(asset_path("pendulum"))
    return b.finalize()


@pytest.fixture(scope="module")
def ball():
    """One free sphere, no floor: on the black background every lit pixel belongs to the ball."""
    b = jaxart.ModelBuilder()
    body = b.add_body(xform=((0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 1.0)), mass=1.0)
    b.add_shape_sphere(body, radius=0.1)
    return b.finalize()


def _pendulum_traj(model, angles):
    states = [jaxart.eval_fk(model, jnp.asarray([a], model.joint_q.dtype), model.joint_qd) for a in angles]
    return states


def test_frames_shape_dtype_and_motion(pendulum):
    states = _pendulum_traj(pendulum, [0.0, 0.0, 1.5])
    frames = viewer.render(pendulum, states, width=96, height=64)
    assert frames.shape == (3, 64, 96, 3) and frames.dtype == np.uint8
    assert frames.max() > 0
    np.testing.assert_array_equal(frames[0], frames[1])  # same pose, same picture
    assert np.mean(frames[2] != frames[0]) > 0.01  # the rod moved


def _centroid(img):
    mask = img.max(axis=-1) > 40
    assert mask.sum() > 10, "ball not visible"
    rows, cols = np.nonzero(mask)
    return rows.mean(), cols.mean()


def test_tracking_keeps_body_centred(ball):
    xs = np.array([0.0, 0.6, 1.2, -0.8])
    body_q = np.zeros((len(xs), 1, 7))
    body_q[:, 0, 0] = xs
    body_q[:, 0, 2] = 1.0
    body_q[:, 0, 6] = 1.0
    h, w = 60, 80
    with viewer.Renderer(ball, width=w, height=h) as r:
        tracked = r.render(body_q, track_body=0, distance=3.0)
        fixed = r.render(body_q, lookat=(0.0, 0.0, 1.0), distance=3.0)
    for img in tracked:
        cy, cx = _centroid(img)
        assert abs(cy - (h - 1) / 2) < 2.0 and abs(cx - (w - 1) / 2) < 2.0
    # A fixed camera sees the ball leave the centre (sanity check of the test itself).
    assert abs(_centroid(fixed[2])[1] - (w - 1) / 2) > 10


def test_batched_trajectory_needs_world(ball):
    body_q = np.zeros((2, 3, 1, 7))
    body_q[..., 2] = 1.0
    body_q[..., 6] = 1.0
    body_q[:, 1, 0, 0] = 0.5
    with viewer.Renderer(ball, width=32, height=24) as r:
        with pytest.raises(ValueError, match="world"):
            r.render(body_q)
        a = r.render(body_q, world=1, lookat=(0, 0, 1), distance=3.0)
        b = r.render(body_q[:, 1], lookat=(0, 0, 1), distance=3.0)
        np.testing.assert_array_equal(a, b)
        with pytest.raises(ValueError, match="shape"):
            r.render(np.zeros((2, 5, 7)))
        with pytest.raises(ValueError, match="track_body"):
            r.render(body_q[:, 0], track_body=3)
        with pytest.raises(TypeError, match="trajectory"):
            r.render("not a trajectory")
    with pytest.raises(ValueError, match="width"):
        viewer.Renderer(ball, width=0)


@pytest.mark.parametrize("suffix", [".gif", ".mp4"])
def test_save_video_round_trip(tmp_path, suffix):
    frames = np.zeros((4, 32, 48, 3), np.uint8)
    frames[:, :, :, 0] = np.arange(4)[:, None, None] * 60
    path = viewer.save_video(frames, tmp_path / f"clip{suffix}", fps=10)
    back = imageio.imread(path, index=None) if suffix == ".gif" else imageio.imread(path, plugin="FFMPEG")
    assert back.shape[0] == 4 and back.shape[1:3] == (32, 48)
    assert abs(float(back[3, ..., 0].mean()) - 180.0) < 8.0


def test_save_video_validates(tmp_path):
    with pytest.raises(ValueError, match="suffix|end in"):
        viewer.save_video(np.zeros((1, 4, 4, 3), np.uint8), tmp_path / "x.avi")
    with pytest.raises(ValueError, match="uint8"):
        viewer.save_video(np.zeros((1, 4, 4, 3)), tmp_path / "x.gif")
    with pytest.raises(ValueError, match="shape"):
        viewer.save_video(np.zeros((4, 4, 3), np.uint8), tmp_path / "x.gif")


def test_no_gl_context_names_mujoco_gl(tmp_path):
    code = ("import jaxart\nfrom jaxart import viewer\nb = jaxart.ModelBuilder()\n"
            "i = b.add_body(mass=1.0)\nb.add_shape_sphere(i, radius=0.1)\n"
            "try:\n    viewer.Renderer(b.finalize())\nexcept RuntimeError as e:\n    print('ERR', e)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["MUJOCO_GL"] = "glfw"  # needs a display: none here
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert "ERR" in out.stdout and "MUJOCO_GL" in out.stdout, out.stdout + out.stderr


def test_geom_poses_match_mujoco_kinematics():
    """Geoms placed from jaxart body poses coincide with MuJoCo's own kinematics of the same state."""
    import jax

    b = jaxart.ModelBuilder()
    b.add_mjcf(asset_path("quadruped"))
    model = b.finalize()
    solver = jaxart.solvers.SolverMuJoCo(model)
    q = np.asarray(model.joint_q).copy()
    q[:3] += (0.3, -0.2, 0.1)
    q[3:7] = (0.1, -0.2, 0.3, 0.9) / np.linalg.norm((0.1, -0.2, 0.3, 0.9))
    q[7:] = np.linspace(-0.6, 0.6, 12)
    state = jax.jit(jaxart.eval_fk)(model, jnp.asarray(q, model.joint_q.dtype), model.joint_qd)
    scene = viewer.Renderer(model, width=32, height=24, solver=solver)
    pos, mat = scene.scene.geom_poses(np.asarray(state.body_q)[None])
    scene.close()
    d = solver.to_mj_data(state)
    np.testing.assert_allclose(pos[0], d.geom_xpos, atol=2e-5)
    np.testing.assert_allclose(mat[0], d.geom_xmat, atol=2e-5)
