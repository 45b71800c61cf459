"""The flat action space of ``hocus_pocus_v1`` (329 actions, the same for every player count).

Seats in actions are offsets clockwise from the acting player (0 = self, 1 = the left player).
"""

from __future__ import annotations

from cauldron.envs.hocus_pocus import components as C

ASK = 0  # 0–4: ask about colour c; 5–9: ask about type t
PLAY = 10  # 10 + card * 5 + space
CHOOSE = PLAY + C.NUM_CARDS * C.NUM_SPACES  # 260 + card: pick one own card (discard/pass/swap)
FINISH = CHOOSE + C.NUM_CARDS  # 310: stop discarding
BINX = FINISH + 1  # 311 + offset: put Binx in front of that player
SWAP = BINX + C.MAX_PLAYERS  # 317 + offset - 1: Daylight Savings Time with that player
BILLY = SWAP + C.MAX_PLAYERS - 1  # 322
BURN = BILLY + 1  # 323
SALT_USE = BURN + 1  # 324
SALT_DECLINE = SALT_USE + 1  # 325
STUN_MARY = SALT_DECLINE + 1  # 326
STUN_WINIFRED = STUN_MARY + 1  # 327
REVEAL_SPELL = STUN_WINIFRED + 1  # 328
NUM_ACTIONS = REVEAL_SPELL + 1

TABLE = (
    (ASK, 5, "ask colour c", "Ask whether anyone holds colour c (only in phase `ask`)."),
    (ASK + 5, 5, "ask type t", "Ask whether anyone holds ingredient type t."),
    (PLAY, 250, "play card k on space s", "Index `10 + 5k + s`; the card must match the top."),
    (CHOOSE, 50, "choose card k", "Discard, pass, burn or swap own card k (by phase)."),
    (FINISH, 1, "finish", "Stop discarding after a failed play (at least one discarded)."),
    (BINX, 6, "Binx to offset o", "Place Binx in front of the player o seats to the left."),
    (SWAP, 5, "Daylight Savings Time with offset o", "Index `317 + o - 1`, o = 1..5."),
    (BILLY, 1, "Billy Butcherson", "Skip the play and the end-of-turn draw."),
    (BURN, 1, "Burning Rain of Death", "Discard three cards, draw three."),
    (SALT_USE, 1, "Circle of Salt", "Cancel the revealed Spell."),
    (SALT_DECLINE, 1, "let the Spell resolve", "Keep Circle of Salt."),
    (STUN_MARY, 1, "stun Mary", "When Mary and Winifred both qualify."),
    (STUN_WINIFRED, 1, "stun Winifred", "When Mary and Winifred both qualify."),
    (REVEAL_SPELL, 1, "cannot play: reveal a Spell", "Only when no card in hand can be played."),
)


def action_name(action: int) -> str:
    """A readable name for ``action``."""
    if action < ASK + 5:
        return f"ask {C.COLOURS[action - ASK]}"
    if action < PLAY:
        return f"ask {C.TYPES[action - ASK - 5]}"
    if action < CHOOSE:
        card, space = divmod(action - PLAY, 5)
        return f"play {C.card_name(card)} on space {space}"
    if action < FINISH:
        return f"choose {C.card_name(action - CHOOSE)}"
    if action < BINX:
        return "finish discarding"
    if action < SWAP:
        return f"Binx to offset {action - BINX}"
    if action < BILLY:
        return f"Daylight Savings Time with offset {action - SWAP + 1}"
    names = {
        BILLY: "Billy Butcherson",
        BURN: "Burning Rain of Death",
        SALT_USE: "Circle of Salt",
        SALT_DECLINE: "let the Spell resolve",
        STUN_MARY: "stun Mary",
        STUN_WINIFRED: "stun Winifred",
        REVEAL_SPELL: "cannot play: reveal a Spell",
    }
    if action in names:
        return names[action]
    raise ValueError(f"action {action} is outside 0..{NUM_ACTIONS - 1}")
