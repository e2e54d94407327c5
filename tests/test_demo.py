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
