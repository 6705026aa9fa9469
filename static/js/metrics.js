// The owner overview's charts: one line chart per metric from the page's JSON island
// (#metrics-data, written by rsi/metrics_web.py), drawn with the vendored Chart.js.  The same
// figures are in each chart's table, so the page says everything without this script.
(function () {
  "use strict";
  var island = document.getElementById("metrics-data");
  if (!island || typeof window.Chart === "undefined") return;
  var data = JSON.parse(island.textContent);
  var css = getComputedStyle(document.documentElement);
  var ink = css.getPropertyValue("--ink").trim() || "#1f2933";
  var accent = css.getPropertyValue("--accent").trim() || "#2563eb";
  data.series.forEach(function (series) {
    var canvas = document.querySelector('canvas[data-metric="' + series.id + '"]');
    if (!canvas) return;
    var rate = series.kind === "rate";
    var datasets = [{
      label: series.label,
      data: series.values.map(function (v) { return v === null ? null : (rate ? v * 100 : v); }),
      borderColor: accent,
      backgroundColor: accent,
      pointRadius: 2,
      spanGaps: false,
    }];
    if (series.id === "review_adoption") {
      datasets.push({
        label: "20%",
        data: series.values.map(function () { return data.healthy * 100; }),
        borderColor: ink,
        borderDash: [4, 4],
        pointRadius: 0,
      });
    }
    new window.Chart(canvas, {
      type: "line",
      data: { labels: data.days.map(function (d) { return d.slice(5); }), datasets: datasets },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { legend: { display: datasets.length > 1 } },
        scales: {
          y: rate ? { min: 0, max: 100, ticks: { callback: function (v) { return v + "%"; } } }
                  : { min: 0, max: 5 },
          x: { ticks: { maxTicksLimit: 6, maxRotation: 0 } },
        },
      },
    });
  });
})();
