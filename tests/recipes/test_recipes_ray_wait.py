"""The Ray readiness wait: ready when complete, fails fast on a dead step, times out with what it saw."""

from __future__ import annotations

import subprocess

from rlif.recipes.ray_wait import ClusterState, wait_for_cluster


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_ready_once_all_nodes_and_gpus_join():
    states = iter([None, ClusterState(1, 8), ClusterState(2, 16)])
    clock = FakeClock()
    assert wait_for_cluster(lambda: next(states), 2, 16, 60, clock=clock, sleep=clock.sleep) == ""
    assert clock.now == 4.0


def test_timeout_reports_what_it_saw():
    clock = FakeClock()
    reason = wait_for_cluster(lambda: ClusterState(1, 8), 2, 16, 10, clock=clock, sleep=clock.sleep)
    assert "timed out" in reason and "1 node(s), 8 GPU(s)" in reason
    reason = wait_for_cluster(lambda: None, 2, 16, 10, clock=clock, sleep=clock.sleep)
    assert "head unreachable" in reason


def test_dead_step_fails_fast():
    proc = subprocess.Popen(["true"])
    proc.wait()
    clock = FakeClock()
    reason = wait_for_cluster(lambda: None, 2, 16, 600, pids=[proc.pid], clock=clock, sleep=clock.sleep)
    assert str(proc.pid) in reason and clock.now == 0.0
