"""Hocus Pocus agents: the heuristics (``heuristic``: greedy, with ``planner`` and ``consensus``),
their batched forms (``batched``, ``planner_batched``, ``consensus_batched``, ``batched_play``),
the card tables they share (``cards``) and the factored policy head (``head``)."""
