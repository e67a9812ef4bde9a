// Carries the OAuth request's parameters (from this page's query) into the sign-in form.
"use strict";
const query = new URLSearchParams(location.search);
const form = document.getElementById("authorize");
for (const name of ["client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method"]) {
  if (query.has(name)) form.elements[name].value = query.get(name);
}
const scope = query.get("scope") || "read";
document.getElementById("asks").textContent = `An app asks for: ${scope.split(/[ +]/).join(", ")}.`;
if (query.has("error")) {
  const box = document.getElementById("error");
  box.textContent = query.get("error");
  box.hidden = false;
}
