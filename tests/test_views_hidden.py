"""Every seat's view shows only what that seat could know at that step.

A seat's view of a frame is what every tool shows it (the web viewer, ``cauldron.eval.replay
--seat``, ``cauldron.eval.play``): the action just taken as it saw it
(:func:`cauldron.envs.core.views.seen_action`), the step's rewards and events, who acts next, its
table (``render_for``) and every seat's figures (:func:`cauldron.envs.core.views.figures`). The test
plays *twin* games that differ only in something hidden, one decision (another legal action, then
the same actions as long as they stay legal and the same seats act) or which of two other seats
holds a card, and compares the views of every seat that knows the same in both twins: the same
observations so far and the same public events (the observation forgets some public facts: a
question asked again, a row's cards flipped back into the draw pile, the last tick of a round). The
seat that decided is left out: it knows what it chose. The events are checked on their own: a choice
secret to a seat, whose observation it leaves unchanged, adds no event that tells it apart (except
the step that resolves a simultaneous round, when the choices are revealed). Random and heuristic
teams play every game at every player count: 20 games a case by default (each cut at 200
agent-steps, twins started at a tenth of the steps, each followed for one round of seats); under
``-m slow`` 200 whole games a case, twins started at every step (at a tenth of them in Hexenflug and
Voodoo Mania, whose games are thousands of steps long; an hour or more in all on one core).
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

from cauldron import envs
from cauldron.agents import HEURISTICS, make_agent
from cauldron.envs.core import views
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.simultaneous import SimultaneousRules
from cauldron.envs.core.views import figures, seen_action
from cauldron.eval import human, records, viewer
from cauldron.eval.play import play_game
from cauldron.eval.records import EventLog, jsonable
from cauldron.eval.replay import frames, show
from tests.test_human_play import Person
from tests.test_viewer import apply

CASES = [
    (env_id, n)
    for env_id in envs.ids()
    for n in range(envs.spec(env_id).players[0], envs.spec(env_id).players[1] + 1)
]
SECRET_GAMES = {"headless_horseman_v1", "voodoo_mania_v1", "hocus_pocus_v1"}  # Hexenflug: none
LONG_GAMES = {"hexenflug_v1", "voodoo_mania_v1"}  # 500 to 5,000 agent-steps a game


def teams(env_id: str) -> list[str]:
    return ["random", f"heuristic:{next(iter(HEURISTICS[env_id]))}"]


def clone(base):
    """A copy of the raw env that shares its rules, encoder and spaces (only the game moves)."""
    shared = [base.rules, base.encoder, base.observation_spaces, base.action_spaces]
    return copy.deepcopy(base, {id(x): x for x in (*shared, base.state_space, base._no_mask)})


def ended(base) -> bool:
    return all(base.terminations[a] or base.truncations[a] for a in base.possible_agents)


def observed(base, seat: int) -> bytes:
    return base.observe(base.possible_agents[seat])["observation"].tobytes()


def shared(base, events: list) -> tuple:
    """What every seat's view shows after a step: who acts next, the rewards, the events and
    every seat's figures."""
    rewards = [base.rewards[a] for a in base.possible_agents]
    return base.agent_selection, rewards, events, jsonable(figures(base))


class Views:
    """A game's views and observations after a step, each computed once when first asked."""

    def __init__(self, base, seen: list[str], events: list) -> None:
        self.base, self.seen, self.events = base, seen, events
        self.common = shared(base, events)
        self.obs: dict[int, bytes] = {}
        self.views: dict[int, tuple] = {}

    def observed(self, seat: int) -> bytes:
        if seat not in self.obs:
            self.obs[seat] = observed(self.base, seat)
        return self.obs[seat]

    def view(self, seat: int) -> tuple:
        if seat not in self.views:
            table = self.base.render_for(self.base.possible_agents[seat])
            self.views[seat] = (*self.common, self.seen[seat], table)
        return self.views[seat]


