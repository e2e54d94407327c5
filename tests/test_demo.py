"""The demo's reaching optimisation converges (short run)."""

from jaxart.demo import reach


def test_reach_demo_converges():
    res = reach.run(steps=60)
    assert res["loss"][-1] < 0.05 * res["loss"][0]
    assert res["distance"] < 0.05


def test_swingup_demo_reduces_cost():
    from jaxart.demo import swingup

    res = swingup.run(iters=40, steps=120, u_max=6.0)
    assert res["cost"][-1] < 0.2 * res["cost"][0]
    assert abs(res["q"][-1] - 3.14159) < 1.0


def test_contact_scene_renders():
    """The quadruped trot stays upright on the floor and renders (MUJOCO_GL=egl from conftest)."""
    from jaxart.demo import scene

    res = scene.run(seconds=0.4, fps=10, width=64, height=48)
    assert res["render_error"] is None
    assert res["frames"].shape == (4, 48, 64, 3)
    assert res["height"].min() > 0.25  # standing, feet on the floor
    assert (res["frames"][0] != res["frames"][-1]).any()


def test_demo_main_writes_plot_and_gif(tmp_path, monkeypatch):
    """`python -m jaxart.demo --quick` writes the plot and the GIF."""
    import jaxart.demo.__main__ as demo_main
    from jaxart.demo import reach, scene, swingup

    # keep the test short: the optimisations are covered above
    monkeypatch.setattr(reach, "run", lambda steps: {"loss": [1.0, 0.5]})
    monkeypatch.setattr(swingup, "run", lambda iters: {"cost": [1.0, 0.5], "q": [0.0, 1.0], "u": [0.0, 1.0],
                                                       "dt": 0.01})
    real = scene.run
    monkeypatch.setattr(scene, "run", lambda **kw: real(seconds=0.2, fps=10, width=64, height=48))
    demo_main.main(["--quick", "--out", str(tmp_path / "d.png"), "--gif", str(tmp_path / "d.gif")])
    assert (tmp_path / "d.png").stat().st_size > 1000
    assert (tmp_path / "d.gif").stat().st_size > 100
