// The voting page: one POST per answer returns the next pair, so it shows at once.
// Buttons stay disabled until the server acknowledges the answer; a failed request is retried
// with backoff (the server treats a repeated identical vote as the same vote, so no double vote).
(function () {
  "use strict";
  var root = document.getElementById("voting");
  var urls = root.dataset;
  var csrf = root.querySelector("input[name=csrfmiddlewaretoken]").value;
  var buttons = Array.prototype.slice.call(root.querySelectorAll("button[data-choice]"));
  var hasTie = !!document.getElementById("choice-tie");
  var message = document.getElementById("message");
  var messageText = document.getElementById("message-text");
  var retryButton = document.getElementById("retry");
  var announce = document.getElementById("announce");
  var state = JSON.parse(document.getElementById("first-comparison").textContent);
  var shownAt = performance.now();
  var busy = false;
  var pending = null; // the body of an answer the server has not acknowledged yet
  var MAX_ATTEMPTS = 6;

  function pairText(item) { return item.token_a + " \u2013 " + item.token_b; }

  function setBusy(on) {
    busy = on;
    buttons.forEach(function (b) { b.disabled = on; });
    root.setAttribute("aria-busy", on ? "true" : "false");
  }

  function showMessage(text, canRetry) {
    messageText.textContent = text;
    message.hidden = false;
    retryButton.hidden = !canRetry;
  }

  function hideMessage() { message.hidden = true; retryButton.hidden = true; }

  function render(data, focused) {
    var c = data.comparison;
    var p = data.progress;
    document.getElementById("left-text").textContent = pairText(c.left);
    document.getElementById("right-text").textContent = pairText(c.right);
    var bar = document.getElementById("progress-bar");
    bar.max = p.quota;
    bar.value = p.answered;
    document.getElementById("progress-text").textContent = p.answered + " of " + p.quota + " answered";
    announce.textContent = "Question " + (p.answered + 1) + ": " + pairText(c.left) + ", or " + pairText(c.right) + ".";
    state = data;
    setBusy(false);
    // A disabled button loses keyboard focus: give it back so keyboard users keep their place.
    if (focused && (document.activeElement === document.body || document.activeElement === null)) {
      focused.focus();
    }
    shownAt = performance.now();
  }

  function handle(data, focused) {
    if (data.comparison) { render(data, focused); return; }
    window.location.assign(data.completion_code ? urls.doneUrl : urls.waitUrl);
  }

  function sleep(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }

  function post(body) {
    return fetch(urls.answerUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, "Accept": "application/json" },
      body: JSON.stringify(body)
    });
  }

  async function reloadCurrent() {
    try {
      var resp = await fetch(urls.nextUrl, { credentials: "same-origin", headers: { "Accept": "application/json" } });
      if (resp.ok) { handle(await resp.json(), null); return; }
    } catch (e) { /* fall through */ }
    showMessage("We could not load the next pair. Please reload the page.", false);
  }

  async function deliver(focused) {
    var delay = 1000;
    for (var attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      var resp = null;
      try { resp = await post(pending); } catch (e) { resp = null; }
      if (resp && resp.ok) {
        pending = null;
        hideMessage();
        handle(await resp.json(), focused);
        return;
      }
      if (resp && resp.status >= 400 && resp.status < 500 && resp.status !== 408 && resp.status !== 429) {
        // Rejected (not a network problem): retrying would not help. Say why and move on.
        pending = null;
        var detail = null;
        try { detail = (await resp.json()).detail; } catch (e) { detail = null; }
        if (resp.status === 403) {
          showMessage((detail || "Your session has ended.") + " Reload the page to continue.", false);
          return;
        }
        showMessage((detail || "That answer was not accepted.") + " Here is your next pair.", false);
        await reloadCurrent();
        return;
      }
      if (attempt < MAX_ATTEMPTS) {
        showMessage("Connection problem: trying again in " + Math.round(delay / 1000) + " s\u2026", false);
        await sleep(delay);
        delay = Math.min(delay * 2, 16000);
      }
    }
    showMessage("We could not reach the server. Your answer is not lost: press \u201cTry again\u201d.", true);
  }

  function answer(choice) {
    if (busy || !state.comparison) return;
    if (choice === "tie" && !hasTie) return;
    var focused = buttons.indexOf(document.activeElement) >= 0 ? document.activeElement : null;
    setBusy(true);
    pending = {
      comparison_id: state.comparison.id,
      choice: choice,
      response_ms: Math.max(0, Math.round(performance.now() - shownAt))
    };
    deliver(focused);
  }

  buttons.forEach(function (b) {
    b.addEventListener("click", function () { answer(b.dataset.choice); });
  });

  retryButton.addEventListener("click", function () {
    if (pending) { hideMessage(); deliver(null); }
  });

  var KEYS = { ArrowLeft: "left", "1": "left", ArrowRight: "right", "2": "right", ArrowDown: "tie", "0": "tie" };
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.repeat) return;
    var choice = KEYS[e.key];
    if (!choice || (choice === "tie" && !hasTie)) return;
    e.preventDefault();
    answer(choice);
  });

  announce.textContent = "Question " + (state.progress.answered + 1) + ": " + pairText(state.comparison.left) + ", or " + pairText(state.comparison.right) + ".";
  setBusy(false); // ready: the buttons were disabled until now
})();