@dataclass
class Twin:
    """A game that took ``first`` instead of the real action at a decision of ``phase``, then
    follows the real actions for up to ``left`` steps; ``seats``: who knows the same as in the
    real game so far; ``move`` and ``seen``: its last action as the table and each seat saw it."""

    env: object
    first: int
    phase: str
    seats: set[int]
    left: int
    steps: int = 0
    move: str = ""
    seen: list[str] = field(default_factory=list)
    events: EventLog = field(init=False)

    def __post_init__(self) -> None:
        self.events = EventLog(self.env)

    def step(self, name: str, action: int) -> bool:
        """Take the real ``action`` (the first time, ``first``); ``False`` when the twin cannot
        follow (another seat acts, or the action is illegal there)."""
        mine = self.first if self.steps == 0 else action
        if self.env.agent_selection != name or mine not in self.env.legal_actions():
            return False
        self.move = seen_action(self.env, mine, None)
        self.seen = [seen_action(self.env, mine, v) for v in range(len(self.env.possible_agents))]
        self.env.step(mine)
        self.steps += 1
        self.left -= 1
        return True


def resolves(base) -> bool:
    """Whether the last step resolved a simultaneous round (every hidden choice revealed)."""
    return isinstance(base.rules, SimultaneousRules) and not base.rules.mid_step(base.game)


def check_game(
    env_id: str,
    players: int,
    spec: str,
    seed: int,
    rate: float,
    max_steps: int | None,
    follow: int,
) -> Counter:
    """Play one game, starting twins at a share ``rate`` of the steps and following each for
    up to ``follow`` steps (module docstring); counts of the views compared."""
    options = {} if max_steps is None else {"max_steps": max_steps}
    base = envs.make(env_id, num_players=players, render_mode="ansi", **options).unwrapped
    agents = {a: make_agent(spec, env_id) for a in base.possible_agents}
    base.reset(seed=seed)
    for i, agent in enumerate(agents.values()):
        agent.reset(seed + 7919 * (i + 1))
    rng = np.random.default_rng(seed)
    log, twins, counts = EventLog(base), [], Counter()
    while not ended(base):
        name = base.agent_selection
        actor = base.possible_agents.index(name)
        obs = base.observe(name)
        action = int(agents[name].act(obs["observation"], obs["action_mask"]))
        if rng.random() < rate:
            counts += hand_twins(base, rng)
            others = [a for a in base.legal_actions() if a != action]
            if others:
                phase = base.rules.phase_name(base.game)
                seats = set(range(players)) - {actor}
                twins.append(Twin(clone(base), int(rng.choice(others)), phase, seats, follow))
        move = seen_action(base, action, None)
        seen = [seen_action(base, action, v) for v in range(players)]
        twins = [twin for twin in twins if twin.step(name, action)]
        base.step(action)
        real = Views(base, seen, jsonable(log.new()))
        for twin in twins:
            other = Views(twin.env, twin.seen, jsonable(twin.events.new()))
            same = {v for v in twin.seats if real.observed(v) == other.observed(v)}
            for v in same if twin.steps == 1 and not resolves(base) else ():
                secret = seen[v] != move and twin.seen[v] != twin.move
                assert not secret or real.events == other.events, (
                    f"{env_id} {players}p {spec} seed {seed}: the events tell player_{v} "
                    f"player_{actor}'s secret choice: {real.events} / {other.events}"
                )
            twin.seats = same if real.events == other.events else set()
            for v in twin.seats:
                assert real.view(v) == other.view(v), (
                    f"{env_id} {players}p {spec} seed {seed}: player_{v} sees a hidden choice "
                    f"{twin.steps} step(s) after it was made (action {twin.first} instead of "
                    f"the real one, phase {twin.phase}): {diff(real.view(v), other.view(v))}"
                )
                counts["decisions" if twin.steps == 1 else "later frames"] += 1
                counts[f"phase {twin.phase}"] += twin.steps == 1
        twins = [t for t in twins if t.left > 0 and t.seats and not ended(t.env)]
    return counts


