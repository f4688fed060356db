// "No pairs right now": ask the server every 10 seconds and move on once there is work.
(function () {
  "use strict";
  var root = document.getElementById("waiting");
  var status = document.getElementById("wait-status");
  var PERIOD = 10000;

  async function check() {
    try {
      var resp = await fetch(root.dataset.nextUrl, { credentials: "same-origin", headers: { "Accept": "application/json" } });
      if (resp.ok) {
        var data = await resp.json();
        if (data.comparison) { window.location.assign(root.dataset.voteUrl); return; }
        if (data.completion_code) { window.location.assign(root.dataset.doneUrl); return; }
        status.textContent = "Still nothing new. Checking again in 10 seconds\u2026";
      } else {
        status.textContent = "Could not check just now. Trying again in 10 seconds\u2026";
      }
    } catch (e) {
      status.textContent = "No connection. Trying again in 10 seconds\u2026";
    }
    setTimeout(check, PERIOD);
  }

  setTimeout(check, PERIOD);
})();
