"""Scale out: shard the world axis of batched simulations over all local devices.

Worlds are independent, so each device simulates its own slice of the batch with no communication:
the batched function runs under :func:`jax.shard_map` on a one-dimensional device mesh, and its
inputs and outputs are ``NamedSharding(mesh, P("worlds"))`` arrays::

    mesh = jaxart.sharding.world_mesh()                       # all local devices (GPUs, TPU cores, ...)
    final, traj = jaxart.sharding.sharded_rollout(solver, states, controls, dt=1e-3)   # states: (W, ...)

On CPU, ``XLA_FLAGS=--xla_force_host_platform_device_count=4`` (set before JAX starts) splits the
host into 4 devices. Across machines use JAX's own runtime: call ``jax.distributed.initialize()``
on every host and build the mesh from ``jax.devices()`` (all hosts' devices) instead of
``jax.local_devices()``; each process then feeds its local shard (see the README).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from jaxart.rollout import rollout

AXIS = "worlds"


def world_mesh(devices: Sequence | None = None, *, axis_name: str = AXIS) -> Mesh:
    """A one-dimensional mesh over ``devices`` (default: ``jax.local_devices()``).

    Raises:
        ValueError: An empty device list.
    """
    devices = list(jax.local_devices() if devices is None else devices)
    if not devices:
        raise ValueError("world_mesh: devices must not be empty")
    return Mesh(np.asarray(devices), (axis_name,))


def _check_worlds(tree, mesh: Mesh, what: str) -> int:
    n = mesh.devices.size
    sizes = {leaf.shape[0] if np.ndim(leaf) else None for leaf in jax.tree_util.tree_leaves(tree)}
    if len(sizes) != 1 or None in sizes:
        raise ValueError(f"{what}: every leaf needs the same leading world axis, "
                         f"got leading sizes {sorted(map(str, sizes))}")
    worlds = sizes.pop()
    if worlds % n:
        raise ValueError(f"{what}: world count {worlds} is not divisible by the {n} devices of the mesh "
                         "(pad the batch or pass a smaller mesh)")
    return worlds


def shard_worlds(tree, *, mesh: Mesh | None = None):
    """Place every leaf of ``tree`` (leading world axis) split across the mesh's devices.

    Raises:
        ValueError: Leaves disagree on the world count, or it is not divisible by the device count.
    """
    mesh = world_mesh() if mesh is None else mesh
    _check_worlds(tree, mesh, "shard_worlds")
    sharding = NamedSharding(mesh, P(mesh.axis_names[0]))
    return jax.device_put(tree, sharding)


def sharded_vmap(fn: Callable, *, mesh: Mesh | None = None) -> Callable:
    """``jax.vmap(fn)`` over a leading world axis, each device running its own slice (``shard_map``).

    All positional arguments of the returned function are batched along axis 0 (close over shared
    values such as the solver); outputs are batched along axis 0 and sharded like the inputs.
    """
    mesh = world_mesh() if mesh is None else mesh
    spec = P(mesh.axis_names[0])
    # check_vma=False: jaxart's kernels start loop carries from fresh (device-invariant) zeros, which
    # shard_map's varying-axis type check rejects although each device only touches its own worlds.
    mapped = jax.shard_map(jax.vmap(fn), mesh=mesh, in_specs=spec, out_specs=spec, check_vma=False)

    @jax.jit
    def run(*args):
        return mapped(*args)

    def call(*args):
        _check_worlds(args, mesh, "sharded_vmap")
        return run(*shard_worlds(args, mesh=mesh))

    return call


def sharded_rollout(step_fn, states, controls=None, *, mesh: Mesh | None = None, dt=None, length: int | None = None,
                    **rollout_kwargs):
    """Batched :func:`jaxart.rollout` with the world axis sharded over the mesh.

    Args:
        step_fn: A solver or step callable (as for :func:`jaxart.rollout`), shared by all worlds.
        states: Initial states with a leading world axis ``(W, ...)``.
        controls: Per-world control sequences ``(W, T, ...)``, or ``None`` (then pass ``length``).
        mesh: Device mesh (default: all local devices).
        dt, length, rollout_kwargs: As for :func:`jaxart.rollout` (``remat``, ``output_fn``, ...).

    Returns:
        ``(final_states, outputs)`` with leading world axes, sharded across the devices.

    Raises:
        ValueError: The world count is not divisible by the number of devices.
    """
    if controls is None:
        fn = sharded_vmap(lambda s: rollout(step_fn, s, None, dt=dt, length=length, **rollout_kwargs), mesh=mesh)
        return fn(states)
    fn = sharded_vmap(lambda s, c: rollout(step_fn, s, c, dt=dt, length=length, **rollout_kwargs), mesh=mesh)
    return fn(states, controls)