def hand_twins(base, rng) -> Counter:
    """Swap a card between two seats' hands: every other seat that observes no difference must
    see the same table and figures."""
    hands = base.game.hands
    seats = [s for s, hand in enumerate(hands) if hand]
    if len(seats) < 2 or len(hands) < 3:
        return Counter()
    u, w = (int(s) for s in rng.choice(seats, 2, replace=False))
    i, j = int(rng.integers(len(hands[u]))), int(rng.integers(len(hands[w])))
    if hands[u][i] == hands[w][j]:
        return Counter()
    twin = clone(base)
    twin.game.hands[u][i], twin.game.hands[w][j] = hands[w][j], hands[u][i]
    real, other = Views(base, [""] * len(hands), []), Views(twin, [""] * len(hands), [])
    counts = Counter()
    for v in set(range(len(hands))) - {u, w}:
        if real.observed(v) == other.observed(v):
            assert real.view(v) == other.view(v), f"player_{v} sees a card of player_{u} or {w}"
            counts["hands"] += 1
    return counts


def diff(real: tuple, other: tuple) -> str:
    parts = ["to act", "rewards", "events", "figures", "action", "table"]
    return "; ".join(
        f"{part}: {a!r} / {b!r}" for part, a, b in zip(parts, real, other, strict=True) if a != b
    )


def run_case(
    env_id: str, players: int, games: int, rate: float, max_steps: int | None, follow: int
) -> None:
    """``games`` games, half by a random team, half by a heuristic one, checked."""
    counts = Counter()
    for spec in teams(env_id):
        for seed in range(games // 2):
            counts += check_game(env_id, players, spec, seed, rate, max_steps, follow)
    if env_id in SECRET_GAMES - {"hocus_pocus_v1"}:  # every decision of a round is hidden
        assert counts["decisions"] > 0, counts
    if env_id in SECRET_GAMES and players >= 3:  # a third seat, and a choice before the last
        assert counts["hands"] > 0, counts
        assert counts["later frames"] > 0 or env_id == "hocus_pocus_v1", counts


@pytest.mark.parametrize(("env_id", "players"), CASES)
def test_no_view_shows_another_seat_s_secret(env_id, players):
    run_case(env_id, players, games=20, rate=0.1, max_steps=200, follow=players)


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "players"), CASES)
def test_no_view_shows_another_seat_s_secret_in_200_whole_games(env_id, players):
    rate = 0.1 if env_id in LONG_GAMES else 1.0
    run_case(env_id, players, games=200, rate=rate, max_steps=None, follow=3 * players)


def test_hocus_pocus_passes_and_swaps_stay_secret():
    """Come Little Children and Daylight Savings Time are rare: play whole games, twinning
    every decision, until each of their choices had its views compared three times."""
    counts = Counter()
    for seed in range(200):
        counts += check_game("hocus_pocus_v1", 4, "random", seed, 1.0, None, 8)
        phases = ("phase spell_pass", "phase swap_own", "phase swap_partner")
        if all(counts[p] >= 3 for p in phases):
            break
    assert all(counts[p] >= 3 for p in phases), counts


def test_the_check_finds_a_view_that_names_a_secret_choice(monkeypatch):
    """Without the Horseman's secret rule every view names the card chosen: the twins differ."""
    monkeypatch.setattr(views, "secret_rule", lambda env_class: None)
    with pytest.raises(AssertionError, match="sees a hidden choice 1 step"):
        check_game("headless_horseman_v1", 3, "random", 0, 1.0, None, 3)


# ---------------------------------------------------------------- the tools show these views


def record(env_id: str, players: int, seed: int, spec: str = "random") -> records.GameRecord:
    env = records.Recorder(envs.make(env_id, num_players=players))
    agents = {a: make_agent(spec, env_id) for a in env.possible_agents}
    env.next_game([spec] * players)
    play_game(env, agents, seed)
    return env.record


