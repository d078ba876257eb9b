/* StyleCrowd annotator: drives the annotator JSON API (docs/annotator-api.md) from one server-rendered page.
 *
 * The session token is the participant's only credential; it is kept in localStorage under a key made of the
 * study and the participant, so a reload (or coming back from the same link) resumes the same item. The page
 * never sees a correct answer: it only renders texts and choices and posts what the participant picked.
 * The screens and the session's life are here; drawing each item kind is in items.js (loaded first).
 */
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("annotator-config").textContent);
  const API = config.api;
  const who = Object.assign({}, config.who);
  const $ = (id) => document.getElementById(id);
  // The researcher's preview (preview.js): the same page, its API answered in the browser, nothing stored anywhere.
  const PREVIEW = config.preview ? window.StyleCrowdPreview : null;

  // --- storage: tolerate browsers that refuse localStorage (private mode) by falling back to memory ---------
  const memory = {};
  const store = PREVIEW ? {
    get(key) { return memory[key] || null; },
    set(key, value) { memory[key] = value; },
    remove(key) { delete memory[key]; },
  } : {
    get(key) { try { return window.localStorage.getItem(key); } catch (e) { return memory[key] || null; } },
    set(key, value) { try { window.localStorage.setItem(key, value); } catch (e) { memory[key] = value; } },
    remove(key) { try { window.localStorage.removeItem(key); } catch (e) { delete memory[key]; } },
  };

  function randomId() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    const bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // An anonymous link has no platform id: keep one per browser so a reload is the same participant.
  if (who.platform === "anonymous" && !who.participant) {
    const anonKey = "stylecrowd:" + config.slug + ":anonymous";
    who.participant = store.get(anonKey) || "anon-" + randomId();
    store.set(anonKey, who.participant);
  }
  const sessionKey = ["stylecrowd", config.slug, who.platform, who.participant].join(":");

  let session = null;       // the latest session object
  let item = null;          // the item on screen
  let itemShownAt = 0;      // performance.now() when the item was rendered, for the optional `seconds`
  let busy = false;         // a request is in flight: ignore further submits and shortcuts
  let keyHandler = null;    // the current item's keyboard handler

  // --- HTTP ---------------------------------------------------------------------------------------------
  class ApiError extends Error {
    constructor(status, code, message, details) {
      super(message);
      this.status = status; this.code = code; this.details = details;
    }
  }

  async function api(method, path, body, withCookie) {
    if (PREVIEW) return PREVIEW.api(method, path, body);
    let response;
    try {
      response = await fetch(API + path, {
        method,
        headers: body === undefined ? { Accept: "application/json" }
          : { Accept: "application/json", "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        // The token is the credential. Only opening a session sends cookies: the HttpOnly resume cookie (scoped to
        // this study's session endpoint) proves this browser started the session, when localStorage cannot.
        credentials: withCookie ? "same-origin" : "omit",
        cache: "no-store",
      });
    } catch (e) {
      throw new ApiError(0, "network", gettext("We could not reach the server. Check your connection and try again."));
    }
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) {
      const err = (data && data.error) || {};
      throw new ApiError(response.status, err.code || "error", err.message || interpolate(gettext("The server answered %(status)s."), { status: response.status }, true), err.details);
    }
    return { status: response.status, data };
  }

  // --- screens ------------------------------------------------------------------------------------------
  function show(name) {
    document.querySelectorAll(".screen[data-screen]").forEach((el) => { el.hidden = el.dataset.screen !== name; });
    document.body.dataset.screen = name;
    $("progress").hidden = name !== "item";
    // Move focus to the new screen's heading so screen readers announce it and Tab starts from the top.
    const heading = document.querySelector('.screen[data-screen="' + name + '"] h1');
    if (heading) heading.focus({ preventScroll: false });
    window.scrollTo(0, 0);
  }

  function setProgress(progress) {
    if (!progress) return;
    const total = Math.max(progress.total || 0, 0);
    const done = Math.min(progress.done || 0, total);
    const bar = $("progress-bar");
    bar.setAttribute("aria-valuemax", String(total || 1));
    bar.setAttribute("aria-valuenow", String(done));
    bar.setAttribute("aria-valuetext", interpolate(gettext("%(done)s of %(total)s answered"), { done: done, total: total }, true));
    $("progress-fill").style.width = total ? (100 * done / total) + "%" : "0";
    const current = Math.min(done + 1, total);
    $("progress-text").textContent = total ? interpolate(gettext("Item %(current)s of %(total)s"), { current: current, total: total }, true) : "";
    $("item-heading").textContent = total ? interpolate(gettext("Item %(current)s of %(total)s"), { current: current, total: total }, true) : gettext("Item");
  }

  // The batch's time limit, from `expires_at`: shown so nobody is surprised when unanswered items are released.
  // Until the first answer the batch is held only for the first-answer grace (config.timing, from the study): the
  // first item says so, and the clock counts down that grace instead.
  const TIMING = config.timing || {};
  let expiresAt = null;
  let graceUntil = null;
  let clock = null;
  let graceTimer = null;
  let graceEnd = null;  // the grace this page counted down (kept after it ran out), null when it counted none
  function setDeadline(iso, done) {
    expiresAt = iso ? new Date(iso) : null;
    graceUntil = null;
    if (graceTimer) { window.clearTimeout(graceTimer); graceTimer = null; }
    if (expiresAt && !isNaN(expiresAt.getTime()) && !done && TIMING.grace_seconds) {
      // `expires_at` is the batch's start plus its time limit; the grace runs from the same start.
      const started = expiresAt.getTime() - TIMING.time_limit_minutes * 60000;
      graceUntil = new Date(started + TIMING.grace_seconds * 1000);
    }
    graceEnd = graceUntil;
    const note = $("grace-note");
    note.hidden = !graceUntil;
    note.textContent = "";
    if (graceUntil) {  // on a phone only the first sentence shows (annotator.css): the texts keep their room
      note.append(interpolate(gettext("Answer this first item within %(grace)s to keep your place, however long you take to read it."), { grace: TIMING.grace_text }, true) + " ");
      const more = document.createElement("span");
      more.className = "grace-more";
      more.textContent = interpolate(gettext("After your first answer you have %(duration)s for the whole batch."), { duration: TIMING.time_limit_text }, true);
      note.append(more);
      // When the grace runs out the page says so at once (the server has given the items back): not only after an
      // answer that it would refuse.
      graceTimer = window.setTimeout(graceExpired, Math.max(0, graceUntil.getTime() - Date.now()));
    }
    if (clock) { window.clearInterval(clock); clock = null; }
    tick();
    if (expiresAt) clock = window.setInterval(tick, 15000);
  }
  function tick() {
    const node = $("time-left");
    if (!expiresAt || isNaN(expiresAt.getTime())) { node.textContent = ""; return; }
    const until = graceUntil || expiresAt;
    const minutes = Math.max(0, Math.ceil((until.getTime() - Date.now()) / 60000));
    if (graceUntil) {
      node.textContent = minutes <= 1 ? gettext("Less than a minute to give your first answer")
        : interpolate(gettext("%(minutes)s min to give your first answer"), { minutes: minutes }, true);
    } else {
      node.textContent = minutes <= 1 ? gettext("Less than a minute left") : interpolate(gettext("%(minutes)s min left"), { minutes: minutes }, true);
    }
    node.classList.toggle("low", minutes <= (graceUntil ? 1 : 5));
  }

  function graceExpired() {
    graceTimer = null;
    if (clock) { window.clearInterval(clock); clock = null; }
    $("time-left").textContent = gettext("Your time for a first answer has run out");
    endScreen("grace_expired", null, null);
  }

  // An expired session without an answer ran out of its first-answer grace, not of the batch's time limit: when
  // this page counted the grace down, only once that grace is over (an item's own reservation may lapse before);
  // on a reload, a batch without an answer can only have expired by its grace (it is shorter than the limit).
  function expiredKind(data) {
    const answered = data && data.progress ? data.progress.done > 0 : true;
    if (!TIMING.grace_seconds || answered) return "expired";
    return graceEnd === null || Date.now() >= graceEnd.getTime() ? "grace_expired" : "expired";
  }

  function fail(message, retry) {
    $("error-message").textContent = message;
    $("error-retry").onclick = retry || (() => window.location.reload());
    show("error");
  }

  // --- endings (docs/annotator-api.md, "Endings"): what happened, the code if there is one, and what to do now on
  // the platform the participant came from. Prolific: the study's completion link; MTurk: MTurk's external submit
  // form (never a link to another platform); an anonymous link: the code and the study's link if it has one.
  const PLATFORM = who.platform;
  const ENDINGS = window.StyleCrowdEndings.endings;
  const REDIRECT_LABEL = window.StyleCrowdEndings.redirectLabel;
  const DONE_NOTE = window.StyleCrowdEndings.doneNote;

  // An MTurk assignment is finished by posting the code to MTurk (the form is there when the link came from MTurk).
  function mturkForm(form, codeInput, code) {
    if (!form) return false;
    codeInput.value = code || "";
    form.hidden = !code;
    return Boolean(code);
  }

  function endScreen(kind, code, redirectUrl) {
    const ending = ENDINGS[kind];
    document.body.dataset.ending = kind;
    $("end-heading").textContent = ending.heading;
    const message = typeof ending.message === "string" ? ending.message
      : ending.message[PLATFORM] || ending.message.anonymous;
    $("end-message").textContent = message.replace("{grace}", TIMING.grace_text || "");
    $("end-todo").textContent = ending.todo[PLATFORM] || ending.todo.anonymous;
    $("end-code-block").hidden = !code;
    $("end-code").textContent = code || "";
    const link = $("end-redirect");
    const posted = PLATFORM === "mturk" && mturkForm($("end-mturk-submit"), $("end-mturk-code"), code);
    link.hidden = !redirectUrl || PLATFORM === "mturk";
    if (redirectUrl && !link.hidden) {
      link.href = redirectUrl;
      link.textContent = REDIRECT_LABEL[PLATFORM] || REDIRECT_LABEL.anonymous;
    }
    if (PLATFORM === "mturk" && code && !posted) {
      $("end-todo").textContent = gettext("Enter this code in the HIT on Amazon Mechanical Turk and submit it there.");
    }
    show("end");
  }

  function doneScreen(code, redirectUrl) {
    document.body.dataset.ending = "completed";
    $("done-code").textContent = code || "";
    const link = $("done-redirect");
    link.hidden = !redirectUrl || PLATFORM === "mturk";
    if (redirectUrl && !link.hidden) {
      link.href = redirectUrl;
      link.textContent = REDIRECT_LABEL[PLATFORM] || REDIRECT_LABEL.anonymous;
    }
    $("done-copy").hidden = !code;
    // An open link has no platform to report to: the code is kept in case the researcher asks for it.
    let todo = redirectUrl ? interpolate(gettext("Click \u201c%(label)s\u201d to finish."), { label: REDIRECT_LABEL.anonymous }, true)
      : gettext("Please keep this code: the researcher may ask you for it.");
    if (PLATFORM === "prolific") {
      todo = redirectUrl ? gettext("Click the button to go back to Prolific, which records your completion with this code.")
        : gettext("Enter this code on Prolific to complete your submission.");
    } else if (PLATFORM === "mturk") {
      todo = mturkForm($("mturk-submit"), $("mturk-code"), code)
        ? gettext("Click \u201cSubmit the HIT\u201d to send this code to Amazon Mechanical Turk and finish the assignment.")
        : gettext("Enter this code in the HIT on Amazon Mechanical Turk and submit it there.");
    }
    $("done-todo").textContent = todo;
    $("done-note").textContent = DONE_NOTE[PLATFORM] || "";
    show("done");
  }

  // A link the study refuses (a placeholder left in it, another platform's link): trying again cannot help, so
  // the page says why and what to do, with no retry button (the server-rendered page says the same, see views.py).
  function refusedScreen(err) {
    document.body.dataset.ending = "refused";
    $("refused-heading").textContent = gettext("This link cannot open the study");
    $("refused-message").textContent = err.message;
    $("refused-todo").textContent = config.refused_todo;
    show("refused");
  }

  // Plain words for the API's error codes (docs/annotator-api.md, "Errors").
  function explain(err) {
    switch (err.code) {
      case "network": return err.message;
      case "expired": return gettext("Your time for this batch has run out, so your unanswered items were given to others.");
      case "not_found": return gettext("We could not find your session. It may have been closed; start again from the study link.");
      case "screened_out": return gettext("Based on your earlier answers you are not eligible for this study.");
      case "no_work_available": return gettext("This study is full: there are no more items for you in it.");
      case "not_reserved": return gettext("This item is no longer reserved for you — loading the next one.");
      case "answer_conflict": return gettext("You already answered this item with a different answer — loading the next one.");
      case "wrong_state": return gettext("Your session moved on in another window — picking up where it is now.");
      default: return err.message || gettext("Something went wrong.");
    }
  }

  // --- session lifecycle ----------------------------------------------------------------------------------
  async function boot() {
    const token = store.get(sessionKey);
    if (token) {
      try {
        const { data } = await api("GET", "sessions/" + encodeURIComponent(token) + "/");
        return route(data);
      } catch (err) {
        if (err.status !== 404) return fail(explain(err), boot);
        store.remove(sessionKey);  // forgotten or forged token: open a fresh session below
      }
    }
    try {
      const { data } = await api("POST", "studies/" + encodeURIComponent(config.slug) + "/sessions/", {
        participant: who.participant, platform: who.platform, study_ref: who.study_ref, session_ref: who.session_ref,
      }, true);
      // No token: a batch that ended in this platform session, opened again in another browser: its code again
      // (or its ending), never its credential.
      if (!data.token) {
        return data.state === "completed" ? doneScreen(data.completion_code, data.redirect_url) : route(data);
      }
      store.set(sessionKey, data.token);
      route(data);
    } catch (err) {
      if (err.code === "session_in_progress") return endScreen("in_progress", null, null);
      if (err.code === "already_participated") return endScreen("already_participated", null, null);
      if (err.code === "screened_out") return endScreen("screened_out_before", null, null);
      if (err.code === "no_work_available") return endScreen("full", null, null);
      if (err.code === "invalid_link") return refusedScreen(err);
      if (err.status === 404) return endScreen("unavailable", null, null);
      fail(explain(err), boot);
    }
  }

  function instructionsSeenKey() { return sessionKey + ":instructions:" + (session && session.token) + ":" + (session && session.batch); }

  function route(data) {
    session = data;
    if (data.progress) setProgress(data.progress);
    switch (data.state) {
      case "consent": return showConsent();
      case "eligibility": return showEligibility();
      case "instructions": return showInstructions();
      case "items":
        // A reload mid-batch goes straight back to the item; the first time, the instructions come first.
        if (store.get(instructionsSeenKey()) || (data.progress && data.progress.done > 0)) return loadNext();
        return showInstructions();
      case "completed": return loadNext();
      case "screened_out": return endScreen("screened_out", data.completion_code, data.redirect_url);
      // The token stays stored: a reload shows the same ending again, not a new batch or the consent page.
      case "expired": return endScreen(expiredKind(data), null, null);
      case "declined": return endScreen("declined", null, null);
      default:
        return fail(interpolate(gettext("Your session is in an unexpected state (%(state)s)."), { state: data.state }, true), boot);
    }
  }

  function tokenPath(suffix) { return "sessions/" + encodeURIComponent(session.token) + "/" + suffix; }

  function showConsent() {
    // The receipt code the participant quotes to withdraw or ask for erasure: this session's own.
    if (session && session.consent_receipt) $("consent-receipt").textContent = session.consent_receipt;
    show("consent");
  }

  $("consent-agree").addEventListener("click", async () => {
    if (busy) return;
    // A study asking special-category questions needs its own explicit tick, separate from the general consent.
    const tick = $("special-consent-tick");
    if (config.special_consent && tick && !tick.checked) {
      $("special-consent-error").textContent = gettext("Tick the explicit consent above to take part, or choose “I do not agree”.");
      tick.focus();
      return;
    }
    if (tick) $("special-consent-error").textContent = "";
    busy = true;
    try {
      const body = { agree: true };
      if (config.special_consent) body.special_category = true;
      const { data } = await api("POST", tokenPath("consent/"), body);
      route(data);
    } catch (err) { fail(explain(err), boot); } finally { busy = false; }
  });
  // Declining is recorded on the server (the batch ends as `declined`), so a reload shows the same ending.
  $("consent-decline").addEventListener("click", async () => {
    if (busy) return;
    busy = true;
    try {
      const { data } = await api("POST", tokenPath("consent/"), { agree: false });
      route(data);
    } catch (err) { fail(explain(err), boot); } finally { busy = false; }
  });

  function showEligibility() {
    const questions = (session.study && session.study.eligibility_questions) || config.eligibility;
    if (!questions.length) return showInstructions();
    $("eligibility-error").textContent = "";
    show("eligibility");
  }

  $("eligibility-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    if (busy) return;
    const answers = {};
    const missing = [];
    document.querySelectorAll("#eligibility-form fieldset.question").forEach((fs) => {
      // A long list is one <select> (its empty first option: nothing chosen), a short one radio buttons.
      const picked = fs.querySelector("select") || fs.querySelector("input:checked");
      if (picked && picked.value) answers[fs.dataset.name] = picked.value;
      else missing.push(fs.querySelector("legend").textContent.trim());
    });
    if (missing.length) {
      $("eligibility-error").textContent = interpolate(gettext("Please answer: %(questions)s"), { questions: missing.join("; ") }, true);
      return;
    }
    busy = true;
    try {
      const { data } = await api("POST", tokenPath("eligibility/"), { answers });
      route(data);
    } catch (err) {
      if (err.code === "invalid") $("eligibility-error").textContent = err.message;
      else fail(explain(err), boot);
    } finally { busy = false; }
  });

  const HINTS = window.StyleCrowdItems.hints;

  function showInstructions() {
    $("instructions-hint").innerHTML = HINTS[config.kind] || "";
    window.StyleCrowdItems.feedback($("instructions-hint").parentNode, session && session.feedback);
    show("instructions");
  }

  $("instructions-start").addEventListener("click", async () => {
    if (busy) return;
    busy = true;
    try {
      // Practice items with feedback come first, once per participant, before the batch's time starts.
      const { data: practice } = await api("GET", tokenPath("practice/"));
      if (practice.item) { busy = false; return showPractice(practice); }
    } catch (err) {
      busy = false;
      return fail(explain(err), boot);
    }
    busy = false;
    await startBatch();
  });

  async function startBatch() {
    if (busy) return;
    busy = true;
    try {
      if (session.state === "instructions") {
        const { data } = await api("POST", tokenPath("start/"), {});
        session = data;
      }
      store.set(instructionsSeenKey(), "1");
      busy = false;
      await loadNext();
    } catch (err) {
      busy = false;
      if (err.code === "no_work_available") return endScreen("full", null, null);
      fail(explain(err), boot);
    }
  }

  // --- practice (annotation/services/practice.py): answered with feedback, never counted ----------------------
  let practiceView = null;
  function showPractice(data) {
    const body = $("practice-body");
    body.innerHTML = "";
    $("practice-feedback").hidden = true;
    $("practice-feedback").textContent = "";
    $("practice-submit").hidden = false;
    $("practice-submit").disabled = true;
    $("practice-continue").hidden = true;
    $("practice-count").textContent = interpolate(gettext("Practice %(current)s of %(total)s"), { current: data.total - data.remaining + 1, total: data.total }, true);
    practiceView = window.StyleCrowdItems.render(data.item.kind, {
      body, item: data.item, setSubmitEnabled: (enabled) => { $("practice-submit").disabled = !enabled; },
      info: () => {}, submit: submitPractice,
    });
    practiceView.itemId = data.item.id;
    practiceView.kind = data.item.kind;
    $("practice-hint").innerHTML = HINTS[data.item.kind] || "";
    show("practice");
  }

  async function submitPractice(event) {
    if (event) event.preventDefault();
    if (busy || !practiceView) return;
    const answer = practiceView.read();
    if (!answer) return;
    busy = true;
    try {
      const { data } = await api("POST", tokenPath("practice/"), { item: practiceView.itemId, answer });
      $("practice-body").querySelectorAll("input").forEach((input) => { input.disabled = true; });
      // In the words the choices are drawn in ("S2 goes with A1 …"), never a code like "S2-S1".
      const words = window.StyleCrowdItems.answerWords(practiceView.kind, data.correct_answer);
      const verdict = (data.correct ? interpolate(gettext("Correct: %(answer)s."), { answer: words }, true) : interpolate(gettext("Not quite: %(answer)s."), { answer: words }, true)) + " ";
      $("practice-feedback").textContent = verdict + (data.explanation || "");
      $("practice-feedback").className = "feedback " + (data.correct ? "right" : "wrong");
      $("practice-feedback").hidden = false;
      $("practice-submit").hidden = true;
      $("practice-continue").hidden = false;
      $("practice-continue").focus();
    } catch (err) {
      fail(explain(err), boot);
    } finally { busy = false; }
  }
  $("practice-form").addEventListener("submit", submitPractice);
  $("practice-continue").addEventListener("click", async () => {
    if (busy) return;
    try {
      const { data } = await api("GET", tokenPath("practice/"));
      if (data.item) return showPractice(data);
    } catch (err) { return fail(explain(err), boot); }
    // The item renderers reuse the choices' ids: drop the practice controls before the first item is drawn.
    $("practice-body").innerHTML = "";
    practiceView = null;
    await startBatch();
  });

  // --- items --------------------------------------------------------------------------------------------
  async function loadNext(notice) {
    busy = true;
    try {
      const { data } = await api("GET", tokenPath("next/"));
      return showNext(data, notice);
    } catch (err) {
      if (err.code === "expired") return route(Object.assign({}, session, { state: "expired" }));
      if (err.code === "no_work_available") return endScreen("full", null, null);
      if (err.code === "wrong_state") return boot();
      fail(explain(err), () => loadNext());
    } finally { busy = false; }
  }

  // The body of `next`: from GET next/, or carried by the answer's response (one request per item).
  function showNext(data, notice) {
    busy = false;
    if (data.state) session.state = data.state;
    if (!data.item) {
      if (data.state === "screened_out") return route(Object.assign({}, session, data));
      return doneScreen(data.completion_code, data.redirect_url);
    }
    if (expiredItemId && data.item.id === expiredItemId) {
      // The server offers the item it just called expired again: the time is up, not just this item's.
      return route(Object.assign({}, session, { state: "expired" }));
    }
    store.set(instructionsSeenKey(), "1");
    setProgress(data.progress);
    setDeadline(data.expires_at, data.progress && data.progress.done > 0);
    renderItem(data.item, notice);
  }

  function setSubmitEnabled(enabled) { $("item-submit").disabled = !enabled; }

  function info(text) {
    $("item-error").classList.add("info");
    $("item-error").textContent = text;
  }

  // Draw the item with its kind's renderer (items.js); keep what it returns to read the answer and the keys.
  function renderItem(next, notice) {
    item = next;
    const body = $("item-body");
    body.innerHTML = "";
    const answer = $("item-answer");  // the choices go in the answer bar (sticky on phones) beside Next
    answer.innerHTML = "";
    $("item-error").textContent = notice || "";
    $("item-error").classList.toggle("info", Boolean(notice));
    setSubmitEnabled(false);
    const kind = next.kind || config.kind;
    body.dataset.kind = kind;
    body.dataset.itemId = next.id;
    const view = window.StyleCrowdItems.render(kind, {
      body, answer, item: next, setSubmitEnabled, info, submit: submitItem,
      questions: (session.study && session.study.questions) || config.likert,
      minLength: (session.study && session.study.rewrite_min_length) || config.rewrite_min_length,
    });
    item.read = view.read;
    item.telemetry = view.telemetry || null;  // free-text items: the writing telemetry (telemetry.js)
    keyHandler = view.onKey;
    $("item-hint").innerHTML = HINTS[kind] || "";
    itemShownAt = performance.now();
    show("item");
  }

  // Leave the notice readable for a moment; ignore keys and clicks meanwhile so nothing is sent twice.
  function pauseThenNext() {
    busy = true;
    setSubmitEnabled(false);
    setTimeout(() => { busy = false; loadNext(); }, 1200);
  }

  // `expired` on an answer means the batch's time limit passed, or only this item's reservation did: the
  // session's state tells which, so the participant either gets the polite end or simply the next item.
  let expiredItemId = null;
  async function itemExpired() {
    expiredItemId = item && item.id;
    try {
      const { data } = await api("GET", "sessions/" + encodeURIComponent(session.token) + "/");
      if (data.state !== "items") return route(data);
    } catch (err) {
      return route(Object.assign({}, session, { state: "expired" }));
    }
    $("item-error").classList.add("info");
    $("item-error").textContent = gettext("This item has expired — loading the next one.");
    pauseThenNext();
  }

  async function submitItem() {
    if (busy || !item) return;
    const answer = item.read ? item.read() : null;
    if (answer === null || answer === undefined) {
      $("item-error").classList.remove("info");
      $("item-error").textContent = gettext("Please answer before continuing.");
      return;
    }
    busy = true;
    setSubmitEnabled(false);
    const seconds = Math.round((performance.now() - itemShownAt) / 100) / 10;
    try {
      const body = { item: item.id, answer, seconds };
      if (item.telemetry) body.telemetry = item.telemetry();
      const { data } = await api("POST", tokenPath("answers/"), body);
      if (data && data.progress) setProgress(data.progress);
      busy = false;
      // The answer's response carries what `next` would answer now; a server without it is asked.
      if (data && data.next) return showNext(data.next);
      await loadNext();
    } catch (err) {
      busy = false;
      if (err.code === "invalid") {
        // Our own input checks should prevent this; show the server's words and let the participant fix it.
        $("item-error").classList.remove("info");
        $("item-error").textContent = interpolate(gettext("That answer was not accepted: %(reason)s"), { reason: err.message }, true);
        setSubmitEnabled(true);
        return;
      }
      if (err.code === "expired") return itemExpired();
      if (err.code === "not_reserved" || err.code === "answer_conflict") {
        const notice = explain(err);
        $("item-error").classList.add("info");
        $("item-error").textContent = notice;
        pauseThenNext();
        return;
      }
      if (err.code === "wrong_state") return boot();
      $("item-error").classList.remove("info");
      $("item-error").textContent = explain(err);
      setSubmitEnabled(true);
    }
  }

  $("item-form").addEventListener("submit", (event) => { event.preventDefault(); submitItem(); });

  // Keyboard tips are for keyboards: CSS hides them on touch screens until a key is pressed (annotator.css).
  document.addEventListener("keydown", () => document.documentElement.classList.add("keyboard-used"), { once: true });

  // The practice screen shows the same key badges as the items: the same keys work there.
  function practiceKey(event) {
    if (busy || !practiceView || event.ctrlKey || event.metaKey || event.altKey) return;
    const answering = !$("practice-submit").hidden;
    if (event.key === "Enter") {
      if (event.target && event.target.tagName === "BUTTON") return;  // the focused button's own Enter
      event.preventDefault();
      if (!answering) $("practice-continue").click();
      else if (!$("practice-submit").disabled) submitPractice();
      return;
    }
    if (answering && practiceView.onKey && practiceView.onKey(event)) event.preventDefault();
  }

  document.addEventListener("keydown", (event) => {
    if (document.body.dataset.screen === "practice") return practiceKey(event);
    if (document.body.dataset.screen !== "item" || busy) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text"))) return;
    if (event.key === "Enter") {
      // Enter on a move button activates the button, not the form.
      if (target && target.tagName === "BUTTON" && target.type === "button") return;
      event.preventDefault();
      if (!$("item-submit").disabled) submitItem();
      return;
    }
    if (keyHandler && keyHandler(event)) event.preventDefault();
  });

  $("done-copy").addEventListener("click", async () => {
    const code = $("done-code").textContent;
    try { await navigator.clipboard.writeText(code); $("done-note").textContent = gettext("Code copied."); }
    catch (e) { $("done-note").textContent = gettext("Select the code above and copy it."); }
  });

  boot();
})();
