"""Collision detection alone: working memory and time per world of jaxart's ``collide`` next to MJX's collision.

Usage: ``python benchmarks/collision.py [--models panda allegro_hand quadruped_hfield mjx_humanoid]
[--batches 1 1024] [--pair-capacity 4] [--max-gb 4] [--no-mjx] [--mjx-models ...] [--quick]``.

Models:

* ``panda``: the Franka Panda arm of ``example-robot-data`` (URDF, its nine STL collision meshes plus
  box fingertips) with self-collision on (Newton's default: every link pair but parent/child) over a
  ground plane;
* ``allegro_hand``: the Allegro right hand of ``example-robot-data`` with self-collision on (its URDF's
  collision geometry is boxes and spheres: the package ships no hand with collision meshes);
* ``quadruped_hfield``: the bundled quadruped with its floor replaced by a 32 × 32 height field;
* ``mjx_humanoid``: the humanoid of MuJoCo's MJX test data;
* ``hfield_cylinder``, ``hfield_ellipsoid``, ``hfield_mesh``, ``hfield_box``: one free shape of that type
  resting on a 16 × 16 height field (MJX collides height fields with boxes and meshes only).

For each model and batch size ``B``, ``jax.jit(jax.vmap(collide))`` over ``B`` copies of the initial
pose is lowered and compiled first; XLA's ``memory_analysis()`` of the executable gives the working
memory (temporaries + outputs + arguments). Above ``--max-gb`` the run is skipped and the estimate is
printed; otherwise the wall time per world is measured.
The jaxart rows are: the default pair capacities (small groups in full) and ``--pair-capacity`` for
every group (the broad phase culls to that many pairs per shape-type group); ``dropped`` is the
overflow of the benchmarked pose (overlapping pairs plus active contacts that did not fit, world 0).
MJX runs its collision stage only (``mujoco.mjx._src.collision_driver.collision`` after
``mjx.kinematics``) on the MJCF's ``MjModel`` or, for URDF models, on ``SolverMuJoCo``'s conversion of
the same jaxart model; the ratio columns divide jaxart's figure by MJX's (< 1: jaxart uses less). A
model whose collide raises ``NotImplementedError`` (e.g. height-field pairs before jaxart supports them)
is reported and skipped.
Compile times are trace + XLA; timings need a quiet machine.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import os
import re
import time
import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from common import compile_timed, mjx_humanoid_path, print_table, time_call

import jaxart
from jaxart.collision import collide_with_stats, default_capacity

ROBOTS = {"panda": "panda_description/urdf/panda.urdf",
          "allegro_hand": "allegro_hand_description/urdf/allegro_right_hand.urdf"}
GB = 1024.0**3
SLOW_CALL_S = 2.0  # calls slower than this are timed once instead of repeated


def _robot_share() -> str:
    share = str(importlib.metadata.distribution("example-robot-data").locate_file("cmeel.prefix/share"))
    return os.path.abspath(share)


def _urdf(name: str):
    """(jaxart model, MjModel of SolverMuJoCo's conversion or an error string): URDF robot over a ground plane."""
    share = _robot_share()
    b = jaxart.ModelBuilder()
    b.add_ground_plane()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.add_urdf(os.path.join(share, "example-robot-data", "robots", ROBOTS[name]), package_dirs=[share],
                   enable_self_collisions=True)
    model = b.finalize()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return model, jaxart.solvers.SolverMuJoCo(model).mj_model
    except Exception as e:  # noqa: BLE001 - MuJoCo's own URDF compile is the fallback, else the error is reported
        return model, _mujoco_urdf(os.path.join(share, "example-robot-data", "robots", ROBOTS[name]), share, e)


def _mujoco_urdf(path: str, share: str, why: Exception):
    """MuJoCo's own compile of a URDF (visuals dropped, inertias balanced) over a ground plane, or an error string.

    Used when ``SolverMuJoCo`` rejects the converted model (e.g. inertias violating the triangle
    inequality): MuJoCo's URDF defaults also collide every geom pair but parent/child.
    """
    xml = re.sub(r"<visual\b.*?</visual>", "", open(path).read(), flags=re.S)
    meshes = re.findall(r'filename="package://([^"]+)"', xml)
    meshdir = os.path.dirname(os.path.join(share, meshes[0])) if meshes else "."
    compiler = (f'<mujoco><compiler fusestatic="false" discardvisual="true" balanceinertia="true" '
                f'meshdir="{meshdir}"/></mujoco>')
    xml = re.sub(r"(<robot\b[^>]*>)", lambda mt: mt.group(1) + compiler, xml, count=1)
    try:
        spec = mujoco.MjSpec.from_string(xml)
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[10, 10, 0.1])
        return spec.compile()
    except Exception as e:  # noqa: BLE001 - reported in the table
        return f"SolverMuJoCo: {why}; MuJoCo's URDF compile: {e}"


