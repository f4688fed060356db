// The voting page: one POST per answer returns the next pair, so it shows at once.
// Buttons stay aria-disabled until the server acknowledges the answer (not disabled: a disabled
// button would drop the keyboard focus to the page, and Tab would then lose the voter's place);
// a failed request is retried
// with backoff (the server treats a repeated identical vote as the same vote, so no double vote).
// Its texts come translated from the page (#voting-messages); "{name}" marks a value to fill in.
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
  var studyLang = urls.studyLang || document.documentElement.lang;
  var state = JSON.parse(document.getElementById("first-comparison").textContent);
  var T = JSON.parse(document.getElementById("voting-messages").textContent);
  // A target study's question, as the text around its target: null for a study of pairs.
  var partsScript = document.getElementById("question-parts");
  var questionParts = partsScript ? JSON.parse(partsScript.textContent) : null;
  var question = document.getElementById("question");
  // A refusal may name a notice (its ballot closed early): the page that follows shows it.
  var notice = null;
  var shownAt = performance.now();
  var busy = false;
  var pending = null; // the body of an answer the server has not acknowledged yet
  var MAX_ATTEMPTS = 6;
  var MAX_WAIT_S = 300; // the longest Retry-After the page honours before asking again

  function pairText(item) { return item.token_a + " \u2013 " + item.token_b; }

  function isTarget(c) { return questionParts !== null && typeof c.target === "string"; }

  // What a choice shows: a target study's candidate, else the pair.
  function sideText(c, item) { return isTarget(c) ? item.candidate : pairText(item); }

  // The question with the comparison's target between its parts (text nodes: never markup).
  function showQuestion(c) {
    if (!isTarget(c)) return;
    question.textContent = "";
    questionParts.forEach(function (part, i) {
      if (i > 0) {
        var word = document.createElement("strong");
        word.className = "target-word";
        word.lang = studyLang;
        word.textContent = c.target;
        question.appendChild(word);
      }
      question.appendChild(document.createTextNode(part));
    });
  }

  function fmt(text, values) {
    return text.replace(/\{(\w+)\}/g, function (all, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : all;
    });
  }

  // ``fmt`` into ``el``, the values named in ``study`` marked with the study's language (what
  // staff wrote is in it; the page's own words are in the voter's).
  function fmtInto(el, text, values, study) {
    el.textContent = "";
    var re = /\{(\w+)\}/g, last = 0, m;
    while ((m = re.exec(text)) !== null) {
      el.appendChild(document.createTextNode(text.slice(last, m.index)));
      var name = m[1];
      var known = Object.prototype.hasOwnProperty.call(values, name);
      if (known && study.indexOf(name) >= 0) {
        var span = document.createElement("span");
        span.lang = studyLang;
        span.textContent = String(values[name]);
        el.appendChild(span);
      } else {
        el.appendChild(document.createTextNode(known ? String(values[name]) : m[0]));
      }
      last = re.lastIndex;
    }
    el.appendChild(document.createTextNode(text.slice(last)));
  }

  function announceQuestion(data) {
    var c = data.comparison;
    var values = {
      number: data.progress.answered + 1,
      left: sideText(c, c.left),
      right: sideText(c, c.right)
    };
    if (isTarget(c)) values.question = questionParts.join(c.target);
    fmtInto(announce, isTarget(c) ? T.targetQuestion : T.question, values, ["left", "right"]);
  }

  function setBusy(on) {
    busy = on;
    buttons.forEach(function (b) {
      b.disabled = false; // disabled only until the script runs (vote.html)
      b.setAttribute("aria-disabled", on ? "true" : "false");
    });
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
    showQuestion(c);
    document.getElementById("left-text").textContent = sideText(c, c.left);
    document.getElementById("right-text").textContent = sideText(c, c.right);
    var bar = document.getElementById("progress-bar");
    bar.max = p.quota;
    bar.value = p.answered;
    document.getElementById("progress-text").textContent = fmt(T.progress, { answered: p.answered, quota: p.quota });
    announceQuestion(data);
    state = data;
    setBusy(false);
    // A keyboard user's place: the answered choice, unless they moved on to another choice
    // meanwhile (focus anywhere else but the page itself is theirs to keep).
    var active = document.activeElement;
    if (focused && buttons.indexOf(active) < 0 && (active === document.body || active === null)) {
      focused.focus();
    }
    shownAt = performance.now();
  }

  function handle(data, focused) {
    if (data.comparison) { notice = null; render(data, focused); return; }
    var next = data.completion_code ? urls.doneUrl : urls.waitUrl;
    window.location.assign(notice ? next + "?notice=" + notice : next);
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
    showMessage(T.reloadFailed, false);
  }

  // Seconds to wait from a 429's Retry-After (seconds or an HTTP date), at least 1.
  function retryAfter(resp) {
    var value = resp.headers.get("Retry-After") || "";
    var seconds = /^\d+$/.test(value.trim()) ? Number(value) : (Date.parse(value) - Date.now()) / 1000;
    if (!isFinite(seconds)) seconds = 5;
    return Math.min(MAX_WAIT_S, Math.max(1, Math.ceil(seconds)));
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
      if (resp && resp.status === 429) {
        // Over the rate limit: not a connection problem. Wait as long as the server asks, then
        // send the same answer again (a wait does not use up an attempt).
        var wait = retryAfter(resp);
        showMessage(fmt(T.slowDown, { seconds: wait }), false);
        await sleep(wait * 1000);
        attempt--;
        continue;
      }
      if (resp && resp.status >= 400 && resp.status < 500 && resp.status !== 408) {
        // Rejected (not a network problem): retrying would not help. Say why and move on.
        pending = null;
        var body = {};
        try { body = (await resp.json()) || {}; } catch (e) { body = {}; }
        var detail = typeof body.detail === "string" ? body.detail : null;
        if (resp.status === 403) {
          showMessage(fmt(T.reloadToContinue, { reason: detail || T.sessionEnded }), false);
          return;
        }
        if (typeof body.notice === "string" && /^[a-z]+$/.test(body.notice)) notice = body.notice;
        if (body.reason === "excluded") {
          // Excluded, or their data deleted at their request: the page they go to says so.
          await reloadCurrent();
          return;
        }
        showMessage(fmt(T.nextPair, { reason: detail || T.notAccepted }), false);
        await reloadCurrent();
        return;
      }
      if (attempt < MAX_ATTEMPTS) {
        showMessage(fmt(T.retrying, { seconds: Math.round(delay / 1000) }), false);
        await sleep(delay);
        delay = Math.min(delay * 2, 16000);
      }
    }
    showMessage(T.unreachable, true);
  }

  // Whether the element shows a keyboard focus ring (a browser without :focus-visible: no).
  function ringShown(el) {
    try { return el.matches(":focus-visible"); } catch (e) { return false; }
  }

  function answer(choice) {
    if (busy || !state.comparison) return;
    if (choice === "tie" && !hasTie) return;
    // A keyboard user's place (a button with a visible focus ring) comes back with the next pair;
    // after a click or a tap the focus goes, so no ring is left that looks like a choice.
    var active = document.activeElement;
    var onButton = buttons.indexOf(active) >= 0;
    var focused = onButton && ringShown(active) ? active : null;
    if (onButton && !focused) active.blur();
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

  // The first pair's arrow is the one on its side of the page (right to left: the right arrow).
  var KEYS = { "1": "left", "2": "right", ArrowDown: "tie", "0": "tie" };
  KEYS[root.dataset.firstKey || "ArrowLeft"] = "left";
  KEYS[root.dataset.secondKey || "ArrowRight"] = "right";
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.repeat) return;
    var choice = KEYS[e.key];
    if (!choice || (choice === "tie" && !hasTie)) return;
    e.preventDefault();
    answer(choice);
  });

  announceQuestion(state);
  setBusy(false); // ready: the buttons were disabled until now
})();
