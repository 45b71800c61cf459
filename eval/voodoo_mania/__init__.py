"""Research scripts about Voodoo Mania: what the opponent's hand is worth
(``cauldron voodoo-information``) and how often plays collide in the tick model
(``cauldron voodoo-ticks``)."""
