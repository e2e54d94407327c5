"""``jaxart.fast_compile_options``: XLA:CPU options for shorter compilation, same values."""

import jax
import numpy as np
import pytest

import jaxart


def test_fast_compile_options_compile_the_same_fk_values():
    builder = jaxart.ModelBuilder()
    builder.add_mjcf(jaxart.assets.asset_path("double_pendulum"))
    model = builder.finalize()
    q = model.joint_q + 0.3

    def fk(x):
        return jaxart.eval_fk(model, x, model.joint_qd + 0.7).body_qd

    ref = np.asarray(jax.jit(fk)(q))
    for optimize_code in (True, False):
        opts = jaxart.fast_compile_options(optimize_code=optimize_code)
        assert opts["xla_cpu_use_fusion_emitters"] is False
        assert ("xla_backend_optimization_level" in opts) is not optimize_code
        np.testing.assert_allclose(np.asarray(jax.jit(fk, compiler_options=opts)(q)), ref, rtol=1e-12, atol=1e-12)


def test_fast_compile_options_reject_a_non_bool():
    with pytest.raises(TypeError, match="optimize_code"):
        jaxart.fast_compile_options(optimize_code=1)
