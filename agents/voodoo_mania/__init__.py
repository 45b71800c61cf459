"""Voodoo Mania agents: the heuristics (``heuristic``) and their batched forms (``batched``)."""
