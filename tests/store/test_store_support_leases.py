"""Support leases in the store: one holder per pair, an expired lease swept, and the lease of a model run that
died on this machine taken over at once (`take_support_pairs`), the rule relevance's `take_pairs` follows."""
from __future__ import annotations

import subprocess
import sys

from trecbench.store import Workspace
from trecbench.store.assessors import MODEL_HOLDER, machine_id, model_holder, run_is_dead

PAIR = ("A", "t1", 0, "d1")


def dead_holder(judge: str) -> str:
    """A holder naming a process of this machine that has exited."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return f"{MODEL_HOLDER}{machine_id()}{int(gone.stdout):08x}beef {judge}"


def test_a_live_holder_keeps_the_pair_until_its_lease_expires(tmp_path):
    ws = Workspace.init(tmp_path / "bench")
    mine = model_holder("m:support")
    assert ws.take_support_pairs(mine, [PAIR], expires_at=100, at=0) == [PAIR]
    assert ws.take_support_pairs("alice", [PAIR], expires_at=200, at=50) == []
    assert ws.take_support_pairs(mine, [PAIR], expires_at=200, at=50) == [PAIR]  # its own again
    assert ws.take_support_pairs("alice", [PAIR], expires_at=300, at=250) == [PAIR]  # expired at 200
    assert ws.support_leases(260) == {PAIR: "alice"}


def test_the_lease_of_a_dead_local_run_is_taken_over_at_once_by_anyone(tmp_path):
    ws = Workspace.init(tmp_path / "bench")
    dead = dead_holder("m:support")
    assert run_is_dead(dead) and not run_is_dead(model_holder("m:support")) and not run_is_dead("alice")
    assert ws.take_support_pairs(dead, [PAIR], expires_at=1e9, at=0) == [PAIR]
    other = model_holder("m:support")
    assert ws.take_support_pairs(other, [PAIR], expires_at=1e9, at=1) == [PAIR]
    assert ws.support_leases(2) == {PAIR: other}
    ws.drop_support_leases(other)
    ws.take_support_pairs(dead, [PAIR], expires_at=1e9, at=0)
    assert ws.take_support_pairs("alice", [PAIR], expires_at=1e9, at=1) == [PAIR]


def test_another_machine_s_run_is_never_taken_for_dead(tmp_path):
    ws = Workspace.init(tmp_path / "bench")
    elsewhere = f"{MODEL_HOLDER}{'0' * 8 if machine_id() != '0' * 8 else '1' * 8}00000001beef m:support"
    assert not run_is_dead(elsewhere)
    ws.take_support_pairs(elsewhere, [PAIR], expires_at=1e9, at=0)
    assert ws.take_support_pairs("alice", [PAIR], expires_at=1e9, at=1) == []
