// Every page: the language menu applies a choice at once (its button shows only without JS).
// A static file rather than an onchange attribute: the Content-Security-Policy forbids inline script.
document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
  select.addEventListener("change", function () { select.form.submit(); });
});
