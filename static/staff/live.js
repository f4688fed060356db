// The study page's live figures: polls live.json every 5 s and updates the open ballot's
// progress, its rate and time left, the ballot table's bars, the projected time and cost, and
// whether the top is settled (the latest reliability figures, computed after each ballot).
(function () {
  "use strict";
  var box = document.getElementById("live");
  if (!box) return;
  var url = box.dataset.liveUrl;
  var ballotText = document.getElementById("live-ballot");
  var projectionText = document.getElementById("live-projection");
  var rate = document.getElementById("live-rate");
  var settledText = document.getElementById("live-settled");
  var KEY = "collector-hourly-rate";
  rate.value = window.localStorage.getItem(KEY) || "";

  function fixed(x, digits) { return x === null || x === undefined ? "?" : Number(x).toFixed(digits); }
  // Whole numbers as the study's other pages write them (9,900), and a word for one or many.
  function count(n) { return n === null || n === undefined ? "?" : Number(n).toLocaleString("en-US"); }
  function many(n, one, other) { return count(n) + " " + (n === 1 ? one : (other || one + "s")); }

  function show(data) {
    data.ballots.forEach(function (b) {
      var cell = document.querySelector('td[data-ballot="' + b.number + '"]');
      if (!cell) return;
      var bar = cell.querySelector("progress");
      bar.max = Math.max(b.total, 1);
      bar.value = b.answered;
      cell.querySelector(".count").textContent = count(b.answered) + " / " + count(b.total);
    });
    var open = data.ballots.filter(function (b) { return b.number === data.open_ballot; })[0];
    if (open) {
      ballotText.textContent = "Ballot " + open.number + ": " + count(open.answered) + " of " + count(open.total) +
        " comparisons answered, " + count(open.leased) + " in voters' hands; " + fixed(open.votes_per_minute, 1) +
        " votes a minute from " + many(open.active_voters, "active voter") + " over the last 5 minutes" +
        (open.minutes_left === null ? "." : "; about " + many(Math.max(1, Math.ceil(open.minutes_left)), "minute") + " left at this rate.");
    } else {
      ballotText.textContent = "No ballot is open.";
    }
    var p = data.projection;
    var pace = p.pace;
    var basis;
    if (pace.settled) {
      basis = "the median of " + many(pace.trusted_voters, "trusted voter's", "trusted voters'") + " median response times";
    } else if (pace.measured_seconds !== null && pace.measured_seconds > pace.floor_seconds) {
      basis = "the median of " + many(pace.trusted_voters, "trusted voter's", "trusted voters'") + " median response times; never under the planning floor of " +
        fixed(pace.floor_seconds, 1) + " s until " + many(pace.min_trusted_voters, "trusted voter has", "trusted voters have") + " answered";
    } else {
      basis = "the planning floor, kept until " + many(pace.min_trusted_voters, "trusted voter has", "trusted voters have") + " answered (" + count(pace.trusted_voters) +
        " so far" + (pace.measured_seconds === null ? "" : ", their median " + fixed(pace.measured_seconds, 1) + " s") + ")";
    }
    if (pace.left_out_voters) {
      basis += "; " + many(pace.left_out_voters, "flagged or excluded voter") + " left out";
    }
    var text = "Time per comparison: " + fixed(p.seconds_per_comparison, 1) + " s (" + basis + "). Still to answer: " +
      many(p.comparisons_left, "comparison") + ", about " + fixed(p.person_hours_left, 1) + " person-hours (the whole plan: " +
      fixed(p.planned_person_hours, 1) + " at this pace)";
    if (p.cost_left !== undefined) {
      text += "; at " + fixed(p.hourly_rate, 2) + " an hour, about " + fixed(p.cost_left, 2) + " still to pay (the whole plan: " + fixed(p.planned_cost, 2) + ")";
    }
    projectionText.textContent = text + ".";
    var r = data.reliability;
    if (r && settledText) {
      var parts = [];
      if (r.after_ballot !== null) {
        parts.push("Is the top settled? After ballot " + r.after_ballot + ":");
        r.tops.slice(0, 3).forEach(function (t) { parts.push(t.sentence); });
      }
      if (r.pending_ballot !== null) parts.push("Computing the figures after ballot " + r.pending_ballot + "…");
      settledText.textContent = parts.join(" ");
    }
  }

  async function poll() {
    try {
      var query = rate.value ? "?rate=" + encodeURIComponent(rate.value) : "";
      var resp = await fetch(url + query, { credentials: "same-origin", headers: { "Accept": "application/json" } });
      if (resp.ok) show(await resp.json());
    } catch (err) { /* try again at the next tick */ }
  }
  rate.addEventListener("change", function () { window.localStorage.setItem(KEY, rate.value); poll(); });
  poll();
  setInterval(poll, 5000);
})();
