/* StyleCrowd annotator, preview mode: the researcher's preview of the participant page (admin → study → preview).
 *
 * Loaded before annotator.js only on the preview page. It answers annotator.js's API calls in the browser, with the
 * bodies the annotator API would send (docs/annotator-api.md), from what the page was given (`config.preview`: the
 * first items as served, the practice items with their answers, the eligibility rules, both codes): the page is
 * the participant's own page and nothing is sent to the server, so a preview stores nothing. Links that would leave
 * the page (the platform's redirect, MTurk's submit form) say where they go instead of going there.
 */
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("annotator-config").textContent);
  const preview = config.preview;
  const TOKEN = "preview";

  let state = "none";
  let comprehensionFailures = 0;
  let practiceDone = 0;
  let itemsDone = 0;
  let expiresAt = null;

  function ending() {
    const key = state === "screened_out" ? "screened_out" : state === "completed" ? "completed" : null;
    return key ? { code: preview.codes[key], redirect: preview.redirects[key] } : { code: null, redirect: null };
  }

  function progress() {
    return ["items", "completed"].includes(state) ? { done: itemsDone, total: preview.items.length }
      : { done: 0, total: 0 };
  }

  function session() {
    const end = ending();
    return { token: TOKEN, state, batch: 1, progress: progress(), expires_at: expiresAt,
      completion_code: end.code, redirect_url: end.redirect };
  }

  function nextBody() {
    if (itemsDone < preview.items.length) {
      return { item: preview.items[itemsDone], progress: progress(), state, expires_at: expiresAt };
    }
    state = "completed";
    const end = ending();
    return { item: null, state, completion_code: end.code, redirect_url: end.redirect, progress: progress() };
  }

  function eligibility(answers) {
    const failed = preview.eligibility.filter((q) => q.accept.length && !q.accept.includes(String(answers[q.name])));
    const screeners = failed.filter((q) => !q.comprehension);
    if (failed.some((q) => q.comprehension)) comprehensionFailures += 1;
    if (screeners.length || comprehensionFailures >= 2) state = "screened_out";
    else if (!failed.length) state = "instructions";
    return session();
  }

  function practiceNext() {
    const rest = preview.practice.slice(practiceDone);
    return { item: rest.length ? rest[0].item : null, remaining: rest.length, total: preview.practice.length };
  }

  function practiceAnswer(body) {
    const current = preview.practice[practiceDone];
    practiceDone += 1;
    return { item: body.item, correct: body.answer === current.correct_answer, correct_answer: current.correct_answer,
      explanation: current.explanation, remaining: preview.practice.length - practiceDone };
  }

  // The same paths annotator.js calls on the server (relative to config.api).
  function answer(method, path, body) {
    const action = path.startsWith("studies/") ? "create" : path.split("/").slice(2).join("/").replace(/\/$/, "");
    switch (method + " " + action) {
      case "POST create":
        if (state === "none") state = "consent";
        return session();
      case "GET ": return session();
      case "POST consent":
        state = !body.agree ? "declined" : preview.eligibility.length ? "eligibility" : "instructions";
        return session();
      case "POST eligibility": return eligibility(body.answers || {});
      case "GET practice": return practiceNext();
      case "POST practice": return practiceAnswer(body);
      case "POST start":
        state = "items";
        expiresAt = new Date(Date.now() + config.timing.time_limit_minutes * 60000).toISOString();
        return session();
      case "GET next": return nextBody();
      case "POST answers":
        itemsDone += 1;
        return { progress: progress(), next: nextBody() };
      default:
        throw new Error("The preview does not know " + method + " " + path);
    }
  }

  function api(method, path, body) {
    // A moment's delay, as a real request has: the page's busy states are exercised as they are with a server.
    return new Promise((resolve) => { window.setTimeout(() => resolve({ status: 200, data: answer(method, path, body) }), 30); });
  }

  // Nothing leaves the preview: a redirect or MTurk's submit form says where it would go.
  function say(text) {
    const note = document.getElementById("preview-note");
    note.textContent = text;
    note.hidden = false;
  }
  const note = document.createElement("p");
  note.id = "preview-note";
  note.className = "preview-note";
  note.setAttribute("role", "status");
  note.hidden = true;
  document.getElementById("preview-banner").appendChild(note);
  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("#done-redirect, #end-redirect");
    if (!link) return;
    event.preventDefault();
    say("Preview: this button takes the participant to " + link.href);
  });
  document.addEventListener("submit", (event) => {
    if (!event.target.action || !event.target.action.includes("/mturk/externalSubmit")) return;
    event.preventDefault();
    say("Preview: this button posts the code to Amazon Mechanical Turk with the assignment; nothing is sent from the preview.");
  }, true);

  window.StyleCrowdPreview = { api };
})();
