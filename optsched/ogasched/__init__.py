"""OGASched (paper 003): online gradient ascent for multi-server jobs, its baselines, the best
offline stationary allocation, Alibaba trace loading and the experiments of Section IV."""
