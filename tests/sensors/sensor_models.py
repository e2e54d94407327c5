"""MJCF models and MuJoCo → jaxart state conversion shared by the sensor tests."""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

import jaxart

# one model with most sensor kinds: a hinge–(slide+hinge)–ball chain, a floating body, static targets for rays
ARM_XML = """
<mujoco>
  <option gravity="0 0 -9.81" magnetic="0.1 -0.4 0.3" timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 0.1" pos="0 0 -2"/>
    <site name="wsite" pos="0.1 0.2 0.3" euler="10 -20 30"/>
    <site name="ray_box" pos="2 0 1" euler="175 3 0"/>
    <site name="ray_cyl" pos="2.5 0.02 1" euler="178 0 0"/>
    <site name="ray_ell" pos="3 0 1" euler="177 2 0"/>
    <site name="ray_cap" pos="3.5 0 1" euler="179 0 1"/>
    <site name="ray_sph" pos="4.01 0 1" euler="180 0 0"/>
    <site name="ray_miss" pos="5 0 1"/>
    <body name="targets" pos="0 0 0">
      <geom name="tbox" type="box" size=".2 .15 .1" pos="2 0 0" euler="0 0 20"/>
      <geom name="tcyl" type="cylinder" size=".1 .2" pos="2.5 0 0" euler="90 0 0"/>
      <geom name="tell" type="ellipsoid" size=".1 .15 .2" pos="3 0 0"/>
      <geom name="tcap" type="capsule" size=".08 .2" pos="3.5 0 0" euler="0 30 0"/>
      <geom name="tsph" type="sphere" size=".12" pos="4 0 0"/>
    </body>
    <body name="b1" pos="0 0 1" euler="10 20 30">
      <joint name="j1" type="hinge" axis="0 1 0" ref="0.2" damping="0.1"/>
      <geom name="g1" type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/>
      <site name="s1" pos="0.25 0.05 0" euler="30 0 45"/>
      <camera name="cam" pos="0.1 0.2 0.1" euler="0 40 10"/>
      <body name="b2" pos="0.5 0 0">
        <joint name="j2" type="slide" axis="1 0 0"/>
        <joint name="j3" type="hinge" axis="0 0 1"/>
        <geom name="g2" type="box" size="0.1 0.05 0.05" pos="0.1 0 0" mass="0.7"/>
        <site name="s2" pos="0.2 0 0.02" euler="0 90 0"/>
        <body name="b3" pos="0.2 0 0">
          <joint name="j4" type="ball"/>
          <geom name="g3" type="sphere" size="0.06" pos="0 0 -0.1" mass="0.4"/>
          <site name="s3" pos="0 0.03 -0.1" euler="5 6 7"/>
          <site name="ray_down" pos="0 0 -0.2" euler="180 0 0"/>
        </body>
      </body>
    </body>
    <body name="float" pos="-1 0 0.5" euler="5 10 15">
      <freejoint name="free"/>
      <geom name="gf" type="box" size="0.1 0.2 0.05" pos="0.02 0.01 0" mass="2"/>
      <site name="sf" pos="0.05 0.1 0.02" euler="20 0 10"/>
    </body>
  </worldbody>
  <tendon><fixed name="t1"><joint joint="j1" coef="0.7"/></fixed></tendon>
  <actuator>
    <motor name="m1" joint="j1"/>
    <position name="p3" joint="j3" kp="5" kv="1"/>
    <motor name="mt" tendon="t1"/>
  </actuator>
  <sensor>
    <jointpos name="jp1" joint="j1"/>
    <jointpos name="jp3" joint="j3"/>
    <jointvel name="jv2" joint="j2"/>
    <jointvel name="jv1cut" joint="j1" cutoff="0.05"/>
    <tendonpos name="tp" tendon="t1"/>
    <tendonvel name="tv" tendon="t1"/>
    <actuatorfrc name="af1" actuator="m1"/>
    <jointactuatorfrc name="jaf3" joint="j3"/>
    <tendonactuatorfrc name="taf" tendon="t1"/>
    <framepos name="fp_site" objtype="site" objname="s2"/>
    <framepos name="fp_body_ref" objtype="body" objname="b3" reftype="site" refname="s1"/>
    <framequat name="fq_xbody" objtype="xbody" objname="b2"/>
    <framequat name="fq_geom_ref" objtype="geom" objname="g3" reftype="xbody" refname="b1"/>
    <framexaxis name="fx" objtype="site" objname="s3"/>
    <frameyaxis name="fy" objtype="camera" objname="cam" reftype="geom" refname="g2"/>
    <framezaxis name="fz" objtype="body" objname="float" reftype="camera" refname="cam"/>
    <framelinvel name="flv" objtype="site" objname="s3"/>
    <framelinvel name="flv_ref" objtype="site" objname="s3" reftype="site" refname="s1"/>
    <frameangvel name="fav_ref" objtype="xbody" objname="b3" reftype="body" refname="b2"/>
    <framelinvel name="flv_free" objtype="site" objname="sf" reftype="xbody" refname="b3"/>
    <framelinacc name="fla" objtype="site" objname="s3"/>
    <frameangacc name="faa" objtype="body" objname="b3"/>
    <framelinacc name="fla_free" objtype="xbody" objname="float"/>
    <subtreecom name="stc1" body="b1"/>
    <subtreecom name="stc0" body="world"/>
    <subtreelinvel name="stv2" body="b2"/>
    <subtreeangmom name="sta1" body="b1"/>
    <subtreeangmom name="staf" body="float"/>
    <accelerometer name="acc" site="s3"/>
    <accelerometer name="acc_free" site="sf"/>
    <velocimeter name="vel" site="s2"/>
    <gyro name="gyro" site="s3"/>
    <magnetometer name="mag" site="s1"/>
    <force name="force" site="s2"/>
    <torque name="torque" site="s3"/>
    <force name="force_cut" site="s1" cutoff="1.5"/>
    <rangefinder name="rf_down" site="ray_down"/>
    <rangefinder name="rf_box" site="ray_box"/>
    <rangefinder name="rf_cyl" site="ray_cyl"/>
    <rangefinder name="rf_ell" site="ray_ell"/>
    <rangefinder name="rf_cap" site="ray_cap"/>
    <rangefinder name="rf_sph" site="ray_sph"/>
    <rangefinder name="rf_miss" site="ray_miss"/>
    <clock name="clock"/>
    <ballquat name="bq" joint="j4"/>
    <ballangvel name="bav" joint="j4" cutoff="0.3"/>
    <actuatorpos name="apos" actuator="p3"/>
    <actuatorvel name="avel" actuator="mt"/>
  </sensor>
</mujoco>
"""


