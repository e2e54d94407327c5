"""``python -m jaxart.demo``: gradient-based demos on the bundled models (see ``__main__``)."""
