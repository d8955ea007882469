// Filters of cases.html: the URL's hash holds them (impl=, verdict=, area=, level=, and q=, words
// every one of which the case's id, rules or title must contain), so a filtered view is a link.
// No server, no network; without script the page shows every case.
(function () {
  var form = document.getElementById("filters");
  var table = document.getElementById("cases");
  if (!form || !table) { return; }
  var KEYS = ["impl", "verdict", "area", "level", "q"];
  function matches(row, query) {
    var text = "";
    for (var i = 0; i < 4; i += 1) { text += " " + row.cells[i].textContent.toLowerCase(); }
    return query.toLowerCase().split(/\s+/).every(function (word) {
      return text.indexOf(word) >= 0; });
  }
  function read() {
    var state = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
      var parts = pair.split("=");
      if (parts[0]) { state[decodeURIComponent(parts[0])] = decodeURIComponent(parts[1] || ""); }
    });
    return state;
  }
  function apply() {
    var s = read(), shown = 0;
    KEYS.forEach(function (k) { form.elements[k].value = s[k] || ""; });
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var ok = (!s.level || row.dataset.level === s.level) &&
               (!s.area || row.dataset.areas.indexOf(" " + s.area + " ") >= 0);
      if (ok && s.q) { ok = matches(row, s.q.trim()); }
      if (ok && s.verdict) {
        if (s.impl) { ok = row.getAttribute("data-v-" + s.impl) === s.verdict; }
        else { ok = Array.prototype.some.call(row.attributes, function (a) {
          return a.name.indexOf("data-v-") === 0 && a.value === s.verdict; }); }
      }
      row.hidden = !ok; if (ok) { shown += 1; }
    });
    document.getElementById("shown").textContent = shown + " case(s)";
  }
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  function write() {
    var parts = [];
    KEYS.forEach(function (k) {
      if (form.elements[k].value) { parts.push(k + "=" + encodeURIComponent(form.elements[k].value)); }
    });
    location.hash = parts.join("&");
  }
  form.addEventListener("change", write);
  form.elements.q.addEventListener("input", write);
  window.addEventListener("hashchange", apply);
  apply();
})();
