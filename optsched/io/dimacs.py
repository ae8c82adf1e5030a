"""DIMACS clique graphs (``.clq``) as ``set_packing`` models: the maximum-weight clique.

Format (the DIMACS challenge's graph format, with the vertex weights of its weighted variant):
``c ...`` comment lines; one problem line ``p edge n m`` (``p col`` is read the same); ``n v w``
lines giving vertex v the weight w >= 0 (1 for a vertex without one); then the m edge lines
``e u v`` with 1 <= u, v <= n, u != v. An edge listed twice (in either direction) is one edge;
the header's m counts the lines, so a file cut short is refused.

A clique of G is an independent set of its complement, and an independent set is a set packing
whose elements are the edges (paper 004's model with jobs = vertices and workers = edges):
set i is vertex i + 1, over the pairs {u, v} that are *not* edges of G, each pair one element
held by the sets of u and v. A packing takes no two vertices of a missing edge, so its optimum
is the maximum weight of a clique of G (:meth:`DimacsGraph.clique_packing`, what a ``.clq``
file reads as). :meth:`DimacsGraph.independent_set_packing` is the same construction on the
edges of G itself.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from optsched.io import register_reader
from optsched.io.numbers import parse_count, parse_float, parse_int, require_whole_last_line, text_lines
from optsched.models.set_packing import SetFamily, SetPacking

MAX_VERTICES = 10**6
MAX_PAIRS = 10**6  # SetPacking's own limit on elements (a HiGHS row, a bitset bit each)
PROBLEM_WORDS = ("edge", "col")


@dataclass(frozen=True, eq=False)
class DimacsGraph:
    """A weighted graph: ``weights[i]`` of vertex i + 1; ``edges`` (k, 2) 0-based pairs u < v,
    sorted, each once."""

    n_vertices: int
    weights: np.ndarray
    edges: np.ndarray

    def clique_packing(self) -> SetPacking:
        """The set packing whose optimum is the maximum-weight clique (module docstring)."""
        n = self.n_vertices
        pairs = n * (n - 1) // 2 - self.edges.shape[0]
        if pairs > MAX_PAIRS:
            raise ValueError(f"dimacs: the clique problem of this graph is a set packing over its {pairs} "
                             f"non-adjacent vertex pairs, more than {MAX_PAIRS:.0e}")
        adjacent = np.zeros(n, dtype=bool)
        us, vs = [], []
        starts = np.searchsorted(self.edges[:, 0], np.arange(n + 1))
        for u in range(n - 1):
            adjacent[:] = False
            adjacent[self.edges[starts[u]:starts[u + 1], 1]] = True
            v = u + 1 + np.flatnonzero(~adjacent[u + 1:])
            us.append(np.full(v.shape[0], u))
            vs.append(v)
        missing = np.column_stack([np.concatenate(us), np.concatenate(vs)]) if n > 1 else np.zeros((0, 2), np.int64)
        return _edge_packing(n, self.weights, missing)

    def independent_set_packing(self) -> SetPacking:
        """The set packing whose optimum is the maximum-weight independent set of the graph."""
        if self.edges.shape[0] > MAX_PAIRS:
            raise ValueError(f"dimacs: the independent-set problem of this graph is a set packing over its "
                             f"{self.edges.shape[0]} edges, more than {MAX_PAIRS:.0e}")
        return _edge_packing(self.n_vertices, self.weights, self.edges)


def _edge_packing(n: int, weights: np.ndarray, pairs: np.ndarray) -> SetPacking:
    """Sets = vertices, elements = ``pairs`` (element e in the sets of both its ends). A graph
    without pairs gets one element no set holds (a set packing has at least one element)."""
    k = pairs.shape[0]
    owner = np.concatenate([pairs[:, 0], pairs[:, 1]])
    element = np.concatenate([np.arange(k), np.arange(k)])
    return SetPacking(n_elements=max(k, 1), sets=SetFamily.from_pairs(max(k, 1), n, owner, element), weights=weights)


def parse_dimacs_graph(text: str) -> DimacsGraph:
    """The graph of a DIMACS ``.clq`` text; ValueError naming the line for anything else."""
    require_whole_last_line(text)
    n = declared = None
    weights: np.ndarray | None = None
    weighted: set[int] = set()
    ends = array("q")  # u, v of each edge in turn: 16 bytes an edge (a list of tuples took ~100)
    for number, line in enumerate(text_lines(text), start=1):
        tokens = line.split()
        if not tokens or tokens[0] == "c":
            continue
        kind, where = tokens[0], f"dimacs: line {number}"
        if kind == "p":
            if n is not None:
                raise ValueError(f"{where}: a second problem line")
            if len(tokens) != 4 or tokens[1] not in PROBLEM_WORDS:
                raise ValueError(f"{where}: expected the problem line 'p edge N M', got {line.strip()[:40]!r}")
            n, declared = parse_count(tokens[2], where, "N"), parse_count(tokens[3], where, "M")
            if not 1 <= n <= MAX_VERTICES:
                raise ValueError(f"{where}: N = {n} vertices, expected 1..{MAX_VERTICES}")
            weights = np.ones(n)
            continue
        if kind not in ("n", "e"):
            raise ValueError(f"{where}: unknown line type {kind[:20]!r} (expected c, p, n or e)")
        if n is None or weights is None:
            raise ValueError(f"{where}: {kind!r} line before the problem line 'p edge N M'")
        if len(tokens) != 3:
            raise ValueError(f"{where}: expected '{kind} {'V W' if kind == 'n' else 'U V'}', got {len(tokens) - 1} fields")
        v = _vertex(tokens[1], n, where)
        if kind == "n":
            if v in weighted:
                raise ValueError(f"{where}: vertex {v + 1} is given a weight twice")
            try:
                w = parse_float(tokens[2])
            except ValueError as exc:
                raise ValueError(f"{where}: the weight of vertex {v + 1}: {exc}") from None
            if w < 0:
                raise ValueError(f"{where}: vertex {v + 1} has a negative weight ({tokens[2]})")
            weighted.add(v)
            weights[v] = w
        else:
            u = _vertex(tokens[2], n, where)
            if u == v:
                raise ValueError(f"{where}: a loop at vertex {v + 1} (an edge needs two vertices)")
            ends.extend((min(u, v), max(u, v)))
    if n is None or weights is None:
        raise ValueError("dimacs: no problem line 'p edge N M'")
    if len(ends) // 2 != declared:
        raise ValueError(f"dimacs: the problem line declares {declared} edges, the file lists {len(ends) // 2}")
    edges = np.unique(np.frombuffer(ends, dtype=np.int64).reshape(-1, 2), axis=0)
    return DimacsGraph(n, weights, edges)


def _vertex(token: str, n: int, where: str) -> int:
    try:
        v = parse_int(token)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if not 1 <= v <= n:
        raise ValueError(f"{where}: vertex {v} outside 1..{n}")
    return v - 1


@register_reader(".clq")
def read_dimacs_clique(text: str) -> list[SetPacking]:
    """A ``.clq`` file as its maximum-weight clique problem (module docstring)."""
    return [parse_dimacs_graph(text).clique_packing()]
