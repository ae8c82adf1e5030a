"""Every model x every fitting backend: runtime vs size and gap to the best proven bound.

A thin wrapper of ``optsched bench`` (the engine is ``optsched/bench.py``, so the same run
works after ``pip install .``); the options are the command's:

    python benchmarks/bench_all.py --quick --out results/bench-quick    # a couple of minutes
    python benchmarks/bench_all.py --out results/bench                  # full mode
    python benchmarks/bench_all.py --models set_packing,budgeted_ip --repeats 5 --data ../shared/data
"""

from __future__ import annotations

import sys

from optsched.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
