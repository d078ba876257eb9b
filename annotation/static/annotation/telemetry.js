/* Writing telemetry of a free-text answer (annotation/services/telemetry.py checks and stores it).
 *
 * Counts and durations only, never the keys typed nor the text pasted: how many keys were pressed in the text box,
 * how many edits deleted text, how many characters were typed, pasted and deleted (a selection typed or pasted over
 * counts as deleted) (each paste's size and whether it was a
 * piece of the original), the time from the item being drawn to the first key and to the submit, the active typing
 * time, and each time the page lost focus (tab switch, another window) with its length and the size of the first
 * insertion after coming back. The consent screen says so.
 *
 * Usage (items.js): `const recorder = StyleCrowdTelemetry.attach(textarea, { source })`; the answer carries
 * `recorder.snapshot()` as `telemetry`. A recorder detaches itself once its text box has left the page.
 */
(function () {
  "use strict";

  const VERSION = 1;
  const IDLE_MS = 2000;     // a pause between two edits longer than this is not typing time
  const MAX_EVENTS = 50;    // pastes and focus losses listed; the totals keep counting past them
  const MATCH_RATIO = 90;   // a paste this alike to the original (or a piece of it) "matched the source"
  // Keys that enter no text on their own; shortcuts with Ctrl/Cmd (paste, submit) are not keystrokes either.
  const NOT_KEYSTROKES = new Set(["Shift", "Control", "Alt", "AltGraph", "Meta", "OS", "CapsLock", "Fn", "Tab",
    "Escape", "NumLock", "ScrollLock"]);

  function normalize(text) { return String(text || "").toLowerCase().split(/\s+/).filter(Boolean).join(" "); }

  function matchesSource(source, pasted) {
    const piece = normalize(pasted);
    if (!piece || !source) return false;
    if (source.includes(piece)) return true;
    const ratio = window.StyleCrowdItems && window.StyleCrowdItems.copyRatio;
    return Boolean(ratio) && ratio(source, piece) >= MATCH_RATIO;
  }

  function attach(area, options) {
    const source = normalize(options && options.source);
    const started = performance.now();
    const now = () => Math.max(0, Math.round(performance.now() - started));
    const data = {
      keystrokes: 0, deletions: 0, typed_chars: 0, deleted_chars: 0, pasted_chars: 0, paste_count: 0,
      first_key_ms: null, active_ms: 0, focus_loss_count: 0, focus_loss_ms: 0, pastes: [], focus_losses: [],
    };
    let previous = area.value;
    let lastEdit = null;        // when the previous typing edit happened (active time adds the short gaps)
    let pasteHandled = false;   // the paste/drop event counted the insertion its input event reports
    let pastedNow = 0;          // its size, to count a selection it replaced as deleted
    let awaySince = null;
    let awaitingInsert = null;  // the last focus loss, until the first insertion after it

    function firstKey(at) { if (data.first_key_ms === null) data.first_key_ms = at; }
    function typingEdit(at) {
      firstKey(at);
      if (lastEdit !== null && at - lastEdit <= IDLE_MS) data.active_ms += at - lastEdit;
      lastEdit = at;
    }
    function inserted(chars, at) {
      if (awaitingInsert && chars > 0) {
        awaitingInsert.entry.next_insert_chars = chars;
        awaitingInsert.entry.next_insert_after_ms = Math.max(0, at - awaitingInsert.returnedAt);
        awaitingInsert = null;
      }
    }
    function paste(text) {
      const at = now();
      const chars = String(text || "").length;
      data.paste_count += 1;
      data.pasted_chars += chars;
      if (data.pastes.length < MAX_EVENTS) data.pastes.push({ at_ms: at, chars, matched_source: matchesSource(source, text) });
      inserted(chars, at);
      pasteHandled = true;
      pastedNow = chars;
    }

    area.addEventListener("keydown", (event) => {
      if (NOT_KEYSTROKES.has(event.key) || event.ctrlKey || event.metaKey) return;
      data.keystrokes += 1;
      firstKey(now());
    });
    area.addEventListener("paste", (event) => paste(event.clipboardData ? event.clipboardData.getData("text/plain") : ""));
    area.addEventListener("drop", (event) => paste(event.dataTransfer ? event.dataTransfer.getData("text/plain") : ""));
    area.addEventListener("input", (event) => {
      const at = now();
      const value = area.value;
      const grown = value.length - previous.length;
      previous = value;
      const type = event.inputType || "";
      const handled = pasteHandled;
      pasteHandled = false;
      if (type === "insertFromPaste" || type === "insertFromDrop" || (handled && !type)) {
        if (!handled) paste("x".repeat(Math.max(0, grown)));  // a paste without its event: its size only
        data.deleted_chars += Math.max(0, pastedNow - grown);  // a selection the paste replaced
        pasteHandled = false;  // paste() above set it; no input event is left to consume it
        lastEdit = null;
        return;
      }
      if (type.startsWith("delete")) {
        data.deletions += 1;
        data.deleted_chars += Math.max(0, -grown);
        typingEdit(at);
        return;
      }
      // Typed: a key, a phone keyboard's word, an autocorrection (its data), an IME composition (what it added).
      const chars = (type === "insertText" || type === "insertReplacementText") && event.data ? event.data.length
        : Math.max(0, grown);
      data.typed_chars += chars;
      // A selection the typing replaced was deleted: the text box then holds typed + pasted - deleted characters
      // exactly, which the server bounds by the text's length.
      data.deleted_chars += Math.max(0, chars - grown);
      typingEdit(at);
      inserted(chars, at);
    });

    function detached() {
      if (area.isConnected) return false;
      window.removeEventListener("blur", away);
      window.removeEventListener("focus", back);
      document.removeEventListener("visibilitychange", visibility);
      return true;
    }
    function away() {
      if (detached() || awaySince !== null) return;
      awaySince = now();
      lastEdit = null;  // the time away is not typing time
    }
    function back() {
      if (detached() || awaySince === null) return;
      const at = now();
      const entry = { at_ms: awaySince, ms: at - awaySince, next_insert_chars: 0, next_insert_after_ms: null };
      data.focus_loss_count += 1;
      data.focus_loss_ms += entry.ms;
      if (data.focus_losses.length < MAX_EVENTS) data.focus_losses.push(entry);
      awaitingInsert = { entry, returnedAt: at };
      awaySince = null;
    }
    function visibility() { if (document.hidden) away(); else back(); }
    window.addEventListener("blur", away);
    window.addEventListener("focus", back);
    document.addEventListener("visibilitychange", visibility);

    function snapshot() {
      back();  // a submit while "away" (a focus event lost on the way) closes the loss first
      return Object.assign({ version: VERSION }, data, {
        submit_ms: now(),
        pastes: data.pastes.map((p) => Object.assign({}, p)),
        focus_losses: data.focus_losses.map((f) => Object.assign({}, f)),
      });
    }
    return { snapshot };
  }

  window.StyleCrowdTelemetry = { attach, VERSION };
})();
