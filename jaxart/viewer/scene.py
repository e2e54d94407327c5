"""The MuJoCo scene of a jaxart model: compiled ``MjModel`` for drawing and geom poses from ``body_q``.

The model is translated by :class:`jaxart.solvers.SolverMuJoCo` (the same mapping tables the bridge
steps with); a copy of its ``MjSpec`` gets a light, a checker floor material and an offscreen
buffer large enough for the requested frame size. Geom poses are computed from jaxart body poses
(``State.body_q``), so trajectories of every solver render the same way, maximal-coordinate ones
included.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
from scipy.spatial.transform import Rotation

from jaxart.sim.model import Model

#: MuJoCo visual group given to sites in the drawing model (hidden by MuJoCo's default ``mjvOption``).
HIDDEN_SITE_GROUP = 5


@dataclasses.dataclass(frozen=True, eq=False)
class Scene:
    """A compiled ``MjModel`` plus the rigid offsets that place its geoms from jaxart body poses.

    Attributes:
        mj_model: The ``mujoco.MjModel`` used for drawing.
        geom_body: ``(ngeom,)`` jaxart body index carrying each geom (-1: static world geom).
        geom_offset_p: ``(ngeom, 3)`` geom position in its jaxart body frame (world frame if static).
        geom_offset_q: ``(ngeom, 4)`` geom orientation (xyzw) in its jaxart body frame.
        body_count: Number of jaxart bodies (``body_q`` must have this many rows).
    """

    mj_model: object
    geom_body: np.ndarray
    geom_offset_p: np.ndarray
    geom_offset_q: np.ndarray
    body_count: int

    def geom_poses(self, body_q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World geom positions ``(..., ngeom, 3)`` and rotation matrices ``(..., ngeom, 9)``.

        Args:
            body_q: ``(..., body_count, 7)`` jaxart body poses ``(p, q_xyzw)``.
        """
        body_q = np.array(body_q, np.float64)
        lead = body_q.shape[:-2]
        moving = self.geom_body >= 0
        idx = np.where(moving, self.geom_body, 0)
        bq = body_q[..., idx, :]  # (..., ngeom, 7)
        rb = Rotation.from_quat(bq[..., 3:].reshape(-1, 4))
        off_p = np.array(np.broadcast_to(self.geom_offset_p, bq.shape[:-1] + (3,))).reshape(-1, 3)
        off_r = Rotation.from_quat(np.array(np.broadcast_to(self.geom_offset_q, bq.shape[:-1] + (4,))).reshape(-1, 4))
        pos = (bq[..., :3].reshape(-1, 3) + rb.apply(off_p)).reshape(lead + (-1, 3))
        mat = (rb * off_r).as_matrix().reshape(lead + (-1, 9))
        static_p = np.broadcast_to(self.geom_offset_p, pos.shape)
        static_m = np.broadcast_to(Rotation.from_quat(self.geom_offset_q).as_matrix().reshape(-1, 9), mat.shape)
        pos = np.where(moving[:, None], pos, static_p)
        mat = np.where(moving[:, None], mat, static_m)
        return pos, mat


def build_scene(model: Model, *, width: int, height: int, solver=None) -> Scene:
    """Translate ``model`` to MuJoCo (via ``SolverMuJoCo``) and precompute the geom offsets.

    Args:
        model: The jaxart model.
        width, height: Largest frame size that will be rendered [pixels].
        solver: An existing ``SolverMuJoCo`` for ``model`` to reuse (saves the translation).
    """
    import mujoco

    from jaxart.kinematics import eval_fk
    from jaxart.solvers import SolverMuJoCo

    if solver is None:
        solver = SolverMuJoCo(model)
    spec = solver.mj_spec.copy()
    spec.visual.global_.offwidth = max(int(width), 640)
    spec.visual.global_.offheight = max(int(height), 480)
    spec.worldbody.add_light(pos=[0.0, 0.0, 4.0], dir=[0.0, 0.0, -1.0],
                             type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL, castshadow=0, diffuse=[0.7, 0.7, 0.7])
    _checker_floor(spec, mujoco)
    for site in spec.sites:  # sensor and reference frames are not drawn (MuJoCo shows site groups 0-2 only)
        site.group = HIDDEN_SITE_GROUP
    mj_model = spec.compile()
    # Reference configuration: MuJoCo body frames vs jaxart body frames give constant rigid offsets.
    # (jitted: eager FK and state mapping cost seconds of per-operation dispatch on bigger models)
    state0 = jax.jit(eval_fk)(model, model.joint_q, model.joint_qd)
    d = mujoco.MjData(mj_model)
    d.qpos[:] = np.asarray(jax.jit(lambda s: solver.to_mjx_data(s).qpos)(state0))
    mujoco.mj_kinematics(mj_model, d)
    body_q0 = np.array(state0.body_q, np.float64)
    mj_to_jx = np.full(mj_model.nbody, -1)
    mj_to_jx[np.asarray(solver.layout.body_mj)] = np.arange(model.body_count)
    geom_body = mj_to_jx[mj_model.geom_bodyid]
    gp = np.array(d.geom_xpos, np.float64)
    gr = Rotation.from_matrix(np.array(d.geom_xmat, np.float64).reshape(-1, 3, 3))
    orphan = (geom_body < 0) & (mj_model.geom_bodyid > 0)
    if np.any(orphan):
        # Geoms on MuJoCo helper bodies without a jaxart body cannot be placed from body_q.
        raise NotImplementedError(f"viewer: geoms {np.flatnonzero(orphan).tolist()} sit on MuJoCo bodies "
                                  "without a jaxart body")
    jb = np.where(geom_body >= 0, geom_body, 0)
    rb_inv = Rotation.from_quat(body_q0[jb, 3:]).inv()
    off_p = rb_inv.apply(gp - body_q0[jb, :3])
    off_q = (rb_inv * gr).as_quat()
    static = geom_body < 0
    off_p[static] = gp[static]
    off_q[static] = gr[static].as_quat()
    return Scene(mj_model=mj_model, geom_body=geom_body, geom_offset_p=off_p, geom_offset_q=off_q,
                 body_count=model.body_count)


def _checker_floor(spec, mujoco) -> None:
    """Give plane geoms a checker material (planes otherwise render as a flat, featureless colour)."""
    planes = [g for g in spec.geoms if g.type == mujoco.mjtGeom.mjGEOM_PLANE]
    if not planes:
        return
    spec.add_texture(name="jaxart_viewer_checker", type=mujoco.mjtTexture.mjTEXTURE_2D,
                     builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=[0.32, 0.36, 0.42], rgb2=[0.22, 0.25, 0.3],
                     width=256, height=256)
    mat = spec.add_material(name="jaxart_viewer_floor", texrepeat=[8.0, 8.0], reflectance=0.1)
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "jaxart_viewer_checker"
    for g in planes:
        if not g.material:
            g.material = "jaxart_viewer_floor"
