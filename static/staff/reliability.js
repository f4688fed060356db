// The study page's Reliability box: every 5 s while the page is seen, fetch the box again
// (/staff/<slug>/reliability/box) and put it in place of this one when its figures changed
// (a report stored after a ballot, a typed top computed, the threshold changed elsewhere).
// Not while staff use its forms: a typed k or threshold, or the focus in the box, waits.
(function () {
  "use strict";
  var first = document.getElementById("reliability");
  if (!first || !first.dataset.boxUrl) return;
  var url = first.dataset.boxUrl;
  var news = document.getElementById("reliability-news");

  function inUse(box) {
    var active = document.activeElement;
    if (active && active !== document.body && box.contains(active)) return true;
    return Array.prototype.some.call(box.querySelectorAll("input"), function (input) {
      return input.value !== input.defaultValue;
    });
  }

  async function poll() {
    if (document.hidden) return;
    var box = document.getElementById("reliability");
    try {
      var resp = await fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } });
      if (!resp.ok) return;
      var holder = document.createElement("div");
      holder.innerHTML = await resp.text();
      var fresh = holder.querySelector("#reliability");
      if (!fresh || fresh.dataset.version === box.dataset.version || inUse(box)) return;
      box.replaceWith(fresh);
      if (news) {
        news.textContent = fresh.dataset.ballot
          ? "Reliability figures updated: after ballot " + fresh.dataset.ballot + "."
          : "Reliability figures updated.";
      }
    } catch (err) { /* try again at the next tick */ }
  }
  setInterval(poll, 5000);
})();
