"""The compiled feasibility checks the seam and the environments run on every solve and slot,
against references that share no code with them, where they can differ: at the edge of each
rule's tolerance (half of it inside, twice and ten times outside), on the last group, and on
selections that repeat a set or clash on their smallest element.

A mutation probe found that each check could be loosened (a tolerance 100 times wider, the
last (node, resource) group skipped, a set chosen twice, a clash on the first element missed)
with every test still passing: the earlier tests drew their points far from the edges, and the
projection's ``violations`` calls the same kernel as its ``audit``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from optsched.models import CapacityProjection, SetPacking
from optsched.ogasched.scenario import synthetic_scenario

FACTORS = (0.5, 2.0, 10.0)  # times the tolerance past a bound: inside, then outside twice


def _packing_reference(model: SetPacking, chosen: tuple[int, ...]) -> float | None:
    """The sum of the chosen weights when the selection is clean (indices in range, no set twice,
    sets pairwise disjoint), else None: plain Python sets."""
    if any(i < 0 or i >= model.n_sets for i in chosen) or len(set(chosen)) < len(chosen):
        return None
    used: set[int] = set()
    for i in chosen:
        members = set(int(e) for e in model.sets[i])
        if used & members:
            return None
        used |= members
    return float(sum(model.weights[i] for i in chosen))


# the family's four elements placed in a universe of M: a bit each within one word, across the
# boundary of two (63 | 64), and in a universe too large for a bit each (the chosen elements sorted)
UNIVERSES = [(4, (0, 1, 2, 3)), (128, (62, 63, 64, 127)), (10**6, (0, 63, 999_998, 999_999))]


@pytest.mark.parametrize("universe", UNIVERSES, ids=lambda u: f"M={u[0]}")
@pytest.mark.parametrize("seed", range(6))
def test_the_set_packing_audit_is_the_plain_rule_on_every_short_selection(seed: int, universe) -> None:
    """Every selection of up to three indices (repeats, any order, out of range) of a small
    family with empty sets and shared smallest elements."""
    rng = np.random.default_rng(seed)
    n_elements, element = universe
    sets = [[], [0], [0, 1], [1, 2], [], [2], [0, 3]]
    order = rng.permutation(len(sets))
    model = SetPacking(n_elements, [[element[e] for e in sets[i]] for i in order], rng.uniform(0.5, 2.0, len(sets)))
    for size in range(4):
        for chosen in itertools.product(range(-1, model.n_sets + 1), repeat=size):
            expected = _packing_reference(model, chosen)
            idx = np.array(chosen, dtype=np.int64)
            problems, value = model.audit(idx)
            assert (problems == []) == (expected is not None), (chosen, problems)
            assert (model.violations(idx) == []) == (expected is not None), chosen
            if expected is not None:
                assert value == pytest.approx(expected, rel=1e-12)


def _projection_reference(model: CapacityProjection, y: np.ndarray, tol: float) -> bool:
    """The rule of ``CapacityProjection.violations`` in numpy: finite, -tol <= y_i <= u_i +
    tol (1 + u_i), each group's load <= c_g + tol (1 + c_g)."""
    load = np.bincount(model.group, weights=y, minlength=model.n_groups)
    return bool(np.isfinite(y).all() and (y >= -tol).all() and (y <= model.upper + tol * (1 + model.upper)).all()
                and (load <= model.capacity + tol * (1 + model.capacity)).all())


@pytest.mark.parametrize("tol", [1e-9, 1e-6])
def test_the_projection_check_holds_each_rule_at_its_tolerance(tol: float) -> None:
    # groups 0 and 1 (the last) with room inside every upper bound to be overloaded
    model = CapacityProjection(z=np.zeros(5), upper=[1.0, 1.0, 1.2, 2.0, 2.0], group=[0, 0, 0, 1, 1],
                               capacity=[1.5, 2.5])
    base = np.array([0.5, 0.5, 0.25, 1.0, 1.0])
    cases = []
    for f in FACTORS:
        for i in range(5):  # a bound of one entry: below 0, above u_i
            for y_i in (-f * tol, model.upper[i] + f * tol * (1 + model.upper[i])):
                y = np.zeros(5)
                y[i] = y_i
                cases.append((f, y))
        for g, members in ((0, [0, 1, 2]), (1, [3, 4])):  # a group's load past its capacity
            y = np.zeros(5)
            y[members] = base[members]
            y[members[-1]] += model.capacity[g] - y[members].sum() + f * tol * (1 + model.capacity[g])
            cases.append((f, y))
    for f, y in cases:
        expected = _projection_reference(model, y, tol)
        assert expected == (f < 1), (f, y)
        assert (model.audit(y, tol=tol)[0] == []) == expected, (f, y)
        assert (model.violations(y, tol=tol) == []) == expected, (f, y)


def _decision_edges(scn, tol: float) -> list[tuple[float, np.ndarray, str]]:
    """Decisions one rule past (or half inside) its tolerance: an entry of y below 0 or above
    a_l^k, and the load of the first and the last (node, resource) group that can be
    overloaded within (5), each with the rule it breaks."""
    upper = np.asarray(scn.upper)
    cases = []
    flat_group = np.asarray(scn.group).reshape(upper.shape)
    capacity = np.asarray(scn.capacity).reshape(-1)
    room = np.bincount(flat_group.reshape(-1), weights=upper.reshape(-1), minlength=capacity.size)
    fits = np.flatnonzero(room > capacity * (1 + 1e-3) + 1e-3)
    assert fits.size, "the scenario has no group that can be overloaded"
    for f in FACTORS:
        e, k = np.unravel_index(int(np.argmin(np.where(upper > 0, upper, np.inf))), upper.shape)
        y = np.zeros_like(upper)
        y[e, k] = -f * tol
        cases.append((f, y, "(5) lower"))
        y = np.zeros_like(upper)
        y[e, k] = upper[e, k] + f * tol * max(1.0, upper[e, k])
        if y[e, k] <= capacity[flat_group[e, k]]:  # past a_l^k only, not past c_r^k as well
            cases.append((f, y, "(5) request"))
        for g in (fits[0], fits[-1]):
            members = flat_group == g
            y = np.zeros_like(upper)
            target = capacity[g] + f * tol * max(1.0, capacity[g])
            y[members] = upper[members] * (target / room[g])
            cases.append((f, y, "(6) capacity"))
    return cases


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("tol", [1e-9, 1e-6])
def test_the_decision_check_holds_each_rule_at_its_tolerance(seed: int, tol: float) -> None:
    """``Scenario.first_violation`` (the compiled check of every OGASched slot) against
    ``Scenario.violations`` (numpy, a sparse product) and the rule each case was built to break,
    naming the same node and resource for a capacity."""
    scn = synthetic_scenario(np.random.default_rng(seed), n_ports=5, n_nodes=12, n_resources=3, contention=20.0)
    for f, y, rule in _decision_edges(scn, tol):
        found, listed = scn.first_violation(y, tol=tol), scn.violations(y, tol=tol)
        assert (listed == []) == (f < 1), (f, rule, listed)
        assert (found is None) == (f < 1), (f, rule, found)
        if found is not None:
            assert found.startswith(rule) and listed[0].startswith(rule), (found, listed)
            if rule == "(6) capacity":  # one group over: both name it
                assert found.split(" exceeded")[0] == listed[0].split(" exceeded")[0], (found, listed)
