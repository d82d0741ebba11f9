"""The garbage collector's settings around a run's long-lived objects are restored afterwards."""

from __future__ import annotations

import gc

import pytest

from repro_lint.heap import collector_paused, kept_out_of_collections


@pytest.fixture
def collector_enabled():
    yield
    gc.enable()


def test_collections_are_paused_in_the_block_and_resume_after(collector_enabled):
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_caller_paused_stays_paused(collector_enabled):
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_collector_resumes_after_an_error(collector_enabled):
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_objects_alive_on_entry_are_frozen_in_the_block_and_tracked_again_after():
    kept = [[index] for index in range(1000)]
    with kept_out_of_collections():
        assert gc.get_freeze_count() >= len(kept)
    assert gc.get_freeze_count() == 0
