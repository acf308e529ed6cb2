"""The one stop rule of the tree and the graph search (ask/search/stopping.py)."""

from longqa.ask.search.stopping import Stopping


def test_caps_then_patience_then_room():
    rule = Stopping(max_nodes=3, max_seconds=60, confidence=0.6, patience=2)
    assert rule.capped(2) is None and rule.capped(3) == "max nodes"
    assert not rule.judged(0.5) and not rule.ever
    assert not rule.judged(0.9, may_count=False)  # held back (a multi-hop question before its hop)
    assert rule.judged(0.7) and rule.ever and not rule.done
    assert rule.judged(0.61) and rule.done
    assert rule.out_of_room(1900, 2000, "frontier empty") == "budget full"
    assert rule.out_of_room(400, 2000, "graph exhausted") == "graph exhausted"
    assert Stopping(10, 0.0, 0.6, 2).capped(0) == "max seconds"
