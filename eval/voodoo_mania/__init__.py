"""Research scripts about Voodoo Mania: what the opponent's hand is worth
(``python -m eval.voodoo_mania.information``) and how often plays collide in the tick model
(``python -m eval.voodoo_mania.tick_stats``)."""
