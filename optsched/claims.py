"""What a reproduction concludes: a :class:`Claim` per result (measured number, the paper's
statement, why they differ), and the helpers the papers' claims share: reading a run's CSVs and
metadata back, percentages, the in-loop heuristic-vs-exact rows of shadowed runs, and the mean
with its 95 % Student-t interval."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Claim:
    """One line of a report: a result, the measured number, the paper's, and why they differ."""

    result: str
    measured: str
    paper: str
    note: str


def read_csv(path: Path) -> "pd.DataFrame":
    import pandas as pd

    return pd.read_csv(path)


def pct(x: float) -> str:
    return f"{100 * x:+.1f}%"


def recorded_metadata(run_dir: Path) -> dict[str, Any]:
    """The metadata JSON a study wrote into ``run_dir`` (config, seed, versions, subproblems, and
    the SHA-256 of each file of its set): empty when there is none. When another study left its
    own there too, the one whose files are all still there unchanged (it describes what the
    claims read), then the newest, then the last by name; a JSON file that does not parse, or
    holds no config, is not metadata. (The config came from the first such file by name and
    the subproblems from the last: two studies' metadata could be mixed.)"""
    import json

    from optsched.artifacts import sha256

    found = []
    for meta in run_dir.glob("*.json"):
        try:
            data = json.loads(meta.read_text())
        except (OSError, ValueError):  # malformed JSON, or not UTF-8 text
            continue
        if not (isinstance(data, dict) and isinstance(data.get("config"), dict)):
            continue
        files = data.get("files")
        current = isinstance(files, dict) and bool(files) and all(
            isinstance(name, str) and (run_dir / name).is_file() and sha256(run_dir / name) == digest
            for name, digest in files.items())
        found.append((current, meta.stat().st_mtime_ns, meta.name, data))
    return max(found, key=lambda item: item[:3])[3] if found else {}


def run_subproblems(d: Path, run_dir: str) -> dict[str, Any]:
    """The subproblem summary a run's metadata carries (solvers, shadow, fallbacks)."""
    return recorded_metadata(d / run_dir).get("subproblems", {})


def _gap(x: float | None) -> str:
    return "-" if x is None else ("0" if x == 0 else f"{x:.1e}")


def _ends(terminations: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(terminations.items()))


def shadow_claims(d: Path, run_dir: str, what: str) -> list[Claim]:
    """In-loop heuristic vs exact: per policy solver, every backend's gap to the best bound of
    each subproblem the policy met, and its runtime against the policy's own backend."""
    rows = run_subproblems(d, run_dir).get("shadow", [])
    out = []
    for solver in dict.fromkeys(r["solver"] for r in rows):
        mine = [r for r in rows if r["solver"] == solver]
        own = next(r for r in mine if r["role"] == "policy")
        parts = [f"{r['backend']}{' (policy)' if r['role'] == 'policy' else ''} ({_ends(r['terminations'])}): gap median "
                 f"{_gap(r['median_gap_to_best_bound'])}, max {_gap(r['max_gap_to_best_bound'])}, runtime "
                 + ("-" if r["runtime_vs_policy_backend"] is None else f"x{r['runtime_vs_policy_backend']:.3g}")
                 for r in mine]
        out.append(Claim(
            f"In-loop subproblems of {solver} ({own['model']}, {what}): the policy's backend against exact shadows",
            f"{own['subproblems']} subproblems; " + "; ".join(parts),
            "the paper's algorithm is exact or approximate as stated (checked here on the instances the policy "
            "really meets)",
            "Gaps are to the best bound of each subproblem over every backend (one formula: |bound - objective| / "
            "max(|bound|, |objective|, 1)), over the solves that returned a point (the terminations in parentheses); "
            "runtimes are medians, side by side on the same subproblems "
            f"({run_dir}/shadow.csv, shadow.png).",
        ))
    return out


