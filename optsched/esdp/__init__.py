"""ESDP (paper 000): learning to dispatch multi-server jobs in bipartite graphs.

``env``        the bipartite ports x servers environment and its welfare normalisation.
``statistics`` the evolving statistics (7)-(10), the scale-up (13)-(15) and delta(t), g(t).
``policy``     ESDP (Algorithm 1) on top of the budget-family DP (Algorithm 2).
``baselines``  HSWF, LCF, LCF-channel, LWTF (Section 4.1).
``learners``   learning baselines CUCB, Greedy, TS on the exact slot knapsack.
``oracle``     the exact slot knapsack and the oracle that knows the true means.
``experiments`` ``optsched run esdp``: Fig. 2-10.
"""