def _mjcf(xml: str):
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.add_mjcf(xml)
    return b.finalize(), mujoco.MjModel.from_xml_string(xml)


def quadruped_hfield_xml(n: int = 32, seed: int = 0) -> str:
    """The bundled quadruped's MJCF with its floor plane replaced by an ``n × n`` rolling height field."""
    xml = open(jaxart.assets.asset_path("quadruped")).read()
    rng = np.random.default_rng(seed)
    u = np.linspace(0.0, 4.0 * np.pi, n)
    z = 0.5 + 0.25 * np.sin(u)[None, :] * np.cos(0.7 * u)[:, None] + 0.05 * rng.random((n, n))
    elev = " ".join(f"{v:.4f}" for v in z.ravel())
    asset = f'<asset><hfield name="terrain" nrow="{n}" ncol="{n}" size="5 5 0.1 0.05" elevation="{elev}"/></asset>'
    xml = re.sub(r'<geom name="floor" type="plane" size="[^"]*"', '<geom name="floor" type="hfield" hfield="terrain"',
                 xml, count=1)
    xml = re.sub(r'(<body name="torso" pos=")0 0 0.45"', r'\g<1>0 0 0.6"', xml, count=1)
    return xml.replace("<worldbody>", asset + "<worldbody>", 1)


#: Free shape of the small height-field models (MJCF geom attributes).
HFIELD_SHAPES = {"cylinder": 'type="cylinder" size="0.1 0.08"', "ellipsoid": 'type="ellipsoid" size="0.09 0.16 0.11"',
                 "mesh": 'type="mesh" mesh="m"', "box": 'type="box" size="0.12 0.1 0.09"'}


def hfield_shape_xml(shape: str, n: int = 16, seed: int = 0) -> str:
    """One free ``shape`` (``HFIELD_SHAPES``) slightly sunk into an ``n × n`` random height field."""
    rng = np.random.default_rng(seed)
    elev = " ".join(f"{v:.4f}" for v in rng.random(n * n))
    verts = "0.2 0 0  -0.1 0.17 0  -0.1 -0.17 0  0 0 0.2  0.05 0.02 -0.12  0.02 -0.05 -0.1"
    return (f'<mujoco><asset><mesh name="m" vertex="{verts}"/>'
            f'<hfield name="h" nrow="{n}" ncol="{n}" size="1 1 0.2 0.1" elevation="{elev}"/></asset>'
            '<worldbody><geom name="terrain" type="hfield" hfield="h"/>'
            f'<body name="b" pos="0.03 -0.02 0.22" euler="0.3 0.2 0.1"><freejoint/>'
            f'<geom name="g" {HFIELD_SHAPES[shape]}/></body></worldbody></mujoco>')


def load(name: str):
    """(jaxart model, MjModel or an error string) of a benchmark model."""
    if name in ROBOTS:
        return _urdf(name)
    if name == "quadruped_hfield":
        return _mjcf(quadruped_hfield_xml())
    if name.startswith("hfield_") and name[len("hfield_"):] in HFIELD_SHAPES:
        return _mjcf(hfield_shape_xml(name[len("hfield_"):]))
    if name == "mjx_humanoid":
        return _mjcf(open(mjx_humanoid_path()).read())
    raise ValueError(f"unknown model {name!r}")


def _memory(compiled) -> float:
    """Temporaries + outputs + arguments [bytes] of a compiled executable."""
    m = compiled.memory_analysis()
    return float(m.temp_size_in_bytes + m.output_size_in_bytes + m.argument_size_in_bytes)


def _measure(fn, args, max_bytes: float):
    """(bytes, µs per call or nan when skipped, compile s, first output or None) of ``jax.jit(fn)`` on ``args``."""
    seconds, compiled = compile_timed(jax.jit(fn), *args)
    mem = _memory(compiled)
    if mem > max_bytes:
        return mem, math.nan, seconds, None
    t0 = time.perf_counter()
    out = jax.block_until_ready(compiled(*args))
    once = time.perf_counter() - t0
    if once > SLOW_CALL_S:  # one more call is the measurement (the first may include one-time setup)
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        return mem, (time.perf_counter() - t0) * 1e6, seconds, out
    return mem, time_call(compiled, *args, repeat=3) * 1e6, seconds, out


