// Cauldron game viewer: draws the frames that python -m eval.viewer embedded in this page.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { game: null, frames: [], step: 0, view: 0, timer: null };
  let data;

  function showError(message) {
    const box = $("error");
    box.textContent = message;
    box.hidden = !message;
  }

  // Rebuild one game's frames per view: 0 repeats the previous frame, [-1, i, id, ...] changes
  // some of its lines, any other list is the frame's line ids.
  function decode(game) {
    return game.text.map((frames) => {
      let last = [];
      return frames.map((ids) => {
        if (ids === 0) return last;
        if (ids[0] === -1) {
          const next = last.slice();
          for (let k = 1; k < ids.length; k += 2) next[ids[k]] = ids[k + 1];
          return (last = next);
        }
        return (last = ids);
      });
    });
  }

  // A frame's figures: the seat to act (or null), every seat's return and info.
  function figures(game, step) {
    const [toAct, returns, ...info] = game.panel[step];
    const parse = (id) => JSON.parse(data.strings[id]);
    return { to_act: toAct, returns: parse(returns), info: info.map(parse) };
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
      button.textContent = v === 0 ? "whole table" : name + "'s view";
      button.dataset.view = String(v);
      button.setAttribute("role", "tab");
      button.addEventListener("click", () => setView(v));
      views.appendChild(button);
    });
    $("scrub").max = String(game.act.length - 1);
    draw();
  }

  function setView(v) {
    if (!state.game || v < 0 || v >= state.game.views.length) return;
    state.view = v;
    draw();
  }

  function go(step) {
    if (!state.game || state.game.error) return;
    state.step = Math.max(0, Math.min(step, state.game.act.length - 1));
    draw();
  }

  function drawText(lines, before) {
    const table = $("table");
    const out = document.createDocumentFragment();
    lines.forEach((id, i) => {
      const text = data.strings[id] + (i < lines.length - 1 ? "\n" : "");
      if (before && before[i] !== id) {
        const mark = document.createElement("mark");
        mark.textContent = text;
        out.appendChild(mark);
      } else {
        out.appendChild(document.createTextNode(text));
      }
    });
    table.replaceChildren(out);
  }

  function drawInfo(panel) {
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
      const cells = ["player_" + seat, String(panel.returns[seat])];
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
    const frames = state.frames[state.view];
    const step = state.step;
    const last = game.act.length - 1;
    drawText(frames[step], step > 0 ? frames[step - 1] : null);
    const panel = figures(game, step);
    drawInfo(panel);
    const act = game.act[step];
    let text = step === 0 ? "The deal" : "";
    if (act) {
      // The action as this view saw it: another seat's secret choice reads as its public text.
      text = data.strings[game.seen[step][state.view]];
      if (act[3]) text += " · rewards " + JSON.stringify(act[3]);
    }
    text += panel.to_act === null ? " · game over" : " · player_" + panel.to_act + " to act";
    $("action").textContent = text;
    $("step-label").textContent = "step " + step + " / " + last;
    $("scrub").value = String(step);
    for (const button of $("views").children) {
      button.setAttribute("aria-selected", String(Number(button.dataset.view) === state.view));
    }
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
