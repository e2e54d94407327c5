"""Maximal-coordinate pieces shared by SolverXPBD and SolverSemiImplicit: body integration (``integrate``),
joint geometry (``joints``), penalty joint wrenches (``penalty_joints``), FREE/DISTANCE drives and ``joint_act``
(``free_joints``), tendon lengths, gradients and
wrenches from the body poses (``tendons``), segment sums (``sums``)."""
