"""The demo's reaching optimisation converges (short run)."""

from jaxart.demo import reach


def test_reach_demo_converges():
    res = reach.run(steps=60)
    assert res["loss"][-1] < 0.05 * res["loss"][0]
    assert res["distance"] < 0.05