def jaxart_rows(name: str, model, batch: int, pair_capacity, max_bytes: float) -> list[list]:
    state = model.state()
    body_q = jnp.broadcast_to(state.body_q, (batch, *state.body_q.shape))
    rows = []
    for label, pc in (("default", None), (f"pair_capacity={pair_capacity}", pair_capacity)):
        try:
            rows_n = default_capacity(model, pair_capacity=pc)
        except NotImplementedError as e:
            print(f"  skip {name} (jaxart): {str(e).splitlines()[0][:160]}", flush=True)
            return []

        def fn(q, pc=pc):
            return collide_with_stats(model, state.replace(body_q=q), pair_capacity=pc, overflow_warning=False)

        try:
            mem, us, comp, out = _measure(jax.vmap(fn), (body_q,), max_bytes)
        except Exception as e:  # noqa: BLE001 - XLA out-of-memory and friends are reported, not fatal
            print(f"  skip {name} (jaxart {label}, batch {batch}): {type(e).__name__}: {str(e)[:160]}", flush=True)
            continue
        if math.isnan(us):
            print(f"  {name} jaxart {label} batch {batch}: estimate {mem / GB:.2f} GB above the limit; not run")
        dropped = math.nan if out is None else int(out[1].overflow[0])
        rows.append([name, f"jaxart {label}", batch, rows_n, mem / 2**20, mem / batch / 2**10, us / batch, comp,
                     dropped])
        print("  done:", rows[-1], flush=True)
    return rows


def mjx_row(name: str, mj, batch: int, max_bytes: float) -> list | None:
    from mujoco import mjx
    from mujoco.mjx._src import collision_driver

    if isinstance(mj, str):
        print(f"  skip {name} (MJX): no MjModel ({mj[:160]})", flush=True)
        return None
    try:
        mx = mjx.put_model(mj)
        d0 = jax.jit(lambda: mjx.kinematics(mx, mjx.make_data(mx)))()
        dx = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch, *x.shape)), d0)
        mem, us, comp, _ = _measure(jax.vmap(lambda d: collision_driver.collision(mx, d)), (dx,), max_bytes)
    except Exception as e:  # noqa: BLE001 - unsupported geometry pairs, out of memory: reported
        print(f"  skip {name} (MJX, batch {batch}): {type(e).__name__}: {str(e)[:160]}", flush=True)
        return None
    if math.isnan(us):
        print(f"  {name} MJX batch {batch}: estimate {mem / GB:.2f} GB above the limit; not run")
    row = [name, "mjx collision", batch, int(d0._impl.ncon), mem / 2**20, mem / batch / 2**10, us / batch, comp,
           math.nan]
    print("  done:", row, flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["panda", "allegro_hand", "quadruped_hfield", "mjx_humanoid"])
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 1024])
    ap.add_argument("--pair-capacity", type=int, default=4, help="pairs per shape-type group in the culled row")
    ap.add_argument("--max-gb", type=float, default=4.0, help="skip execution above this compiled working memory")
    ap.add_argument("--no-mjx", action="store_true", help="skip MJX")
    ap.add_argument("--mjx-models", nargs="+", default=None,
                    help="models timed with MJX (default: all; MJX compiled the Panda's mesh collision for ~12 min "
                         "on a loaded 2-core CPU)")
    ap.add_argument("--quick", action="store_true", help="batches 1 and 16")
    args = ap.parse_args()
    if args.quick:
        args.batches = [1, 16]
    rows = []
    for name in args.models:
        model, mj = load(name)
        for batch in args.batches:
            ours = jaxart_rows(name, model, batch, args.pair_capacity, args.max_gb * GB)
            use_mjx = not args.no_mjx and (args.mjx_models is None or name in args.mjx_models)
            ref = mjx_row(name, mj, batch, args.max_gb * GB) if use_mjx else None
            for r in ours + ([ref] if ref else []):
                ratio = [r[5] / ref[5], r[6] / ref[6]] if ref and r is not ref else [math.nan, math.nan]
                rows.append(r + ratio)
    header = ["model", "system", "batch", "contact rows", "memory MiB", "KiB/world", "µs/world", "compile s",
              "dropped", "mem vs mjx", "time vs mjx"]
    print_table("collision detection only: compiled working memory (temp + output + arguments) and time per world "
                "(nan: not run)", header, rows)


if __name__ == "__main__":
    main()
