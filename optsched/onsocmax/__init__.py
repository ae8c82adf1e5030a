"""ONSOCMAX (paper 002): marginal-cost prices, job utilities, and the per-job pseudo-welfare
program P3 (model ``pseudo_welfare``; backends ``kkt``, ``alm``, ``cvxpy``).

See docs/onsocmax_models.md. Submodules: :mod:`optsched.models.prices`,
:mod:`optsched.models.utilities`.
"""
