"""Model data and construction: the :class:`~jaxart.sim.model.Model`/``State``/``Control`` pytrees, enums,
the :class:`~jaxart.sim.builder.ModelBuilder` and its finalisation, input checks."""
