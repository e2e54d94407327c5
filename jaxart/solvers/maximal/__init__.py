"""Maximal-coordinate pieces shared by SolverXPBD and SolverSemiImplicit: body integration (``integrate``),
joint geometry (``joints``), penalty joint wrenches (``penalty_joints``), segment sums (``sums``)."""
