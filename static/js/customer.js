// The customer page: opens a session once, then posts messages with idempotent client ids.
(function () {
  "use strict";
  var form = document.getElementById("send");
  var log = document.getElementById("log");
  var errorBox = document.getElementById("error");
  var sessionId = null;

  function csrf() {
    var match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  async function call(url, body) {
    var res = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": csrf()},
      body: JSON.stringify(body || {})
    });
    var data = await res.json().catch(function () { return {}; });
    if (!res.ok) { throw new Error(data.detail || ("HTTP " + res.status)); }
    return data;
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    var text = form.text.value;
    errorBox.hidden = true;
    if (!text.trim()) { errorBox.textContent = form.dataset.empty; errorBox.hidden = false; return; }
    form.querySelector("button").disabled = true;
    try {
      if (!sessionId) {
        sessionId = (await call("/api/agents/" + form.dataset.agent + "/sessions")).id;
      }
      var clientId = (self.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Date.now());
      var posted = await call("/api/sessions/" + sessionId + "/messages", {text: text, client_message_id: clientId});
      var item = document.createElement("li");
      item.textContent = posted.message.text;
      log.appendChild(item);
      form.text.value = "";
    } catch (err) {
      errorBox.textContent = err.message;
      errorBox.hidden = false;
    } finally {
      form.querySelector("button").disabled = false;
      form.text.focus();
    }
  });
})();