@pytest.mark.parametrize("env_id", envs.ids())
def test_every_seat_s_figures_at_every_frame_come_from_the_game_state(env_id):
    """Every seat's figures are read from the game state at every frame, not only the next
    actor's row from ``infos``."""
    players = envs.spec(env_id).players[0] + 1
    game = record(env_id, players, 3)
    env = envs.make(env_id, num_players=players)
    env.reset(seed=3)
    base = env.unwrapped
    shown = frames(game)
    for frame in shown:
        if frame.step:
            env.step(game.steps[frame.step - 1]["a"])
        expected = [base.rules.info(base.game, seat) for seat in range(players)]
        if frame.to_act is None:
            expected = [base.infos[a] for a in base.possible_agents]
        assert list(frame.info) == jsonable(expected), f"step {frame.step}"
    assert list(shown[-1].info) == game.end["info"]


def test_the_viewer_and_replay_show_each_seat_what_it_saw():
    """The page's heading per view and ``cauldron.eval.replay --seat`` show the frame's seen text:
    in the Horseman another seat's card is never named before the row is flipped."""
    game = record("headless_horseman_v1", 3, 5)
    shown = frames(game)
    strings = viewer.Strings()
    page = viewer.encode_game(game, shown, strings)
    assert page["seen"][0] is None
    for frame, seen in zip(shown[1:], page["seen"][1:], strict=True):
        assert [strings.items[i] for i in seen] == [frame.move, *frame.seen]
        line = frame.action
        named = f"player_{line['s']}: {line['n']} (action {line['a']})"
        assert frame.move == named
        for seat, text in enumerate(frame.seen):
            hidden = f"player_{line['s']} plays a card face down"
            assert text == (named if seat == line["s"] else hidden)
            heading = show(frame, len(shown) - 1, seat).split("\n")[0]
            assert (named in heading) == (seat == line["s"]) and text in heading


def test_in_hexenflug_every_seat_sees_every_action():
    """Hexenflug is the reference for a public game: no action is secret."""
    for frame in frames(record("hexenflug_v1", 3, 4))[1:]:
        assert frame.seen == (frame.move,) * 3


def test_eval_play_summaries_name_no_secret_pass_or_swap():
    """``player_1: choose blue Dash of Pox#0`` after Come Little Children. The
    summaries the person reads are exactly its seat's seen texts, in order."""
    secrets = 0
    for seed in range(100):
        person = Person(bad=())
        game = human.play_human("hocus_pocus_v1", 4, 0, ["random"], seed, person.ask, person.say)
        shown = frames(game)
        summaries = re.findall(r"^player_\d.*$", person.text, re.MULTILINE)
        assert summaries == [frame.seen[0] for frame in shown[1:]]
        for frame in shown[1:]:
            if frame.seen[0] != frame.move:
                secrets += 1
                assert frame.action["n"] not in frame.seen[0]
        if secrets >= 3:
            break
    assert secrets >= 3


# ---------------------------------------------------------------- a seat's page holds its view only


def dealing(rules_class, seat: int, held: int, hidden: int, pile: str):
    """``rules_class.new_game`` that deals ``seat`` the ``pile``'s card ``hidden`` instead of
    ``held``, which takes its place in the pile: the twin of a game in which only those two
    cards trade places."""
    deal = rules_class.new_game

    def new_game(self, rng, start_seat: int = 0):
        state = deal(self, rng, start_seat)
        hand, cards = state.hands[seat], getattr(state, pile)
        i, j = hand.index(held), cards.index(hidden)
        hand[i], cards[j] = hidden, held
        return state

    return new_game


def thinking(game: records.GameRecord, seat: int, p: float) -> records.GameRecord:
    """``game`` with a thought on every step, ``p`` the probability of ``seat``'s actions (what
    it thinks of its hidden cards); the other seats think the same in every twin."""
    for k, line in enumerate(game.steps, 1):
        line["p"], line["v"] = [[line["a"], p if line["s"] == seat else 0.5]], float(k)
    return game


def pages(game: records.GameRecord, folder, seat: int) -> tuple[bytes, bytes]:
    """The whole page and ``seat``'s page of ``game``, written from ``folder/games.jsonl``
    (named ``games.jsonl`` on the page, wherever the folder)."""
    folder.mkdir()
    records.write_games(folder / "games.jsonl", [game])
    with pytest.MonkeyPatch.context() as m:
        m.chdir(folder)
        whole = viewer.main(["games.jsonl", "--out", "whole.html"]).read_bytes()
        own = viewer.main(["games.jsonl", "--seat", str(seat), "--out", "seat.html"]).read_bytes()
    return whole, own


