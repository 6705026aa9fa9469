// The daily review's page (/owner/<slug>/reviews/<day>, rsi/review_web.py): while the review waits
// or runs, ask the server where it stands (the owner-only status endpoint, JSON) and show it in
// the page's live region.  Without this script the page refreshes itself (a <noscript> meta
// refresh) and says the same words, rendered by the server.
(function () {
  "use strict";
  var box = document.getElementById("review-progress");
  if (!box) return;
  var url = box.getAttribute("data-status-url");
  var shown = box.getAttribute("data-phase") + "/" + box.getAttribute("data-step");
  var delay = 1000;

  function part(role) { return document.querySelector('[data-role="' + role + '"]'); }

  function render(view) {
    box.className = "progress phase-" + view.phase;
    box.setAttribute("data-phase", view.phase);
    box.setAttribute("data-step", view.step);
    part("message").textContent = view.message;
    var steps = part("steps");
    steps.replaceChildren();
    view.steps.forEach(function (step) {
      var li = document.createElement("li");
      li.className = "step step-" + step.state;
      if (step.state === "current") li.setAttribute("aria-current", "step");
      li.textContent = step.label;
      steps.appendChild(li);
    });
    steps.hidden = view.steps.length === 0;
    var counts = part("counts");
    counts.replaceChildren();
    view.counts.forEach(function (count) {
      var row = document.createElement("div");
      var dt = document.createElement("dt");
      var dd = document.createElement("dd");
      dt.textContent = count.label;
      dd.textContent = String(count.value);
      row.appendChild(dt);
      row.appendChild(dd);
      counts.appendChild(row);
    });
    counts.hidden = view.counts.length === 0;
    var report = part("report");
    var link = report.querySelector("a");
    link.textContent = view.reportText;
    link.setAttribute("href", view.reportUrl || "#");
    report.hidden = !view.reportUrl;
    var run = part("run");
    if (run) {
      run.hidden = !view.canRun;
      run.querySelector("button").textContent = view.runText;
    }
  }

  function poll() {
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (response.status >= 400 && response.status < 500) return null;  // signed out, or not yours
        if (!response.ok) throw new Error("status " + response.status);
        return response.json();
      })
      .then(function (view) {
        if (view === null) return;
        delay = 1000;
        var now = view.phase + "/" + view.step;
        if (now !== shown) {  // only a change is announced by the live region
          shown = now;
          render(view);
        }
        if (view.active) window.setTimeout(poll, delay);
      })
      .catch(function () {
        delay = Math.min(delay * 2, 15000);  // the server is away: ask again, less often
        window.setTimeout(poll, delay);
      });
  }

  if (box.getAttribute("data-phase") === "queued" || box.getAttribute("data-phase") === "running") {
    window.setTimeout(poll, delay);
  }
})();
