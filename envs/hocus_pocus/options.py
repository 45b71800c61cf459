"""Options of ``hocus_pocus_v1``; every default the rulebook leaves open is one of these."""

from __future__ import annotations

from dataclasses import dataclass

from cauldron.envs.core.options import CommonOptions, option
from cauldron.envs.hocus_pocus import components as C


@dataclass(frozen=True)
class HocusPocusOptions(CommonOptions):
    sunrise_steps: int = option(3, "Stuns needed to raise the Sun to the top of the track (win).")
    board: tuple = option(
        C.DEFAULT_BOARD, "The five Cauldron spaces as (colour, type) pairs, in space order."
    )
    binx_cards: tuple = option(C.DEFAULT_BINX, "(colour, type) pairs whose first copy shows Binx.")
    spell_book_cards: tuple = option(
        C.DEFAULT_SPELL_BOOK, "(colour, type) pairs whose first copy shows the Spell Book."
    )
    spell_deck: tuple = option(
        C.DEFAULT_SPELL_DECK, "Names of the Spell cards in the Spell deck (repeats allowed)."
    )
    take_flight_ignores_salt: bool = option(
        False, "If true, Circle of Salt cannot cancel Take Flight."
    )
    salt_after_trick: bool = option(
        False,
        "If true, Circle of Salt is offered on a revealed Spell even after another trick was "
        "used this turn (it is a reaction to the Spell); by default at most one trick per turn.",
    )
    stun_reward: float = option(
        0.0, "Shaped reward given to every player each time a witch is stunned.", shaping=True
    )
    match_reward: float = option(
        0.0,
        "Shaped reward (not a rule): this times the change, each step, of the Cauldron's match "
        "count / 5 (most tops sharing one colour or one type); a stun counts as 5 matched.",
        shaping=True,
    )
