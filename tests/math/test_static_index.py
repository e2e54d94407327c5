"""jaxart.math.static_index: static selections equal numpy-style indexing, HLO included."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxart.math.static_index import item, take_rows

X = jnp.arange(60.0).reshape(4, 5, 3)


@pytest.mark.parametrize("idx", [np.array([2, 0, 1]), np.array([[2, 0], [1, 3]]), np.arange(4), np.array([3, 3]),
                                 np.zeros(0, np.int64)], ids=["perm", "2d", "all", "repeat", "empty"])
def test_take_rows_matches_indexing_values_gradient_and_gather(idx):
    np.testing.assert_array_equal(take_rows(X, idx), X[idx])
    np.testing.assert_array_equal(take_rows(X, idx, axis=1), X[:, idx])
    g = jax.grad(lambda x: jnp.sum(take_rows(x, idx) ** 2))(X)
    np.testing.assert_array_equal(g, jax.grad(lambda x: jnp.sum(x[idx] ** 2))(X))
    if idx.size:  # the same gather as x[idx] (XLA sees identical HLO; no runtime change)
        ours = [e.params for e in jax.make_jaxpr(lambda x: take_rows(x, idx))(X).eqns if e.primitive.name == "gather"]
        ref = [e.params for e in jax.make_jaxpr(lambda x: x[idx])(X).eqns if e.primitive.name == "gather"]
        assert ours == ref


def test_take_rows_keeps_numpy_static_and_validates():
    a = np.arange(12).reshape(4, 3)
    out = take_rows(a, np.array([1, 1, 0]))
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, a[[1, 1, 0]])
    with pytest.raises(IndexError, match=r"\[0, 4\)"):
        take_rows(X, np.array([0, 4]))
    with pytest.raises(IndexError):
        take_rows(X, np.array([-1]))
    with pytest.raises(TypeError, match="integer"):
        take_rows(X, np.array([0.5]))


def test_item_matches_indexing():
    np.testing.assert_array_equal(item(X, 2), X[2])
    np.testing.assert_array_equal(item(X, -1), X[-1])
    np.testing.assert_array_equal(item(X, 4, 1), X[:, 4])
    assert isinstance(item(np.ones((2, 3)), 1, 1), np.ndarray)
    with pytest.raises(IndexError, match="out of range"):
        item(X, 4)
