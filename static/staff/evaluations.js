// The study page's model evaluations: progress bars move while models are evaluated, and the
// page reloads once they are done (the leaderboard then shows their figures).
(function () {
  "use strict";
  var script = document.getElementById("evaluations-script");
  var url = script && script.dataset.statusUrl;
  if (!url || !document.querySelector("tr[data-evaluation] progress")) return;
  async function poll() {
    try {
      var resp = await fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } });
      if (resp.ok) {
        var pending = 0;
        (await resp.json()).evaluations.forEach(function (e) {
          var row = document.querySelector('tr[data-evaluation="' + e.id + '"]');
          if (!row) return;
          var bar = row.querySelector("progress");
          var state = row.querySelector(".state");
          if (bar) bar.value = e.progress;
          if (state) state.textContent = e.status + " " + Math.round(e.progress * 100) + "%";
          if (e.status === "queued" || e.status === "running") pending++;
        });
        if (!pending) { window.location.reload(); return; }
      }
    } catch (err) { /* try again at the next tick */ }
    setTimeout(poll, 1000);
  }
  setTimeout(poll, 500);
})();
