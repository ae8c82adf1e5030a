"""One policy protocol and one evaluator loop for every paper (after SMPyBandits).

An environment draws its randomness from the generator handed to ``reset`` and exposes,
each slot, an observation; a policy maps it to an action; the environment applies the action
and returns feedback, which the policy observes. Feedback carries the per-slot metrics as a
mapping of names to numbers or arrays; ``evaluate`` stacks them over the horizon, except the
entries the environment names in ``SIGNALS`` (feedback for the policy alone, such as
OGASched's gradient, which would be as large as the decision every slot). An active
:class:`optsched.observe.Observer` is told which policy runs and which slot it is in. The
environments keep the slot order with :class:`SlotClock` and check each action in ``step``.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol

import numpy as np

from optsched.models.validate import positive_int


class Environment(Protocol):
    """``horizon``: the slots the environment can serve after ``reset`` (None: any number)."""

    horizon: int | None

    def reset(self, rng: np.random.Generator) -> None: ...

    def observe(self, t: int) -> Any: ...

    def step(self, action: Any) -> Mapping[str, Any]: ...


class Policy(Protocol):
    name: str

    def reset(self, env: Environment, rng: np.random.Generator) -> None: ...

    def act(self, observation: Any) -> Any: ...

    def observe(self, feedback: Mapping[str, Any]) -> None: ...


class SlotClock:
    """The order every environment keeps: ``reset``, then slots in increasing order, each with
    ``observe(t)`` and at most one ``step``. An environment calls :meth:`start_slots` in ``reset``,
    :meth:`open_slot` in ``observe``, :meth:`check_step` before it reads an action and
    :meth:`close_slot` once it took one (a refused action leaves the slot open). A call out of
    that order is a RuntimeError (a second step in one max-weight frame counted its completions
    twice; a step without ``observe`` after ``reset`` used the last run's outcomes), a slot at or
    past ``horizon`` a ValueError naming ``t`` (an IndexError from inside the environment)."""

    horizon: int | None = None
    _next_slot: int | None = None  # None until reset
    _slot_open = False

    def start_slots(self) -> None:
        self._next_slot = 0
        self._slot_open = False

    def open_slot(self, t: Any) -> int:
        name = type(self).__name__
        if self._next_slot is None:
            raise RuntimeError(f"{name}.observe before reset")
        t = positive_int("t", t, minimum=0)
        horizon = self.horizon
        if horizon is not None and t >= horizon:
            raise ValueError(f"t: slot {t} is past the environment's horizon of {horizon} slots")
        if t < self._next_slot:
            raise RuntimeError(f"{name}.observe({t}): slots go forward, each observed once; the next is "
                               f"{self._next_slot} or later")
        self._next_slot = t + 1
        self._slot_open = True
        return t

    def check_step(self) -> None:
        if not self._slot_open:
            raise RuntimeError(f"{type(self).__name__}.step without observe: one step per observed slot")

    def close_slot(self) -> None:
        self._slot_open = False


def evaluate(
    env: Environment,
    policy: Policy,
    horizon: int,
    *,
    seed: int,
    progress: bool | str = False,
) -> dict[str, np.ndarray]:
    """Run ``policy`` on ``env`` for ``horizon`` slots; returns each metric stacked over t.

    The environment and the policy get independent generators spawned from ``seed``, so two
    policies evaluated with one seed see the same environment draws (common random numbers).
    """
    from optsched.observe import active_observer

    horizon = positive_int("horizon", horizon)
    seed = positive_int("seed", seed, minimum=0)
    observer = active_observer()
    env_rng, policy_rng = np.random.default_rng(seed).spawn(2)
    env.reset(env_rng)
    limit = getattr(env, "horizon", None)
    if limit is not None and horizon > limit:
        raise ValueError(f"horizon: {horizon} slots, but the environment has {limit}")
    policy.reset(env, policy_rng)
    if observer is not None:
        observer.begin_episode(policy.name)
    steps: Iterable[int] = range(horizon)
    if progress:
        from tqdm import tqdm

        steps = tqdm(steps, desc=progress if isinstance(progress, str) else policy.name, leave=False, disable=None)  # no bar off a terminal
    records: dict[str, list[Any]] = {}
    signals = frozenset(getattr(env, "SIGNALS", ()))
    try:
        for t in steps:
            if observer is not None:
                observer.slot = t
            action = policy.act(env.observe(t))
            feedback = env.step(action)
            policy.observe(feedback)
            for key, value in feedback.items():
                if key not in signals:  # arrays copied: an environment or policy may reuse its buffers
                    records.setdefault(key, []).append(value.copy() if isinstance(value, np.ndarray) else value)
    finally:
        if observer is not None:
            observer.slot = -1
    return {k: np.asarray(v) for k, v in records.items()}
