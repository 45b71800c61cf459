// Cauldron game viewer: draws the frames that cauldron viewer embedded in this page.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { game: null, frames: [], step: 0, view: 0, timer: null, current: null };
  let data;

  function showError(message) {
    const box = $("error");
    box.textContent = message;
    box.hidden = !message;
  }

  // A number as people read it: at most 4 decimals (0.30000000000000004 reads 0.3).
  const fmt = (x) => String(Number(x.toFixed(4)));

  // A frame's line ids from a stored form (see eval/viewer.py delta) and the view's previous
  // frame: 0 repeats it; [-1, i, id, ...] changes some of its lines; [-2, keep, drop, n,
  // ids..., ...] copies keep lines, skips drop, inserts n ids, again, then copies the rest;
  // [-3, form...] applies the form to the whole table's frame of the same step instead; any
  // other list is the frame's line ids.
  function apply(last, ids, table) {
    if (ids === 0) return last;
    if (ids[0] === -3) return apply(table, ids.slice(1), null);
    if (ids[0] === -1) {
      const next = last.slice();
      for (let k = 1; k < ids.length; k += 2) next[ids[k]] = ids[k + 1];
      return next;
    }
    if (ids[0] === -2) {
      const next = [];
      let at = 0;
      for (let k = 1; k < ids.length; k += 3 + ids[k + 2]) {
        for (let i = at; i < at + ids[k]; i++) next.push(last[i]);
        at += ids[k] + ids[k + 1];
        for (let i = k + 3; i < k + 3 + ids[k + 2]; i++) next.push(ids[i]);
      }
      for (let i = at; i < last.length; i++) next.push(last[i]);
      return next;
    }
    return ids;
  }

  // One game's drawings per view, each frame a list of SVG line ids (the table's first).
  function decode(game) {
    const views = [];
    game.svg.forEach((frames, v) => {
      let last = [];
      views.push(frames.map((ids, step) => (last = apply(last, ids, v ? views[0][step] : null))));
    });
    return views;
  }

  // A frame's figures: the seat to act (or null), every seat's return and info.
  function figures(game, step) {
    const [toAct, returns, ...info] = game.panel[step];
    const parse = (id) => JSON.parse(data.strings[id]);
    return { to_act: toAct, returns: parse(returns), info: info.map(parse) };
  }

  // The seat a view shows, null for the whole table (a seat's page holds that seat's only).
  function seatOf(game, view) {
    if (game.seat !== null && game.seat !== undefined) return game.seat;
    return view === 0 ? null : view - 1;
  }

  // What the acting agent thought at a step, shown in the whole table and in the actor's own
  // view only (another seat must not learn the actor's hidden hand from it); "" otherwise.
  function thought(game, step, view) {
    const act = game.act[step];
    const id = game.think ? game.think[step] : null;
    const seat = seatOf(game, view);
    if (!act || id === null || (seat !== null && seat !== act[0])) return "";
    return data.strings[id];
  }

  function moveText(game, step, view) {
    if (step === 0) return "the deal";
    const act = game.act[step];
    let text = data.strings[game.seen[step][view]];
    if (act[3]) text += " · rewards [" + act[3].map(fmt).join(", ") + "]";
    return text;
  }

  function selectGame(index) {
    stop();
    const game = data.games[index];
    state.game = game;
    state.step = 0;
    state.view = 0;
    showError(game.error ? "This game cannot be drawn:\n" + game.error : "");
    $("board").hidden = Boolean(game.error);
    if (game.error) return;
    state.frames = decode(game);
    const views = $("views");
    views.replaceChildren();
    game.views.forEach((name, v) => {
      const button = document.createElement("button");
      const seat = seatOf(game, v);
      button.textContent = seat === null ? "whole table" : game.labels[seat];
      button.title = seat === null
        ? "everything, every hand shown"
        : name + "'s view: what it could see";
      button.dataset.view = String(v);
      button.setAttribute("role", "tab");
      button.addEventListener("click", () => setView(v));
      views.appendChild(button);
    });
    $("scrub").max = String(game.act.length - 1);
    listMoves();
    draw();
  }

  function setView(v) {
    if (!state.game || state.game.error || v < 0 || v >= state.game.views.length) return;
    state.view = v;
    listMoves();
    draw();
  }

  function go(step) {
    if (!state.game || state.game.error) return;
    state.step = Math.max(0, Math.min(step, state.game.act.length - 1));
    draw();
  }

  // The whole move and event list as the current view saw it: one entry per step (the deal,
  // then each decision) with the events it added and, where this view may see it, the thought.
  function listMoves() {
    const game = state.game;
    const list = $("moves");
    const out = document.createDocumentFragment();
    game.act.forEach((_, step) => {
      const item = document.createElement("li");
      item.dataset.step = String(step);
      const move = document.createElement("span");
      move.className = "move";
      move.textContent = moveText(game, step, state.view);
      item.appendChild(move);
      const said = thought(game, step, state.view);
      const lines = game.events[step].map((id) => ["event", data.strings[id]]);
      if (said) lines.unshift(["thought", said]);
      for (const [kind, text] of lines) {
        const line = document.createElement("div");
        line.className = kind;
        line.textContent = text;
        item.appendChild(line);
      }
      out.appendChild(item);
    });
    list.replaceChildren(out);
    state.current = null;
  }

  function markMove(step) {
    const list = $("moves");
    if (state.current) {
      state.current.classList.remove("current");
      state.current.removeAttribute("aria-current");
    }
    const item = list.children[step];
    state.current = item;
    item.classList.add("current");
    item.setAttribute("aria-current", "step");
    const top = item.offsetTop;
    if (top < list.scrollTop || top + item.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = top - (list.clientHeight - item.offsetHeight) / 2;
    }
  }

  function drawInfo(panel, labels) {
    const keys = [];
    panel.info.forEach((row) => Object.keys(row).forEach((k) => keys.includes(k) || keys.push(k)));
    const table = $("info");
    table.replaceChildren();
    const head = table.insertRow();
    ["seat", "return", ...keys].forEach((k) => {
      const th = document.createElement("th");
      th.textContent = k;
      head.appendChild(th);
    });
    panel.info.forEach((row, seat) => {
      const tr = table.insertRow();
      tr.dataset.seat = String(seat);
      if (panel.to_act === seat) tr.className = "acting";
      const cells = [labels[seat], fmt(panel.returns[seat])];
      keys.forEach((k) => cells.push(k in row ? JSON.stringify(row[k]) : ""));
      cells.forEach((text, i) => {
        const td = tr.insertCell();
        td.textContent = text;
        td.dataset.key = i === 0 ? "seat" : i === 1 ? "return" : keys[i - 2];
      });
    });
  }

  function draw() {
    const game = state.game;
    const step = state.step;
    const last = game.act.length - 1;
    $("table").innerHTML = state.frames[state.view][step].map((id) => data.strings[id]).join("\n");
    const panel = figures(game, step);
    drawInfo(panel, game.labels);
    // The action as this view saw it: another seat's secret choice reads as its public text.
    let text = step === 0 ? "The deal" : moveText(game, step, state.view);
    text += panel.to_act === null ? " · game over" : " · player_" + panel.to_act + " to act";
    $("action").textContent = text;
    const said = thought(game, step, state.view);
    $("thought").textContent = said;
    $("thought").hidden = !said;
    $("step-label").textContent = "step " + step + " / " + last;
    $("scrub").value = String(step);
    for (const button of $("views").children) {
      button.setAttribute("aria-selected", String(Number(button.dataset.view) === state.view));
    }
    markMove(step);
    document.body.dataset.step = String(step);
    document.body.dataset.view = String(state.view);
  }

  function stop() {
    if (state.timer !== null) clearInterval(state.timer);
    state.timer = null;
    $("play").textContent = "play";
  }

  function play() {
    if (state.timer !== null) return stop();
    if (!state.game || state.game.error) return;
    if (state.step >= state.game.act.length - 1) go(0);
    $("play").textContent = "pause";
    state.timer = setInterval(() => {
      if (state.step >= state.game.act.length - 1) return stop();
      go(state.step + 1);
    }, Number($("speed").value));
  }

  function start() {
    try {
      data = JSON.parse($("data").textContent);
    } catch (err) {
      showError("The page's game data cannot be read: " + err.message);
      $("board").hidden = true;
      return;
    }
    const select = $("game");
    data.games.forEach((game, i) => {
      const option = document.createElement("option");
      option.value = String(i);
      option.textContent = (i + 1) + ". " + game.title + (game.error ? " [cannot be drawn]" : "");
      select.appendChild(option);
    });
    if (!data.games.length) {
      showError("No game in this page.");
      $("board").hidden = true;
      return;
    }
    select.addEventListener("change", () => selectGame(Number(select.value)));
    $("first").addEventListener("click", () => go(0));
    $("prev").addEventListener("click", () => go(state.step - 1));
    $("next").addEventListener("click", () => go(state.step + 1));
    $("last").addEventListener("click", () => go(Infinity));
    $("play").addEventListener("click", play);
    $("scrub").addEventListener("input", () => go(Number($("scrub").value)));
    $("speed").addEventListener("change", () => { if (state.timer !== null) { stop(); play(); } });
    $("moves").addEventListener("click", (event) => {
      const item = event.target.closest("li");
      if (item) go(Number(item.dataset.step));
    });
    document.addEventListener("keydown", (event) => {
      if (event.target.tagName === "SELECT" || event.target.tagName === "INPUT") return;
      const keys = { ArrowLeft: () => go(state.step - 1), ArrowRight: () => go(state.step + 1),
        Home: () => go(0), End: () => go(Infinity), " ": play };
      if (keys[event.key]) { event.preventDefault(); keys[event.key](); }
      else if (/^[0-9]$/.test(event.key)) setView(Number(event.key));
    });
    selectGame(0);
  }

  window.cauldronViewer = { go, setView, selectGame, state: () => state };
  window.addEventListener("error", (event) => showError("Viewer error: " + event.message));
  start();
})();