TWINS = {  # env: (players, max_steps, seed, seat holding the card, card held all game,
    # a card of the pile never drawn, the pile's name); Hocus Pocus trades a card without an
    # icon for its double (same colour and type), so every question gets the same answer, in a
    # hand never face up (no Binx in front of it)
    "hocus_pocus_v1": (3, 24, 3, 1, 47, 46, "deck"),
    "headless_horseman_v1": (3, 9, 0, 1, 17, 2, "draw_pile"),
}


@pytest.mark.parametrize("env_id", sorted(TWINS))
def test_a_seat_s_page_is_the_same_for_twins_that_differ_in_a_card_it_cannot_see(
    env_id, tmp_path, monkeypatch
):
    players, max_steps, seed, holder, held, hidden, pile = TWINS[env_id]
    options = {"max_steps": max_steps}
    env = records.Recorder(envs.make(env_id, num_players=players, **options))
    env.next_game(["random"] * players)
    play_game(env, {a: make_agent("random", env_id) for a in env.possible_agents}, seed)
    real = env.record
    actions = [line["a"] for line in real.steps]
    rules_class = type(env.unwrapped.rules)
    twin_deal = dealing(rules_class, holder, held, hidden, pile)
    blind = [s for s in range(players) if s != holder]
    shown = {s: pages(thinking(real, holder, 0.75), tmp_path / f"real{s}", s) for s in blind}
    with monkeypatch.context() as m:
        m.setattr(rules_class, "new_game", twin_deal)
        twin = records.rebuild(env_id, players, options, seed, actions, ["random"] * players)
        assert twin.end["state_sha256"] != real.end["state_sha256"]
        assert [line["e"] for line in twin.steps if "e" in line] == [
            line["e"] for line in real.steps if "e" in line
        ]
        other = {s: pages(thinking(twin, holder, 0.25), tmp_path / f"twin{s}", s) for s in blind}
    for s in blind:
        assert shown[s][0] != other[s][0]  # the whole table shows the card, the thoughts differ
        assert shown[s][1] == other[s][1]


def test_a_seat_s_page_holds_its_view_its_thoughts_and_the_actions_as_it_saw_them(tmp_path):
    game = thinking(record("hocus_pocus_v1", 3, 8), 1, 0.75)
    path = records.write_games(tmp_path / "games.jsonl", [game])
    data = viewer.page_data([path], seat=2)
    [page] = data["games"]
    assert page["views"] == ["player_2"] and page["seat"] == 2
    assert "seed" not in page["title"] and "player_2's view" in page["title"]
    base = envs.make("hocus_pocus_v1", num_players=3).unwrapped
    base.reset(seed=8)
    shown = frames(game)
    secret = 0
    for k, (frame, act, seen, said) in enumerate(
        zip(shown, page["act"], page["seen"], page["think"], strict=True)
    ):
        if k:
            base.step(game.steps[k - 1]["a"])
            hidden = frame.seen[2] != frame.move
            secret += hidden
            assert data["strings"][seen[0]] == frame.seen[2] and len(seen) == 1
            assert (act[1] is None) == hidden and (frame.move not in data["strings"]) == hidden
        assert (said is not None) == (k > 0 and game.steps[k - 1]["s"] == 2)
    assert secret > 0
    last = "\n".join(data["strings"][i] for i in decoded_last(page["svg"][0]))
    assert last == base.render_for("player_2", "svg")
    with pytest.raises(ConfigError, match=r"--seat must be a seat of every game, 0..2 in .*got 3"):
        viewer.page_data([path], seat=3)


def decoded_last(frames_of_a_view: list) -> list[int]:
    """The last frame's line ids of one view's stored frames (:func:`viewer.delta`)."""
    last: list[int] = []
    for ids in frames_of_a_view:
        last = apply(last, ids, None)
    return last
