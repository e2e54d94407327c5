"""The constrained dense solve and the lane kernels behind the reduced-coordinate solvers.

Not public API. SolverFeatherstone steps through these modules; the public functions of
:mod:`jaxart.dynamics` (:func:`~jaxart.dynamics.eval_forward_dynamics`,
:func:`~jaxart.dynamics.eval_joint_solver_forces`, :func:`~jaxart.dynamics.eval_body_contact_wrenches`)
and SolverMuJoCo's and SolverMaximal's helpers reuse them, so they live in the dynamics layer rather
than under :mod:`jaxart.solvers.featherstone`:

* :mod:`~jaxart.dynamics.engine.dense_solve`: CRBA + Cholesky accelerations with constraint rows,
  loop axes, contact rows and low-rank tendon terms (one ``custom_jvp``).
* :mod:`~jaxart.dynamics.engine.constraint_rows`, :mod:`~jaxart.dynamics.engine.loop_axes`,
  :mod:`~jaxart.dynamics.engine.contact_terms`, :mod:`~jaxart.dynamics.engine.tendon_terms`: the rows
  and terms that solve assembles.
* :mod:`~jaxart.dynamics.engine.drive_inertia`: the implicit drives' effective inertia.
* :mod:`~jaxart.dynamics.engine.aba_schedule`, :mod:`~jaxart.dynamics.engine.lane_spatial`,
  :mod:`~jaxart.dynamics.engine.aba_contact`: the batch-minor articulated-body algorithm's lane kernels.
"""
