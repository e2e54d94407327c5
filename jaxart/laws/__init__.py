"""Physical laws written once and called by every solver that applies them.

* :mod:`jaxart.laws.angles`: the wrap of an angle into ``[−π, π)`` and its whole turns, and the nearest copy of
  an angle to a reference.
* :mod:`jaxart.laws.joint`: the per-DOF joint laws (PD drive with its effort limit, penalty position limit,
  passive spring-damper, smooth Coulomb friction), each returning the generalized force and its derivatives
  (:class:`~jaxart.laws.joint.JointTerm`) for the implicit solvers.
* :mod:`jaxart.laws.compliance`: the compliant (XPBD) row update and the compliance of a drive row.
* :mod:`jaxart.laws.equality`: equality-constraint quantities: the CONNECT body-2 anchor, the JOINT polynomial
  with its slope, a mimic constraint as that polynomial.
* :mod:`jaxart.laws.activation`: actuator activation dynamics (integrator, filter, exact filter) and the control
  inputs the activations set.
* :mod:`jaxart.laws.fluid`: MuJoCo's inertia-box fluid forces on bodies (density, viscosity, wind).

All functions are elementwise over leading dimensions, pure and ``jit``/``vmap``/``grad`` compatible.
"""
