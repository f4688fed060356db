// The consent page of a study that has not started: check in the background (no reload, so the
// reader's place and focus stay) and, once the page has changed, put its new "Taking part"
// section in place of the old one. Its status paragraph (role="status") is read out.
(function () {
  "use strict";
  var section = document.getElementById("taking-part");
  var period = Number(section.dataset.check) * 1000 || 30000;

  async function check() {
    try {
      var resp = await fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } });
      if (resp.redirected) { window.location.assign(resp.url); return; }
      if (resp.ok) {
        var fresh = new DOMParser().parseFromString(await resp.text(), "text/html").getElementById("taking-part");
        if (fresh && !fresh.dataset.check) {
          section.replaceChildren.apply(section, Array.prototype.slice.call(fresh.childNodes).map(function (n) {
            return document.importNode(n, true);
          }));
          delete section.dataset.check;
          var notice = fresh.querySelector(".notice");
          document.getElementById("taking-part-news").textContent =
            notice ? notice.textContent : section.dataset.opened;
          return;
        }
      }
    } catch (e) { /* offline for a moment: ask again later */ }
    setTimeout(check, period);
  }

  setTimeout(check, period);
})();
