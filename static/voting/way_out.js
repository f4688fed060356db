// A code's way out (templates/voting/_way_out.html): a button that copies the code, and, when the
// study sends voters back by themselves, a visible countdown the voter can stop. No meta refresh:
// the voter has time to hear and copy the code, and the page never leaves while they read.
(function () {
  "use strict";
  var box = document.getElementById("way-out-box");
  var code = document.getElementById("completion-code");
  var copy = document.getElementById("copy-code");
  var copyStatus = document.getElementById("copy-status");

  function selectCode() {
    var range = document.createRange();
    range.selectNodeContents(code);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  if (copy) {
    copy.parentNode.hidden = false;
    copy.addEventListener("click", function () {
      var text = code.textContent.trim();
      var done = function () { copyStatus.textContent = box.dataset.copied; };
      var failed = function () { selectCode(); copyStatus.textContent = box.dataset.copyFailed; };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, failed);
      } else {
        failed();
      }
    });
  }

  var countdown = document.getElementById("countdown");
  if (!countdown) return;
  var link = document.getElementById("way-out");
  var shown = document.getElementById("countdown-seconds");
  var stop = document.getElementById("countdown-stop");
  var left = Number(countdown.dataset.seconds) || 0;
  var timer = null;
  countdown.hidden = false;

  function tick() {
    left -= 1;
    if (left <= 0) {
      clearInterval(timer);
      window.location.assign(link.href);
      return;
    }
    shown.textContent = String(left);
  }

  stop.addEventListener("click", function () {
    clearInterval(timer);
    document.getElementById("countdown-text").hidden = true;
    stop.hidden = true;
    document.getElementById("countdown-stopped").textContent = stop.dataset.stopped;
    link.focus();
  });
  timer = setInterval(tick, 1000);
})();
