"""``ArticulationView``: Newton's selection interface for batched articulation data, made functional.

A view selects articulations by label (``fnmatch`` glob, list of globs, compiled regex or list of
indices) and, optionally, a subset of their joints and links. All index bookkeeping is static numpy
done once in the constructor, so getters are gathers and setters are ``.at[].set`` scatters with
static indices: every method is ``jit``/``vmap``/``grad``-compatible and a get followed by a set of the
same values returns the input unchanged.

Worlds: a jaxart :class:`~jaxart.sim.model.State` is one world; batches of worlds are leading axes
that the user adds (``vmap``). Getters accept unbatched containers (``world_count = 1``) or leaves
with any number of leading batch axes, which are **flattened** into one world axis
(``world_count = prod(batch)``). Every getter returns ``(world_count, count, ...)`` like Newton.
Setters are pure: they return a new object of the target's type (``State``, ``Control`` or
``Model``) and take ``values`` of exactly the getter's shape (for several batch axes the
unflattened ``(*batch, count, ...)`` form is accepted too) plus an optional Boolean ``mask`` of
shape ``(world_count,)`` (per world) or ``(world_count, count)`` (per articulation).

Porting from Newton (in-place → returned)::

    view = jaxart.selection.ArticulationView(model, "robot*")
    q = view.get_dof_positions(state)                # (world_count, count, joint_coord_count)
    state = view.set_dof_positions(state, q.at[..., 0].set(0.0))
    tf = view.get_root_transforms(state)
    state = view.set_root_transforms(state, tf.at[..., 0].add(0.2))   # floating base → new State
    model = fixed_view.set_root_transforms(model, tf)                   # fixed base → new Model

Behaviour notes (Newton 1.8 behaviour wins over its docs): ``get_dof_positions`` uses the coordinate
layout (7 values for a FREE joint) and ``get_dof_velocities`` the DOF layout; root transforms of
floating bases are the FREE/DISTANCE joint coordinates, of other bases ``Model.joint_X_p`` of the
root joint (pass ``frame="body"`` for root-link world poses instead); root velocities of
non-floating bases are ``None`` and setting them is a no-op. Selected articulations must be
structurally identical (same joints, joint types, DOF counts, links and shapes per link).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.fk import eval_fk
from jaxart.selection.layout import build_layout
from jaxart.selection.ops import (
    BODY,
    COORD,
    DERIVED,
    DOF,
    JOINT,
    SHAPE,
    STATIC,
    attribute_info,
    batch_shape,
    gather,
    read_leaf,
    resolve_mask,
    scatter,
)
from jaxart.selection.root import RootAccessMixin
from jaxart.sim.checks import check_leaf_items
from jaxart.sim.model import Model, State

__all__ = ["ArticulationView"]


class ArticulationView(RootAccessMixin):
    """Selection of structurally identical articulations with stable ``(world, articulation, ...)`` tensors.

    Args:
        model: The model holding the articulations (its static topology is read once).
        pattern: Glob matched against ``model.articulation_label`` (``fnmatch``), list of globs,
            compiled regex (full match) or list of articulation indices.
        include_joints, exclude_joints: Joint filters matched against the last ``/`` component of
            the template (first selected) articulation's joint labels, or template-local indices.
        include_links, exclude_links: Link filters, same rules with body labels.
        include_joint_types, exclude_joint_types: :class:`~jaxart.JointType` lists; a joint is kept
            if it passes ``include_joints`` or ``include_joint_types`` and neither exclusion.
        verbose: Print a summary of the selection.

    Raises:
        ValueError: If no label matches (the message lists the available labels), if a selected
            articulation differs in structure from the first one (it is named), or on bad filters.

    Attributes:
        count: Number of selected articulations (``count_per_world`` is the same number).
        articulation_ids: ``(count,)`` model articulation indices (numpy).
        joint_count, joint_dof_count, joint_coord_count, link_count, shape_count: Per-articulation
            sizes of the selection.
        joint_names, joint_labels, joint_dof_names, joint_coord_names, link_names, link_labels,
            shape_names, shape_labels, joint_dof_counts, joint_coord_counts, link_shapes: Newton's
            metadata of the template articulation.
        is_floating_base: Root joint is FREE or DISTANCE. ``is_fixed_base``: root has no DOF.
        root_joint_type: :class:`~jaxart.JointType` of the root joints.
        articulation_mask: ``(model.articulation_count,)`` numpy bool, true for selected articulations.
    """

    def __init__(self, model: Model, pattern, *, include_joints=None, exclude_joints=None, include_links=None,
                 exclude_links=None, include_joint_types=None, exclude_joint_types=None, verbose: bool = False):
        if not isinstance(model, Model):
            raise TypeError(f"ArticulationView: model must be a jaxart Model, got {type(model).__name__}")
        lay = build_layout(model, pattern, include_joints=include_joints, exclude_joints=exclude_joints,
                           include_links=include_links, exclude_links=exclude_links,
                           include_joint_types=include_joint_types, exclude_joint_types=exclude_joint_types)
        self.model, self.pattern, self._layout = model, pattern, lay
        self._index = {JOINT: lay.joint, COORD: lay.coord, DOF: lay.dof, BODY: lay.link, SHAPE: lay.shape}
        self.count = self.count_per_world = len(lay.articulation_ids)
        self.articulation_ids = lay.articulation_ids
        self.joint_count, self.joint_coord_count, self.joint_dof_count = (lay.joint.shape[1], lay.coord.shape[1],
                                                                          lay.dof.shape[1])
        self.link_count, self.shape_count = lay.link.shape[1], lay.shape.shape[1]
        for key, val in lay.names.items():
            setattr(self, key, list(val))
        self.root_joint_type = lay.root_type
        self.is_floating_base = lay.root_coord.shape[1] > 0
        dof_dim = model.topology.joint_dof_dim.array[lay.root_joint[0]]
        self.is_fixed_base = int(dof_dim.sum()) == 0
        self.articulation_mask = np.zeros(model.articulation_count, bool)
        self.articulation_mask[lay.articulation_ids] = True
        if verbose:
            print(self.summary())

    # ------------------------------------------------------------------ metadata
    @property
    def body_names(self) -> list[str]:
        """Alias for ``link_names``."""
        return self.link_names

    @property
    def body_labels(self) -> list[str]:
        """Alias for ``link_labels``."""
        return self.link_labels

    @property
    def body_shapes(self) -> list[list[int]]:
        """Alias for ``link_shapes``."""
        return self.link_shapes

    def summary(self) -> str:
        """Human-readable description of the selection."""
        labels = [self.model.articulation_label[a] for a in self.articulation_ids]
        return (f"ArticulationView {self.pattern!r}: {self.count} articulations {labels}\n"
                f"  links {self.link_count} {self.link_names}\n  joints {self.joint_count} {self.joint_names}\n"
                f"  dofs {self.joint_dof_count} coords {self.joint_coord_count} shapes {self.shape_count}\n"
                f"  root {self.root_joint_type.name} floating={self.is_floating_base} fixed={self.is_fixed_base}")

    def __repr__(self) -> str:
        return (f"ArticulationView(pattern={self.pattern!r}, count={self.count}, links={self.link_count}, "
                f"joints={self.joint_count}, dofs={self.joint_dof_count})")

    # ------------------------------------------------------------------ generic attributes
    def get_attribute(self, name: str, source) -> jax.Array:
        """Selected values of ``source.<name>``, shaped ``(world_count, count, k, *elem)``.

        Args:
            name: A per-joint (``joint_X_p``), per-coordinate (``joint_q``, ``joint_target_q``), per-DOF
                (``joint_qd``, ``joint_f``, ``joint_target_ke``, limits, gains, ...), per-body (``body_q``,
                ``body_mass``, ``body_inertia``, ...) or per-shape (``shape_*``) field; static structure
                (``joint_type``, ``joint_target_mode``, ``body_flags``, ``shape_type``, ...) is readable too.
            source: A ``Model``, ``State`` or ``Control`` holding the field (leaves may be batched).

        Returns:
            A ``jax.Array``; ``k`` is the view's joint/coord/DOF/link/shape count for the field.
        """
        freq, elem = attribute_info(name)
        return gather(self._read(name, source, "get_attribute"), self._index[freq], elem, name)

    def set_attribute(self, name: str, target, values, mask=None) -> Any:
        """Return ``target`` with the selected entries of ``target.<name>`` replaced by ``values``.

        Args:
            name: A traced field (see :meth:`get_attribute`); static and derived fields raise.
            target: ``Model``, ``State`` or ``Control``.
            values: Array of :meth:`get_attribute`'s shape for this target.
            mask: Optional Boolean ``(world_count,)`` or ``(world_count, count)`` selection.

        Returns:
            A new object of ``target``'s type (Model changes recompile nothing: all fields here are traced).
        """
        freq, elem = attribute_info(name)
        if name in STATIC or name in DERIVED:
            raise ValueError(f"ArticulationView.set_attribute: {name!r} is read-only "
                             f"({'static topology; rebuild the model' if name in STATIC else 'derived'})")
        leaf = self._read(name, target, "set_attribute")
        new = scatter(leaf, self._index[freq], elem, name, values, mask, what=f"set_attribute({name!r})")
        return target.replace(**{name: new})

    def _read(self, name: str, source, what: str):
        """``source.<name>``, checked to hold this model's item count (a leaf of another model would be
        gathered with out-of-range static indices)."""
        freq, elem = attribute_info(name)
        leaf = read_leaf(name, source)
        m = self.model
        count = {JOINT: m.joint_count, COORD: m.joint_coord_count, DOF: m.joint_dof_count, BODY: m.body_count,
                 SHAPE: m.shape_count}[freq]
        check_leaf_items(leaf, count, elem, f"ArticulationView.{what}: {type(source).__name__}.{name}")
        return leaf

    # ------------------------------------------------------------------ DOF data
    def get_dof_positions(self, source) -> jax.Array:
        """``joint_q`` of the selected joints, ``(world_count, count, joint_coord_count)`` (coordinate layout)."""
        return self.get_attribute("joint_q", source)

    def set_dof_positions(self, target, values, mask=None) -> Any:
        """Return ``target`` (State or Model) with the selected ``joint_q`` replaced."""
        return self.set_attribute("joint_q", target, values, mask)

    def get_dof_velocities(self, source) -> jax.Array:
        """``joint_qd`` of the selected joints, ``(world_count, count, joint_dof_count)``."""
        return self.get_attribute("joint_qd", source)

    def set_dof_velocities(self, target, values, mask=None) -> Any:
        """Return ``target`` (State or Model) with the selected ``joint_qd`` replaced."""
        return self.set_attribute("joint_qd", target, values, mask)

    def get_dof_forces(self, source) -> jax.Array:
        """``Control.joint_f`` of the selected joints, ``(world_count, count, joint_dof_count)``."""
        return self.get_attribute("joint_f", source)

    def set_dof_forces(self, target, values, mask=None) -> Any:
        """Return the ``Control`` with the selected ``joint_f`` replaced."""
        return self.set_attribute("joint_f", target, values, mask)

    # ------------------------------------------------------------------ links
    def get_link_transforms(self, source) -> jax.Array:
        """World poses ``body_q`` of the selected links, ``(world_count, count, link_count, 7)``."""
        return self.get_attribute("body_q", source)

    def get_link_velocities(self, source) -> jax.Array:
        """Twists ``body_qd = (v_com, ω)`` (world) of the selected links, ``(world_count, count, link_count, 6)``."""
        return self.get_attribute("body_qd", source)

    # ------------------------------------------------------------------ masks
    def get_model_articulation_mask(self, mask=None, *, world_count: int | None = None):
        """Model-wide articulation mask (for ``eval_fk(mask=...)``) from a view mask.

        Args:
            mask: ``None`` (all selected), ``(world_count,)`` or ``(world_count, count)`` Boolean.
            world_count: Expected number of worlds (default: ``mask.shape[0]``).

        Returns:
            ``(articulation_count,)`` numpy bool for ``None``, else ``(world_count, articulation_count)``.
        """
        if mask is None:
            return self.articulation_mask.copy()
        mask = jnp.asarray(mask)
        if world_count is None:
            world_count = mask.shape[0] if mask.ndim else 1
        m = resolve_mask(mask, world_count, self.count, (world_count,), "get_model_articulation_mask")
        full = jnp.zeros((world_count, self.model.articulation_count), bool)
        return full.at[:, self.articulation_ids].set(m)

    def eval_fk(self, state: State, mask=None, *, model: Model | None = None) -> State:
        """Forward kinematics of the selected articulations only (Newton's ``ArticulationView.eval_fk``).

        Bodies of other articulations keep their values. Batched states (leading axes) are mapped
        with ``vmap``; ``model`` (default: the view's model) must be unbatched here.

        Args:
            state: State (possibly batched) whose ``joint_q``/``joint_qd`` drive FK.
            mask: Optional Boolean ``(world_count,)`` / ``(world_count, count)`` selection.
            model: Model to evaluate (e.g. one returned by :meth:`set_root_transforms`).

        Returns:
            The updated State.
        """
        model = self.model if model is None else model
        batch = batch_shape(state.joint_q, 0, "joint_q")
        worlds = math.prod(batch)
        art = self.get_model_articulation_mask(mask, world_count=worlds)
        art = jnp.broadcast_to(jnp.asarray(art), (worlds, self.model.articulation_count))
        flat = jax.tree_util.tree_map(lambda x: x.reshape((worlds, *x.shape[len(batch):])), state)
        out = jax.vmap(lambda s, m: eval_fk(model, s.joint_q, s.joint_qd, s, mask=m))(flat, art)
        return jax.tree_util.tree_map(lambda x, ref: x.reshape(ref.shape), out, state)
