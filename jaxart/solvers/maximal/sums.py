"""Per-body sums of per-row quantities for the maximal-coordinate solvers (see :mod:`jaxart.math.segments`)."""

from jaxart.math.segments import concrete_ids, gather_table, segment_sum

__all__ = ["concrete_ids", "gather_table", "segment_sum"]
