"""One policy protocol and one evaluator loop for every paper (after SMPyBandits).

An environment draws its randomness from the generator handed to ``reset`` and exposes,
each slot, an observation; a policy maps it to an action; the environment applies the action
and returns feedback, which the policy observes. Feedback carries the per-slot metrics as a
mapping of names to numbers or arrays; ``evaluate`` stacks them over the horizon, except the
entries the environment names in ``SIGNALS`` (feedback for the policy alone, such as
OGASched's gradient, which would be as large as the decision every slot). An active
:class:`optsched.observe.Observer` is told which policy runs and which slot it is in.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol

import numpy as np

from optsched.models.validate import positive_int


class Environment(Protocol):
    def reset(self, rng: np.random.Generator) -> None: ...

    def observe(self, t: int) -> Any: ...

    def step(self, action: Any) -> Mapping[str, Any]: ...


class Policy(Protocol):
    name: str

    def reset(self, env: Environment, rng: np.random.Generator) -> None: ...

    def act(self, observation: Any) -> Any: ...

    def observe(self, feedback: Mapping[str, Any]) -> None: ...


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
    policy.reset(env, policy_rng)
    if observer is not None:
        observer.begin_episode(policy.name)
    steps: Iterable[int] = range(horizon)
    if progress:
        from tqdm import tqdm

        steps = tqdm(steps, desc=progress if isinstance(progress, str) else policy.name, leave=False, disable=None)  # no bar off a terminal
    records: dict[str, list[Any]] = {}
    signals = frozenset(getattr(env, "SIGNALS", ()))
    for t in steps:
        if observer is not None:
            observer.slot = t
        action = policy.act(env.observe(t))
        feedback = env.step(action)
        policy.observe(feedback)
        for key, value in feedback.items():
            if key not in signals:
                records.setdefault(key, []).append(value)
    return {k: np.asarray(v) for k, v in records.items()}
