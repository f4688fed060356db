// Model evaluations on the study page and on a model's page: progress bars move while the file
// is read and the model evaluated (models/status, polled every second while one runs).
// The study page does not reload: when a model it shows running ends, or a paired comparison it
// shows computing, it fetches its leaderboard again (models/board: the server's rendering of
// staff/_models_board.html) and puts it in place of the old one, and #models-news (a live
// region) says what ended. What staff type in the upload form, the focus, the models chosen in
// the comparison form and the tables' scroll stay. A model's page does not reload either: once
// its evaluation has ended it fetches itself again and puts the new page's content (the figures,
// or the reason its file was refused) in place of the old, and #model-news (a live region) says
// so. No navigation: nothing that leaves the page (a link followed meanwhile) races a reload.
(function () {
  "use strict";
  // A refused upload: the study page opens at its form (#evaluate), the message in view. (Not a
  // fragment in the form's action: the browser would carry it to the model's page on success.)
  var heading = document.getElementById("evaluate");
  if (heading && document.querySelector("#evaluate ~ .errors[role=alert]")) heading.scrollIntoView();
  var script = document.getElementById("evaluations-script");
  var url = script && script.dataset.statusUrl;
  var boardUrl = script && script.dataset.boardUrl;
  var news = document.getElementById("models-news");
  if (!url) return;

  // The evaluations and comparisons the page shows as pending, by id.
  function shownPending() {
    var shown = { evaluations: {}, pairs: {}, any: false };
    document.querySelectorAll("[data-evaluation]").forEach(function (row) {
      if (row.querySelector("progress")) { shown.evaluations[row.dataset.evaluation] = true; shown.any = true; }
    });
    document.querySelectorAll("[data-pair][data-pending]").forEach(function (row) {
      shown.pairs[row.dataset.pair] = true; shown.any = true;
    });
    return shown;
  }

  function showProgress(data) {
    data.evaluations.forEach(function (e) {
      var row = document.querySelector('[data-evaluation="' + e.id + '"]');
      if (!row) return;
      var bar = row.querySelector("progress");
      var state = row.querySelector(".state");
      if (bar) bar.value = e.progress;
      if (state) state.textContent = (e.stage || e.status) + " " + Math.round(e.progress * 100) + "%";
    });
  }

  // What ended of what the page shows pending: {changed, said: sentences for #models-news}.
  function ended(data, shown) {
    var pending = { evaluations: {}, pairs: {} };
    var said = [];
    data.evaluations.forEach(function (e) {
      if (e.status === "queued" || e.status === "running") pending.evaluations[e.id] = true;
      else if (shown.evaluations[e.id]) said.push("“" + e.name + "” " + e.status);
    });
    (data.pairs || []).forEach(function (p) {
      if (p.status === "queued") pending.pairs[p.id] = true;
      else if (shown.pairs[p.id]) said.push("a paired difference " + (p.status === "done" ? "computed" : p.status));
    });
    var changed = ["evaluations", "pairs"].some(function (kind) {
      return Object.keys(shown[kind]).some(function (id) { return !pending[kind][id]; });
    });
    return { changed: changed, said: said };
  }

  // A selector that finds the same control or region in the new leaderboard.
  function selectorFor(el) {
    if (el.id) return "#" + CSS.escape(el.id);
    var attrs = ["href", "aria-labelledby", "aria-label", "name"];
    for (var i = 0; i < attrs.length; i++) {
      var value = el.getAttribute(attrs[i]);
      if (value) return el.tagName.toLowerCase() + "[" + attrs[i] + '="' + CSS.escape(value) + '"]';
    }
    return null;
  }

  // A model's page: the content of the page as it is now, in place of the old (the live region
  // kept, so that it is heard); false: not now (try again later).
  async function swapPage(said) {
    var resp = await fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } });
    if (!resp.ok) return false;
    var fresh = new DOMParser().parseFromString(await resp.text(), "text/html").getElementById("main");
    var main = document.getElementById("main");
    var kept = document.getElementById("model-news");
    if (!fresh || !main) return false;
    Array.prototype.slice.call(main.childNodes).forEach(function (node) {
      if (node !== kept) main.removeChild(node);
    });
    Array.prototype.slice.call(fresh.childNodes).forEach(function (node) {
      main.appendChild(document.adoptNode(node));
    });
    if (kept) kept.textContent = "The evaluation ended: " + (said.length ? said.join("; ") : "see below") + ".";
    return true;
  }

  // Put the server's new leaderboard in place of the old one; false: not now (try again later).
  async function swap() {
    var resp = await fetch(boardUrl, { credentials: "same-origin", headers: { "Accept": "text/html" } });
    if (!resp.ok) return false;
    var template = document.createElement("template");
    template.innerHTML = await resp.text();
    var fresh = template.content.getElementById("models-board");
    var old = document.getElementById("models-board");
    if (!fresh || !old) return false;
    var active = document.activeElement;
    var inside = old.contains(active);
    var again = inside ? selectorFor(active) : null;
    // The focus is never dropped: with it on something the new leaderboard lacks, wait.
    if (inside && !(again && fresh.querySelector(again))) return false;
    old.querySelectorAll("select").forEach(function (select) {
      var key = selectorFor(select);
      var twin = key && fresh.querySelector(key);
      if (twin && Array.prototype.some.call(twin.options, function (o) { return o.value === select.value; })) {
        twin.value = select.value;
      }
    });
    var opened = Array.prototype.map.call(old.querySelectorAll("details"), function (d) { return d.open; });
    fresh.querySelectorAll("details").forEach(function (d, i) { if (i < opened.length) d.open = opened[i]; });
    var scrolled = Array.prototype.map.call(old.querySelectorAll(".scroll"), function (box) {
      return [selectorFor(box), box.scrollLeft];
    });
    // Whatever staff are at below the leaderboard (the upload form) stays where it is on screen.
    var anchor = !inside && active && active !== document.body &&
      (old.compareDocumentPosition(active) & Node.DOCUMENT_POSITION_FOLLOWING) ? active : null;
    var top = anchor && anchor.getBoundingClientRect().top;
    old.replaceWith(fresh);
    scrolled.forEach(function (pair) {
      var box = pair[0] && fresh.querySelector(pair[0]);
      if (box) box.scrollLeft = pair[1];
    });
    if (anchor) window.scrollBy(0, anchor.getBoundingClientRect().top - top);
    if (again) fresh.querySelector(again).focus({ preventScroll: true });
    return true;
  }

  async function poll() {
    try {
      var resp = await fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } });
      if (resp.ok) {
        var data = await resp.json();
        showProgress(data);
        var end = ended(data, shownPending());
        if (end.changed && !boardUrl) {
          if (await swapPage(end.said)) return;
        } else if (end.changed && await swap()) {
          showProgress(data);
          if (news && end.said.length) news.textContent = "Leaderboard updated: " + end.said.join("; ") + ".";
        }
        if (!shownPending().any) return;
      }
    } catch (err) { /* try again at the next tick */ }
    setTimeout(poll, 1000);
  }
  if (shownPending().any) setTimeout(poll, 500);
})();
