// Forms with data-confirm ask before they submit (no inline handler: the pages' CSP forbids them).
document.addEventListener("submit", function (e) {
  var message = e.target.dataset && e.target.dataset.confirm;
  if (message && !window.confirm(message)) e.preventDefault();
});
