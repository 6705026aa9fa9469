// Home page: each "Verify ledger" button asks the server to verify that tenant's chain and
// shows the outcome in the texts of the #verify-text data island (the reader's language).
document.querySelectorAll("button.verify").forEach(function (button) {
  button.addEventListener("click", async function () {
    var out = document.querySelector('output[data-tenant="' + button.dataset.tenant + '"]');
    out.textContent = "…";
    var res = await fetch("/api/ledger/verify?tenant=" + encodeURIComponent(button.dataset.tenant), {credentials: "same-origin"});
    var body = await res.json();
    var text = JSON.parse(document.getElementById("verify-text").textContent);
    out.textContent = body.ok
      ? text.ok.replace("{n}", body.checked)
      : text.bad.replace("{seq}", body.first_bad_seq).replace("{reason}", body.reason);
  });
});
