"""The constrained dense solve and the lane kernels shared by the reduced-coordinate algorithms and solvers.

Not public API. These modules serve the public functions of :mod:`jaxart.dynamics`
(:func:`~jaxart.dynamics.eval_forward_dynamics`, :func:`~jaxart.dynamics.eval_joint_solver_forces`,
:func:`~jaxart.dynamics.eval_body_contact_wrenches`) and two solvers (SolverFeatherstone steps through them,
SolverMuJoCo reads the constraint plan, loop axes and drive inertias), so they live in the dynamics layer.
What only SolverFeatherstone uses lives in :mod:`jaxart.solvers.featherstone` (the contact impedances of its
articulated-body lane kernel, its loop joints' state).

* :mod:`~jaxart.dynamics.engine.dense_solve`: CRBA + Cholesky accelerations with constraint rows,
  loop axes, contact rows and low-rank tendon terms (one ``custom_jvp``).
* :mod:`~jaxart.dynamics.engine.constraint_rows`, :mod:`~jaxart.dynamics.engine.loop_axes`,
  :mod:`~jaxart.dynamics.engine.contact_terms`, :mod:`~jaxart.dynamics.engine.tendon_terms`: the rows
  and terms that solve assembles.
* :mod:`~jaxart.dynamics.engine.drive_inertia`: the implicit drives' effective inertia.
* :mod:`~jaxart.dynamics.engine.aba_schedule`, :mod:`~jaxart.dynamics.engine.lane_spatial`: the
  batch-minor articulated-body algorithm's schedule and lane spatial algebra.
"""
