"""Exact boundaries of the range rules in ``optsched.config`` and the input cap of
``optsched.files``: the largest 64-bit integer, ``MAX_CELLS`` entries, a probability of 1, a cap
of at least one byte, and a file of exactly the cap (mutants BC11, BC16, BC18, BC20, BC21,
BC22)."""

from __future__ import annotations

from pathlib import Path

import pytest

from optsched.config import (
    MAX_CELLS,
    config_from_mapping,
    load_toml,
    probability,
    within_memory,
)
from optsched.files import ENV_MAX_INPUT_BYTES, max_input_bytes, open_user_file


def _sweep_with_seed(seed: int):  # type: ignore[no-untyped-def]
    from optsched.sweep import SweepConfig

    settings = {"kind": "solve", "models": ["set_packing"], "backends": ["greedy"], "sizes": [5], "seeds": [seed]}
    return config_from_mapping(SweepConfig, settings, where="sweep")


def test_an_integer_setting_must_fit_in_a_signed_64_bit_integer() -> None:
    """Rule (config: "integers must fit in 64 bits", i.e. -2**63 .. 2**63 - 1): 2**63 - 1 is
    taken, 2**63 is refused naming the key (mutant BC11 took 2**63: a sweep wrote rows with it)."""
    assert _sweep_with_seed(2**63 - 1).seeds == (2**63 - 1,)
    with pytest.raises(ValueError, match=r"sweep\.seeds\[0\]: a 64-bit integer is out of range"):
        _sweep_with_seed(2**63)


def test_an_array_of_exactly_max_cells_entries_is_allowed() -> None:
    """Rule (within_memory's docstring: holds "at most MAX_CELLS entries"): MAX_CELLS passes,
    one more is refused (mutant BC16 refused exactly MAX_CELLS)."""
    within_memory("n_servers", MAX_CELLS, "the table")
    with pytest.raises(ValueError, match="config.n_servers: the table would hold"):
        within_memory("n_servers", MAX_CELLS + 1, "the table")


def test_a_probability_may_be_0_or_1() -> None:
    """Rule (probability's message: "a probability in [0, 1]", closed): 0.0 and 1.0 pass, a value
    just outside is refused; an ESDP config with ``arrival_prob = 1`` (an arrival every slot) is
    built (mutant BC18 refused 1.0)."""
    from optsched.esdp.experiments import EsdpConfig

    probability(0.0, "p")
    probability(1.0, "p")
    for bad in (-1e-9, 1.0 + 1e-9):
        with pytest.raises(ValueError, match=r"must be a probability in \[0, 1\]"):
            probability(bad, "p")
    assert EsdpConfig(arrival_prob=1.0).arrival_prob == 1.0


def test_the_input_cap_from_the_environment_is_at_least_one_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule (max_input_bytes' message: "a whole number of bytes >= 1"): ``0`` is refused naming the
    variable, ``1`` is a cap of one byte (mutant BC20 took 0, and then refused every file)."""
    monkeypatch.setenv(ENV_MAX_INPUT_BYTES, "0")
    with pytest.raises(ValueError, match=f"{ENV_MAX_INPUT_BYTES}: expected a whole number of bytes >= 1"):
        max_input_bytes()
    monkeypatch.setenv(ENV_MAX_INPUT_BYTES, "1")
    assert max_input_bytes() == 1


def test_a_file_of_exactly_the_cap_is_read_and_one_byte_more_is_refused(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule (files: refused when "larger than the N byte input limit"): a file of exactly N bytes
    is read whole, by ``open_user_file`` and by ``load_toml``; with a cap of N - 1 it is refused
    (mutants BC21, refusing st_size == cap up front, and BC22, refusing once the count read
    reached the cap)."""
    path = tmp_path / "c.toml"
    path.write_text("seed = 1\n")
    size = path.stat().st_size
    monkeypatch.setenv(ENV_MAX_INPUT_BYTES, str(size))
    with open_user_file(path, "config") as fh:
        assert fh.read() == path.read_bytes()
    assert load_toml(path) == {"seed": 1}
    monkeypatch.setenv(ENV_MAX_INPUT_BYTES, str(size - 1))
    with pytest.raises(ValueError, match=f"larger than the {size - 1} byte input limit"):
        load_toml(path)


def test_a_read_that_reaches_the_cap_exactly_is_not_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule (the cap is on bytes *past* the limit, checked again while reading, for a file that
    grows after the check): reading a file of exactly the cap in small chunks ends normally
    (mutant BC22 refused it once the count equalled the cap)."""
    path = tmp_path / "data.bin"
    path.write_bytes(b"x" * 10)
    monkeypatch.setenv(ENV_MAX_INPUT_BYTES, "10")
    with open_user_file(path, "data") as fh:
        chunks = []
        while chunk := fh.read1(3):
            chunks.append(chunk)
    assert b"".join(chunks) == b"x" * 10


def test_a_plain_dataclass_configs_check_runs_when_it_is_read() -> None:
    """A plug-in paper's config may be a plain dataclass (not StrictConfig): ``config_from_mapping``
    coerces its values and then calls its ``check()`` (mutant BC19 dropped the call)."""
    import dataclasses

    from optsched.config import config_from_mapping

    @dataclasses.dataclass(frozen=True)
    class PluginConfig:
        horizon: int = 10

        def check(self) -> None:
            if self.horizon > 100:
                raise ValueError("config.horizon: at most 100")

    assert config_from_mapping(PluginConfig, {"horizon": 50}).horizon == 50
    with pytest.raises(ValueError, match="^config.horizon: at most 100$"):
        config_from_mapping(PluginConfig, {"horizon": 500})
