// The Releases page while a version is being written: every 5 s it fetches the page again in the
// background and shows the version's current step in place; once no version is being written any
// more, it reloads (not while staff are filling in the release form: they would lose it). No
// meta refresh: focus and a screen reader's place stay where they are.
(function () {
  "use strict";
  if (!document.querySelector(".release-building")) return;
  var form = document.querySelector("form.release-form");
  function filling() {
    if (!form) return false;
    if (form.contains(document.activeElement)) return true;
    return Array.prototype.some.call(form.elements, function (field) {
      return (field.type === "text" || field.tagName === "TEXTAREA") && field.value !== field.defaultValue;
    });
  }
  async function poll() {
    try {
      var resp = await fetch(window.location.href, { credentials: "same-origin" });
      if (resp.ok) {
        var fresh = new DOMParser().parseFromString(await resp.text(), "text/html");
        var cells = fresh.querySelectorAll(".release-building");
        if (!cells.length) {
          if (!filling()) { window.location.reload(); return; }
        } else {
          var shown = document.querySelectorAll(".release-building");
          cells.forEach(function (cell, i) {
            if (shown[i] && shown[i].textContent !== cell.textContent) shown[i].innerHTML = cell.innerHTML;
          });
        }
      }
    } catch (err) { /* try again at the next tick */ }
    setTimeout(poll, 5000);
  }
  setTimeout(poll, 5000);
})();
