// "No pairs right now": ask the server every 10 seconds and move on once there is work. When the
// study pauses or resumes, or the voter becomes stranded (the partial code is then offered), the
// page reloads to say so. Texts come translated from the page (#voting-messages).
(function () {
  "use strict";
  var root = document.getElementById("waiting");
  var status = document.getElementById("wait-status");
  var T = JSON.parse(document.getElementById("voting-messages").textContent);
  var PERIOD = 10000;

  // The status line is a live region: say a thing once, not again every 10 seconds.
  function say(text) {
    if (status.textContent !== text) status.textContent = text;
  }

  async function check() {
    try {
      var resp = await fetch(root.dataset.nextUrl, { credentials: "same-origin", headers: { "Accept": "application/json" } });
      if (resp.ok) {
        var data = await resp.json();
        if (data.comparison) { window.location.assign(root.dataset.voteUrl); return; }
        if (data.completion_code) { window.location.assign(root.dataset.doneUrl); return; }
        var paused = data.paused ? "1" : "0";
        var stranded = data.stranded ? "1" : "0";
        if (paused !== root.dataset.paused || (stranded === "1" && root.dataset.stranded !== "1")) {
          window.location.reload();
          return;
        }
        say(T.stillNothing);
      } else {
        say(T.checkFailed);
      }
    } catch (e) {
      say(T.offline);
    }
    setTimeout(check, PERIOD);
  }

  setTimeout(check, PERIOD);
})();