def mean_ci95(values: Any) -> tuple[float, float]:
    """Mean and the half-width of its 95 % Student-t interval (NaN for one value)."""
    e = estimate(values)
    return e.mean, e.half


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` independent replicates (instances x seeds) with the half-width of its
    95 % Student-t interval (NaN when n < 2); ``dropped``: the replicates left out because they
    had no value (NaN: a share of an oracle's welfare of 0), which :meth:`fmt` says."""

    mean: float
    half: float
    n: int
    dropped: int = 0

    @property
    def low(self) -> float:
        return self.mean - self.half

    @property
    def high(self) -> float:
        return self.mean + self.half

    @property
    def defined(self) -> bool:
        """An interval exists: two or more finite values (one value, or an infinite one, has none)."""
        return self.n >= 2 and math.isfinite(self.mean) and math.isfinite(self.half)

    def excludes_zero(self) -> bool:
        return self.above_zero() or self.below_zero()

    def above_zero(self) -> bool:
        """The 95 % interval lies above 0 (a lead, a growth shown)."""
        return self.defined and self.low > 0

    def below_zero(self) -> bool:
        return self.defined and self.high < 0

    def fmt(self, spec: str = ".3g", *, percent: bool = False) -> str:
        """``mean ± half`` (``+1.2% ± 0.4%`` with ``percent``); the n is said by the claim,
        unless replicates were dropped: then ``(n = 4; 2 of 6 without a value)`` follows (a
        claim said n = 6 of an interval over 4)."""
        if self.n == 0:
            return f"no value ({self.dropped} without one)" if self.dropped else "no value"
        scale, unit, sign = (100.0, "%", "+") if percent else (1.0, "", "")
        head = f"{scale * self.mean:{sign}{spec}}{unit}"
        out = head if not math.isfinite(self.half) else f"{head} ± {scale * self.half:{spec}}{unit}"
        return out + self.dropped_note()

    def dropped_note(self) -> str:
        """`` (n = 4; 2 of 6 without a value)`` when replicates were dropped, else nothing."""
        return f" (n = {self.n}; {self.dropped} of {self.n + self.dropped} without a value)" if self.dropped else ""


def estimate(values: Any) -> Estimate:
    """Mean and 95 % t-interval of ``values`` (one per replicate; NaNs dropped; an infinite value
    leaves the interval undefined: ``Estimate.defined``)."""
    from scipy.stats import t as student_t

    x = np.asarray(values, dtype=np.float64).reshape(-1)
    given = x.size
    x = x[~np.isnan(x)]
    dropped = given - x.size
    if not np.isfinite(x).all():
        return Estimate(float(x.mean()) if x.size else float("nan"), float("nan"), int(x.size), dropped)
    if x.size == 0:
        return Estimate(float("nan"), float("nan"), 0, dropped)
    if x.size < 2:
        return Estimate(float(x.mean()), float("nan"), 1, dropped)
    largest = float(np.abs(x).max())
    # in units of the power of two at the largest value (exact): squares of 1e160 overflowed, and
    # at 1e-170 they underflowed to 0 (an interval of zero width, and "won" on noisy differences)
    scale = math.ldexp(1.0, math.frexp(largest)[1]) if largest > 0.0 else 1.0
    # deviations from the first value: equal values give their value and no spread exactly (nine
    # shares of 0.9 averaged to 0.8999999999999999 and judged "below 90 %" beside "90.0%")
    anchor = x[0] / scale
    d = x / scale - anchor
    half = float(student_t.ppf(0.975, x.size - 1) * d.std(ddof=1) / np.sqrt(x.size)) * scale
    return Estimate(float(anchor + d.mean()) * scale, half, int(x.size), dropped)


def leader(means: Mapping[Any, float | Estimate], *, lowest: bool = False) -> Any | None:
    """The key with the highest mean (``lowest``: the lowest), or None when no mean is finite or
    the best is shared (equal within :data:`ROUNDING`): ``max(..., key=mean)`` named the first
    key when every mean was NaN, or when five policies tied in every replicate."""
    values = {k: (v.mean if isinstance(v, Estimate) else float(v)) for k, v in means.items()}
    known = {k: v for k, v in values.items() if not math.isnan(v)}  # an infinite mean is a value ({'a': 1, 'b': inf} named 'a')
    if not known:
        return None
    best = (min if lowest else max)(known.values())
    top = [k for k, v in known.items()
           if v == best or (math.isfinite(best) and abs(v - best) <= ROUNDING * max(abs(v), abs(best)))]
    return top[0] if len(top) == 1 else None


def named_leader(means: Mapping[Any, float | Estimate], *, lowest: bool = False,
                 label: Callable[[Any], str] = str) -> str:
    """:func:`leader` as text (``label`` of its key), or why there is none (a tie, or no value)."""
    top = leader(means, lowest=lowest)
    if top is not None:
        return label(top)
    values = [v.mean if isinstance(v, Estimate) else float(v) for v in means.values()]
    return "none (no value)" if all(math.isnan(v) for v in values) else "none (tied)"


def verdict(difference: Estimate, *, subject: str, other: str) -> str:
    """"won" / "lost" only when the 95 % interval of the paired difference (``subject`` minus
    ``other``, higher is better) excludes 0; otherwise no difference is shown."""
    if isinstance(difference, Lead):  # the verdict is the paired difference's, ratio or not
        difference = difference.difference
    if not difference.defined:
        return (f"no verdict between {subject} and {other}: the difference has no 95 % interval "
                f"(n = {difference.n}{', an infinite value' if difference.n >= 2 else ''})")
    if difference.excludes_zero():
        return f"{subject} {'won' if difference.mean > 0 else 'lost'} against {other} (95 % interval of the difference excludes 0)"
    return f"no difference between {subject} and {other} at 95 % (the interval of the difference includes 0)"


@dataclass(frozen=True)
class Tally:
    """Points (keys) sorted by the 95 % interval of their paired comparison: above 0
    (``ahead``), below (``behind``), including 0 (``level``), or none (``open``: fewer than
    two replicates, or a value that is not finite). ``above_zero`` / ``below_zero`` alone are
    both False without an interval, and the figures' counts put every such point under "no
    difference at 95 %" (at n = 1, values 9 grid steps apart read "tie")."""

    ahead: list[Any]
    behind: list[Any]
    level: list[Any]
    open: list[Any]

    def counts(self) -> str:
        """``ahead at 3 of 12, behind at 1, no difference at 6, no interval at 2 (fewer than 2
        replicates or a value not finite)``; the last part only when some point has none."""
        total = len(self.ahead) + len(self.behind) + len(self.level) + len(self.open)
        text = f"ahead at {len(self.ahead)} of {total}, behind at {len(self.behind)}, no difference at {len(self.level)}"
        return text + (f", no interval at {len(self.open)} (fewer than 2 replicates or a value not finite)"
                       if self.open else "")


def tally(comparisons: Mapping[Any, "Estimate"]) -> Tally:
    """:class:`Tally` of paired comparisons (:class:`Estimate` of a difference, or a :class:`Lead`,
    whose paired difference decides), in their order."""
    out: tuple[list[Any], list[Any], list[Any], list[Any]] = ([], [], [], [])
    for key, e in comparisons.items():
        diff = e.difference if isinstance(e, Lead) else e
        out[0 if diff.above_zero() else 1 if diff.below_zero() else 2 if diff.defined else 3].append(key)
    return Tally(*out)


def best_on_the_mean(baselines: Mapping[str, Any]) -> str | None:
    """The baseline with the highest mean over the replicates where every baseline has a value
    (over each one's own values when there are none such; an infinite value counts), the first
    among ties; None when none has a value. The comparator of "the best baseline": a policy. The
    per-replicate maximum over baselines is none (E max >= max E): with three policies of one
    mean, a paired comparison with it said "behind" in 18 % of draws, against 4.6 % with either
    baseline (probe BL)."""
    values = {k: np.asarray(v, dtype=np.float64).reshape(-1) for k, v in baselines.items()}
    if not values:
        return None
    common = ~np.any([np.isnan(v) for v in values.values()], axis=0)  # the replicates where every baseline has one
    with np.errstate(invalid="ignore"):
        means = {k: float(v[common].mean()) if common.any() else (float(np.nanmean(v)) if (~np.isnan(v)).any() else math.nan)
                 for k, v in values.items()}
    known = {k: v for k, v in means.items() if not math.isnan(v)}
    return max(known, key=lambda k: known[k]) if known else None


def lead_over_best(rows: Sequence[Mapping[str, float]], subject: str) -> tuple[str | None, "Lead"]:
    """(the baseline best on the mean, ``subject``'s :func:`relative_lead` over it): ``rows``
    holds each replicate's value of every policy, ``subject`` among them; every other policy
    is a baseline (:func:`best_on_the_mean`)."""
    names = [k for k in dict.fromkeys(k for r in rows for k in r) if k != subject]  # a replicate may lack one (NaN)
    best = best_on_the_mean({b: [r.get(b, math.nan) for r in rows] for b in names})
    other = [r.get(best, math.nan) if best is not None else math.nan for r in rows]
    return best, relative_lead([r.get(subject, math.nan) for r in rows], other)


MIN_REPLICATES = 5  # every claim's number comes from at least this many instances x seeds (--full: 10)


def replication(n: int, full: bool, unit: str = "instances x seeds") -> str:
    """The sentence a claim carries about its replication: ``n`` replicates of ``unit`` (what a
    replicate draws anew: ``"sample paths"`` where the instance is fixed), and whether that is
    below what the mode asks (5 reduced, 10 with --full)."""
    need = 2 * MIN_REPLICATES if full else MIN_REPLICATES
    return f"n = {n} {unit}" + ("" if n >= need else f" (fewer than {need}: the {'paper' if full else 'reduced'} scale of this run)")


def replicate_dirs(run_dir: Path) -> list[Path]:
    """A run's replicate directories: the run's own (replicate 0) and ``RUN/replicates/r<i>``
    (:class:`optsched.papers.ReproductionRun`), in replicate order; any other entry there (a
    note a user left, ``readme.txt``, ``r01`` beside ``r1``) is not a replicate (its name
    crashed the sort). ValueError when two of them record the same seed: a copied directory
    (``r9`` a copy of ``r4``) counted as a sixth independent replicate (probe BL)."""
    extra = [p for p in (run_dir / "replicates").glob("r*") if p.is_dir() and re.fullmatch(r"r(0|[1-9][0-9]*)", p.name)]
    dirs = [run_dir, *sorted(extra, key=lambda p: int(p.name[1:]))]
    seen: dict[Any, Path] = {}
    for d in dirs:
        seed = recorded_metadata(d).get("seed")
        if seed is None:
            continue
        if repr(seed) in seen:
            raise ValueError(f"claims: {seen[repr(seed)]} and {d} record the same seed {seed!r}: one replicate twice "
                             "(a copied directory?); remove one, or run the reproduction again")
        seen[repr(seed)] = d
    return dirs


def over_replicates(run_dir: Path, measure: Callable[[Path], Any]) -> list[Any]:
    """``measure(directory)`` of every replicate of the run (one value, or a dict of values)."""
    return [measure(d) for d in replicate_dirs(run_dir)]


def skipped(run_dir: Path) -> str | None:
    """Why ``optsched reproduce`` skipped the run (its data directory was absent), or None."""
    note = run_dir / "SKIPPED.txt"
    return note.read_text().strip() if note.is_file() else None


ROUNDING = 1e-12  # relative: two measurements this close are one number computed two ways


@dataclass(frozen=True)
class Lead(Estimate):
    """``subject / other - 1`` of the means over paired replicates, with Fieller's 95 % interval
    ``[low, high]``: the ratios R for which the paired values ``subject - (1 + R) other`` have a
    mean the t-test at 95 % does not reject. It counts the uncertainty of the baseline's mean
    (dividing the difference's interval by that mean, as before, took it as exact), it need not
    be symmetric about the estimate (``half`` is its larger side), and it excludes 0 exactly when
    the paired difference's interval does. ``difference`` is that paired difference, on which a
    verdict rests; ``reference`` the baseline's mean.

    No ratio (``mean``, ``low`` and ``high`` NaN) when the baseline's mean is not clearly above 0
    (its own 95 % interval reaches 0, or it has none): the ratio's interval is then unbounded,
    and a lead over a policy that loses money says nothing (0.2 % of a mean near 0 printed
    +166,567 %, and below 0 the reference switched to the subject's mean)."""

    low_: float = math.nan
    high_: float = math.nan
    difference: Estimate = Estimate(math.nan, math.nan, 0)
    reference: Estimate = Estimate(math.nan, math.nan, 0)

    @property
    def low(self) -> float:
        return self.low_

    @property
    def high(self) -> float:
        return self.high_

    @property
    def defined(self) -> bool:
        return self.n >= 2 and all(math.isfinite(v) for v in (self.mean, self.low_, self.high_))

    def above_zero(self) -> bool:
        """Ahead: the paired difference's interval lies above 0 (with a ratio, so does its interval)."""
        return self.difference.above_zero()

    def below_zero(self) -> bool:
        return self.difference.below_zero()

    def fmt(self, spec: str = ".3g", *, percent: bool = False) -> str:
        scale, unit, sign = (100.0, "%", "+") if percent else (1.0, "", "")
        if self.n == 0 or not math.isfinite(self.mean):
            if self.n >= 1 and not math.isnan(self.difference.mean):
                why = (f"the baseline's mean {self.reference.fmt('.4g')} is not clearly above 0"
                       if math.isfinite(self.difference.mean) else "a value is not finite")
                return f"no ratio ({why}; difference {self.difference.fmt('.4g')})"
            return super().fmt(spec, percent=percent)
        out = f"{scale * self.mean:{sign}{spec}}{unit}"
        if self.defined:
            out += f" [{scale * self.low_:{sign}{spec}}{unit}, {scale * self.high_:{sign}{spec}}{unit}]"
        return out + self.dropped_note()


def relative_lead(subject: Any, other: Any) -> Lead:
    """``subject`` ahead of ``other`` over paired replicates, relative: ``subject / other - 1`` of
    the means with Fieller's 95 % interval (:class:`Lead`). Differences within rounding of the
    values (:data:`ROUNDING`) count as 0."""
    from scipy.stats import t as student_t

    a = np.asarray(subject, dtype=np.float64).reshape(-1)
    b = np.asarray(other, dtype=np.float64).reshape(-1)
    if a.size != b.size:
        raise ValueError(f"relative_lead: {a.size} values of the subject against {b.size} of the other: "
                         "paired replicates come in equal numbers")
    both = ~(np.isnan(a) | np.isnan(b))  # the pairs the difference keeps, for both means too
    dropped = int(both.size - both.sum())
    a, b = a[both], b[both]
    if not (np.isfinite(a).all() and np.isfinite(b).all()):  # no interval, and no ratio to take
        with np.errstate(invalid="ignore"):
            d = Estimate(float(np.mean(a - b)) if a.size else math.nan, math.nan, int(a.size), dropped)
        return Lead(math.nan, math.nan, int(a.size), dropped, difference=d, reference=estimate(b))
    diff = a - b
    # equal quantities summed in another order differ by rounding, not by the policies (0.3
    # against 0.1 + 0.2 "lost" on -5.6e-17 with a zero-width interval)
    diff[np.abs(diff) <= ROUNDING * np.maximum(np.abs(a), np.abs(b))] = 0.0
    d, ref = estimate(diff), estimate(b)
    d = Estimate(d.mean, d.half, d.n, dropped)
    no_ratio = Lead(math.nan, math.nan, d.n, dropped, difference=d, reference=ref)
    if d.n == 0 or not ref.mean > 0:
        return no_ratio
    ratio = d.mean / ref.mean
    if d.n < 2:
        return Lead(ratio, math.nan, d.n, dropped, difference=d, reference=ref)
    if not ref.low > 0:
        return no_ratio
    # R with (mean(d) - R mean(b))^2 <= q var(d - R b), q = t^2 / n: A R^2 - 2 B R + C <= 0, in
    # units of mean(b) (no underflow at 1e-160, no overflow at 1e160): mean(b) = 1, mean(d) = R*
    q = float(student_t.ppf(0.975, d.n - 1)) ** 2 / d.n
    cov = np.cov(diff / ref.mean, b / ref.mean, ddof=1)
    A = 1.0 - q * cov[1, 1]  # > 0 exactly when mean(b) is clearly away from 0; rounding can still say otherwise
    B = ratio - q * cov[0, 1]
    C = ratio * ratio - q * cov[0, 0]
    if not (A > 0 and math.isfinite(B) and math.isfinite(C)):
        return no_ratio
    root = math.sqrt(max(B * B - A * C, 0.0))  # >= 0: the ratio itself satisfies the inequality
    low, high = min((B - root) / A, ratio), max((B + root) / A, ratio)  # the ratio inside, whatever the rounding
    if not (math.isfinite(low) and math.isfinite(high)):
        return no_ratio
    return Lead(ratio, max(ratio - low, high - ratio), d.n, dropped, low_=low, high_=high, difference=d, reference=ref)


def run_config(run_dir: Path) -> dict[str, Any]:
    """The config a run recorded in its metadata (empty when it has none)."""
    return recorded_metadata(run_dir).get("config", {})


def unpaired(d: Path, run: str, reference: str, settings: Any) -> str | None:
    """Why the rows of ``run`` cannot be paired with those of ``reference`` (both under ``d``):
    the config keys outside ``settings`` (the keys ``run`` sets on purpose) in which some
    replicate of the two differs. A run left in the same ``--out`` by another ``reproduce``
    (another seed, scale or setting) drew other instances; its rows would be joined all the same."""
    differ: set[str] = set()
    for a, b in zip(replicate_dirs(d / run), replicate_dirs(d / reference)):
        ca, cb = run_config(a), run_config(b)
        differ |= {k for k in ca.keys() | cb.keys() if k not in settings and ca.get(k) != cb.get(k)}
    if not differ:
        return None
    return (f"not compared: {run} and {reference} were run with different {', '.join(sorted(differ))} (one of them "
            "is left from another reproduce; rerun both)")
