"""Phases of a Hocus Pocus turn."""

from __future__ import annotations

from enum import IntEnum


class Phase(IntEnum):
    """What the game waits for; the acting seat is ``State.actor``."""

    ASK = 0  # the turn player asks one question
    ACT = 1  # play a card, use a trick, or reveal a Spell when no card can be played
    BINX = 2  # place Binx after playing a Binx card
    STUN_CHOICE = 3  # stun Mary or Winifred when both qualify
    SALT = 4  # use Circle of Salt on the revealed Spell, or not
    SPELL_DISCARD = 5  # a player discards a card of their choice (Oh, Look! / Fly, My Pretty)
    SPELL_PASS = 6  # a player picks a card to pass left (Come Little Children)
    DISCARD = 7  # after a failed play: discard one or more cards, then finish
    SWAP_OWN = 8  # Daylight Savings Time: the turn player picks the card to swap
    SWAP_PARTNER = 9  # Daylight Savings Time: the partner picks theirs
    BURN = 10  # Burning Rain of Death: pick the three cards to discard
    OVER = 11
