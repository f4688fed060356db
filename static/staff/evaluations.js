// Model evaluations on the study page and on a model's page: progress bars move while the file
// is read and the model evaluated, and the page reloads once they have ended (the leaderboard
// or the model's page then shows the figures, or the reason a file was refused).
(function () {
  "use strict";
  // A refused upload: the study page opens at its form (#evaluate), the message in view. (Not a
  // fragment in the form's action: the browser would carry it to the model's page on success.)
  var heading = document.getElementById("evaluate");
  if (heading && document.querySelector("#evaluate ~ .errors[role=alert]")) heading.scrollIntoView();
  var script = document.getElementById("evaluations-script");
  var url = script && script.dataset.statusUrl;
  if (!url || !document.querySelector("[data-evaluation] progress")) return;
  function filling() {
    var form = document.querySelector("form.evaluation-form");
    if (!form) return false;
    if (form.contains(document.activeElement)) return true;
    return Array.prototype.some.call(form.elements, function (field) {
      if (field.type === "file") return field.files.length > 0;
      return (field.type === "text" || field.tagName === "TEXTAREA") && field.value !== "";
    });
  }
  async function poll() {
    try {
      var resp = await fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } });
      if (resp.ok) {
        var pending = 0;
        (await resp.json()).evaluations.forEach(function (e) {
          var row = document.querySelector('[data-evaluation="' + e.id + '"]');
          if (!row) return;
          var bar = row.querySelector("progress");
          var state = row.querySelector(".state");
          if (bar) bar.value = e.progress;
          if (state) state.textContent = (e.stage || e.status) + " " + Math.round(e.progress * 100) + "%";
          if (e.status === "queued" || e.status === "running") pending++;
        });
        var shown = document.querySelectorAll("[data-evaluation] progress").length;
        // Not while staff are filling in the upload form: a reload would lose what they typed.
        if ((!pending || pending < shown) && !filling()) { window.location.reload(); return; }
      }
    } catch (err) { /* try again at the next tick */ }
    setTimeout(poll, 1000);
  }
  setTimeout(poll, 500);
})();
