"use strict";
// Kindred's app runtime: the spec, Telegram's theme, and state kept by the server per app.
// Spec text is only ever set as textContent or an input's value: it is shown, never run.
const K = (() => {
  const spec = JSON.parse(document.getElementById("kindred-spec").textContent);
  const root = document.documentElement;
  const launch = new URLSearchParams(location.hash.slice(1));
  // A template's page names its theme; a model's page gets the spec's.
  if (!root.dataset.theme) root.dataset.theme = ["light", "dark"].includes(spec.theme) ? spec.theme : "auto";
  const isColour = (value) => typeof value === "string" && /^#[0-9a-fA-F]{6}$/.test(value);
  const telegram = launch.get("tgWebAppThemeParams");
  if (telegram) {
    try {
      const params = JSON.parse(telegram);
      const names = [["bg_color", "--tg-bg"], ["secondary_bg_color", "--tg-card"],
        ["text_color", "--tg-text"], ["hint_color", "--tg-muted"]];
      for (const [param, variable] of names) {
        if (isColour(params[param])) root.style.setProperty(variable, params[param]);
      }
      root.dataset.telegram = "yes";
    } catch (error) { /* a malformed theme leaves the app's own */ }
  }
  const stateUrl = location.protocol.startsWith("http") ? location.pathname.replace(/\/+$/, "") + "/state" : "";
  // Inside Telegram: its signed initData, sent with each state request so that the server can
  // check that the person saving is the app's owner.
  const initData = launch.get("tgWebAppData");
  const signed = initData ? { "X-Telegram-Init-Data": initData } : {};
  let state = {};
  const el = (tag, text, className) => {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  };
  const load = async () => {
    if (!stateUrl) return state;
    try {
      const response = await fetch(stateUrl, { cache: "no-store", headers: signed });
      if (response.ok) {
        const stored = await response.json();
        for (const [key, value] of Object.entries(stored)) {
          try { state[key] = JSON.parse(value); } catch (error) { /* skip a damaged key */ }
        }
      }
    } catch (error) { /* offline or downloaded: the app still works, unsaved */ }
    return state;
  };
  const save = async (key, value) => {
    state[key] = value;
    if (!stateUrl) return;
    try {
      const response = await fetch(stateUrl, { method: "POST", headers: { "Content-Type": "text/plain", ...signed },
        body: JSON.stringify({ key: key, value: JSON.stringify(value) }) });
      const status = document.getElementById("saved");
      const why = response.status === 413 ? "this app's storage is full"
        : response.status === 401 || response.status === 403 ? "Telegram could not confirm it is you" : "the server refused it";
      if (status) status.textContent = response.ok ? "Saved" : "Not saved: " + why;
    } catch (error) { /* kept in this page until it closes */ }
  };
  // The person's own date, YYYY-MM-DD, `back` days ago. Not toISOString: that is UTC's date, a day
  // off for half the world around midnight.
  const day = (back = 0) => {
    const d = new Date();
    d.setDate(d.getDate() - back);
    return d.getFullYear() + "-" + String(d.getMonth() + 1).padStart(2, "0") + "-" + String(d.getDate()).padStart(2, "0");
  };
  const ready = (start) => {
    const title = document.getElementById("title");
    if (title) title.textContent = spec.title;
    // `data-ready` once the kind has drawn its saved state: what a test or a screenshot waits for.
    load().then(() => { start(spec, state); root.dataset.ready = "yes"; });
  };
  return { spec, el, save, ready, day };
})();
