"""Return of the Headless Horseman agents: the heuristics (``heuristic``) and their batched forms
(``batched``)."""