def import_model(xml: str, **kwargs):
    """(jaxart float64 model, add_mjcf result) of an MJCF string."""
    b = jaxart.ModelBuilder()
    info = b.add_mjcf(xml, **kwargs)
    return b.finalize(dtype=jnp.float64), info


_FK = jax.jit(lambda model, q, qd: jaxart.eval_fk(model, q, qd, model.state()))


def _rot(q_wxyz) -> np.ndarray:
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, np.asarray(q_wxyz, np.float64))
    return mat.reshape(3, 3)


def jaxart_state(model, info, m, d):
    """jaxart ``(state, joint_qdd)`` of MuJoCo's ``(qpos, qvel, qacc)`` (after ``mj_forward``)."""
    cmap, dmap, d0 = info["coord_map"], info["dof_map"], info["dof_start"]
    q = np.asarray(d.qpos)[cmap]
    qd = np.asarray(d.qvel)[dmap].copy()
    qdd = np.asarray(d.qacc)[dmap].copy()
    for j in range(m.njnt):
        a, v = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
        k = d0 + list(dmap).index(v)
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            r = _rot(d.qpos[a:a + 4])
            qd[k:k + 3], qdd[k:k + 3] = r @ d.qvel[v:v + 3], r @ d.qacc[v:v + 3]
        elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            r = _rot(d.qpos[a + 3:a + 7])
            c = r @ m.body_ipos[m.jnt_bodyid[j]]
            w, alpha = r @ d.qvel[v + 3:v + 6], r @ d.qacc[v + 3:v + 6]
            qd[k:k + 3] = d.qvel[v:v + 3] + np.cross(w, c)
            qd[k + 3:k + 6] = w
            qdd[k:k + 3] = d.qacc[v:v + 3] + np.cross(alpha, c) + np.cross(w, np.cross(w, c))
            qdd[k + 3:k + 6] = alpha
    state = _FK(model, jnp.asarray(q), jnp.asarray(qd))
    return state, jnp.asarray(qdd)


def moving_data(m, seed: int = 0, *, ctrl=True, data=None):
    """MuJoCo data (``data`` or a new one) at a random configuration and velocity (``mj_forward`` done)."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(m) if data is None else data
    qpos, qvel = np.array(m.qpos0, np.float64), np.zeros(m.nv)
    for j in range(m.njnt):
        a, v, t = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j]), int(m.jnt_type[j])
        if t in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            qpos[a] += rng.uniform(-0.6, 0.6)
            qvel[v] = rng.uniform(-1.5, 1.5)
        else:
            n = 3 if t == int(mujoco.mjtJoint.mjJNT_BALL) else 6
            quat = rng.normal(size=4)
            qpos[a + n - 3:a + n + 1] = quat / np.linalg.norm(quat)
            qvel[v:v + n] = rng.uniform(-1.5, 1.5, n)
    d.qpos[:], d.qvel[:] = qpos, qvel
    if ctrl:
        d.ctrl[:] = rng.uniform(-1.0, 1.0, m.nu)
    d.time = 0.37
    mujoco.mj_forward(m, d)
    return d


def arm_control(model, info, m, d):
    """MuJoCo's ctrl of the ARM_XML model as jaxart control: motor → ``joint_act``, position servo → target, tendon
    motor → ``tendon_f``."""
    dof = info["dof_start"] + list(info["dof_map"]).index(int(m.jnt_dofadr[m.joint("j1").id]))
    coord = list(info["coord_map"]).index(int(m.jnt_qposadr[m.joint("j3").id]))
    c = model.control()
    return c.replace(joint_act=c.joint_act.at[dof].set(d.ctrl[0]),
                     joint_target_q=c.joint_target_q.at[coord].set(d.ctrl[1]),
                     tendon_f=c.tendon_f.at[0].set(d.ctrl[2]))


def arm_states(m, model, info):
    """Yield ``(MuJoCo data, jaxart state with body_f, joint_qdd, control, body_f)`` of the ARM_XML model at rest
    (initial configuration, no control) and in a moving, actuated state with external wrenches (MuJoCo's
    ``xfrc_applied``: world, at the COM, as ``body_f``)."""
    for seed in (None, 3):
        d = mujoco.MjData(m)
        body_f = np.zeros((model.body_count, 6))
        if seed is None:
            mujoco.mj_forward(m, d)
        else:
            for k, name in enumerate(("b3", "float")):
                d.xfrc_applied[m.body(name).id] = body_f[info["bodies"][name]] = [1.0, -2.0, 0.5 * k, 0.3, 0.1, -0.2]
            d = moving_data(m, seed, data=d)
        state, qdd = jaxart_state(model, info, m, d)
        yield d, state.replace(body_f=jnp.asarray(body_f)), qdd, arm_control(model, info, m, d), body_f
