// The owner's knowledge page: uploads with live progress, and restoring an earlier version.
// Both go through the JSON API; the page itself is server-rendered and readable without this.
(function () {
  "use strict";
  var POLL_MS = 500;
  var text = JSON.parse(document.getElementById("knowledge-text").textContent);

  function csrf() {
    var match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (all, name) {
      return name in values ? String(values[name]) : all;
    });
  }

  function show(box, message) {
    box.textContent = message;
    box.hidden = false;
  }

  // fetch() that resolves to the JSON body, or throws an Error carrying the API's `detail`.
  async function request(url, options) {
    var res;
    try {
      res = await fetch(url, Object.assign({credentials: "same-origin"}, options));
    } catch (err) {
      throw new Error(text.network);
    }
    var data = await res.json().catch(function () { return {}; });
    if (!res.ok) { throw new Error(data.detail || fill(text.http, {status: res.status})); }
    return data;
  }

  function sleep(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  document.querySelectorAll("[data-needs-js]").forEach(function (button) { button.disabled = false; });

  // --- upload with progress ---------------------------------------------------------------
  var form = document.getElementById("upload");
  var input = document.getElementById("upload-file");
  var button = form.querySelector("button[type=submit]");
  var statusBox = document.getElementById("upload-status");
  var bar = document.getElementById("upload-progress");
  var live = document.getElementById("upload-text");
  var doneBox = document.getElementById("upload-done");
  var errorBox = document.getElementById("upload-error");

  function report(job) {
    var state = text.states[job.state] || job.state;
    // The worker of the first run died: the job waits or runs again from the start (once).
    if (job.retry) state = text.retry + " · " + state;
    if (job.total) {
      bar.max = job.total;
      bar.value = job.done;
      live.textContent = fill(text.progress, job) + " · " + state;
    } else {
      // The worker counts the sections once it has read the file; until then no count to show.
      bar.removeAttribute("value");
      live.textContent = state;
    }
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    errorBox.hidden = true;
    doneBox.hidden = true;
    if (!input.files.length) { show(errorBox, text.choose); input.focus(); return; }
    var body = new FormData();
    body.append("file", input.files[0]);
    button.disabled = true;
    statusBox.hidden = false;
    bar.removeAttribute("value");  // indeterminate while the file travels
    live.textContent = text.sending;
    try {
      var job = await request(form.action, {method: "POST", headers: {"X-CSRFToken": csrf()}, body: body});
      report(job);
      while (job.state !== "done" && job.state !== "failed") {
        await sleep(POLL_MS);
        job = await request(form.dataset.jobs + job.id, {headers: {"Accept": "application/json"}});
        report(job);
      }
      if (job.state === "failed") {
        throw new Error(fill(text.failed, {detail: (job.error && job.error.detail) || job.state}));
      }
      live.textContent = fill(text.finished, job);
      doneBox.hidden = false;
      form.reset();
    } catch (err) {
      statusBox.hidden = true;
      show(errorBox, err.message);
    } finally {
      button.disabled = false;
    }
  });

  // --- restore an earlier version ---------------------------------------------------------
  var historyError = document.getElementById("history-error");
  document.querySelectorAll("form.restore").forEach(function (restore) {
    restore.addEventListener("submit", async function (event) {
      event.preventDefault();
      var trigger = restore.querySelector("button");
      trigger.disabled = true;
      historyError.hidden = true;
      try {
        await request(restore.action, {
          method: "POST",
          headers: {"Content-Type": "application/json", "X-CSRFToken": csrf()},
          body: JSON.stringify({version: Number(restore.dataset.version)})
        });
        window.location.reload();
      } catch (err) {
        show(historyError, err.message);
        trigger.disabled = false;
      }
    });
  });
})();
