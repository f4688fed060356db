// The Releases page while a version is being written: every 5 s it fetches the page again in the
// background and shows the version's current step in place; once no version is being written any
// more, it puts the fresh list of versions in place of the old one (the version's zip, checksums
// and public page, or why it failed), says so in the page's status line and drops the "being
// written" message. No reload and no meta refresh: the release form, focus and a screen reader's
// place stay where they are.
(function () {
  "use strict";
  if (!document.querySelector(".release-building")) return;
  var news = document.getElementById("releases-news");
  function versions(doc) {
    var table = doc.querySelector("table.releases");
    return table ? table.closest(".scroll") : null;
  }
  async function poll() {
    try {
      var resp = await fetch(window.location.href, { credentials: "same-origin" });
      if (resp.ok) {
        var fresh = new DOMParser().parseFromString(await resp.text(), "text/html");
        var cells = fresh.querySelectorAll(".release-building");
        if (!cells.length) {
          var shownList = versions(document), freshList = versions(fresh);
          if (shownList && freshList) shownList.replaceWith(document.importNode(freshList, true));
          var failed = fresh.querySelector(".release-failed");
          if (news) news.textContent = failed ? "The release failed: see its row." : "The release is written.";
          // The message of the release's start ("… is being written") is old news now.
          document.querySelectorAll("ul.messages li").forEach(function (li) {
            if (/is being written/.test(li.textContent)) li.remove();
          });
          var list = document.querySelector("ul.messages");
          if (list && !list.children.length) list.remove();
          return;
        }
        var shown = document.querySelectorAll(".release-building");
        cells.forEach(function (cell, i) {
          if (shown[i] && shown[i].textContent !== cell.textContent) shown[i].innerHTML = cell.innerHTML;
        });
      }
    } catch (err) { /* try again at the next tick */ }
    setTimeout(poll, 5000);
  }
  setTimeout(poll, 5000);
})();
