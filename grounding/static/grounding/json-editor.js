// The admin's JSON editor: checks each structured value against its shipped JSON
// Schema as it is typed (the server answers; this file holds no schema logic) and
// marks the field invalid with the offenders' pointers and codes. Same-origin only.
(function () {
  "use strict";
  function csrfToken(form) {
    var input = form && form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }
  function show(area, output, result) {
    output.textContent = "";
    if (result.valid) {
      area.setCustomValidity("");
      area.classList.remove("registry-json-invalid");
      output.classList.remove("registry-json-refused");
      output.textContent = "Valid against the schema " + area.dataset.schema + ".";
      return;
    }
    var lines = result.offenders.map(function (o) {
      return (o.pointer || "/") + ": " + o.detail + " (" + o.code + ")";
    });
    area.setCustomValidity(lines.join("\n"));
    area.classList.add("registry-json-invalid");
    output.classList.add("registry-json-refused");
    var list = document.createElement("ul");
    lines.forEach(function (line) {
      var item = document.createElement("li");
      item.textContent = line;  // text, never markup
      list.appendChild(item);
    });
    output.appendChild(document.createTextNode("Refused by the schema " + area.dataset.schema + ":"));
    output.appendChild(list);
  }
  function check(area) {
    var output = document.getElementById(area.id + "_check");
    var text = area.value;
    try {
      JSON.parse(text);
    } catch (e) {
      show(area, output, {valid: false, offenders: [{pointer: "", code: "json.parse", detail: "not valid JSON"}]});
      return Promise.resolve();
    }
    return fetch(area.dataset.validateUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": csrfToken(area.form)},
      body: text
    }).then(function (response) {
      return response.ok ? response.json() : null;
    }).then(function (result) {
      if (result && area.value === text) { show(area, output, result); }
    }).catch(function () { /* the server validates on submit anyway */ });
  }
  function attach(area) {
    var timer = null;
    area.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { check(area); }, 250);
    });
    area.addEventListener("blur", function () { clearTimeout(timer); check(area); });
  }
  function init() {
    document.querySelectorAll("textarea.registry-json[data-schema]").forEach(attach);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
