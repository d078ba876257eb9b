/* StyleCrowd item renderers: one function per item kind (docs/annotator-api.md, "Per kind").
 *
 * Each renderer fills `ctx.body` with the item's texts and answer controls and returns
 * `{read, onKey}`: `read()` gives the answer to send (or null while incomplete), `onKey(event)` handles the
 * number-key shortcuts and says whether it used the key. Renderers only ever see texts and choices.
 */
(function () {
  "use strict";

  const HINTS = {
    quadruple: gettext("Tip: press <kbd>1</kbd> or <kbd>2</kbd> to choose, then <kbd>Enter</kbd> to continue."),
    triple: gettext("Tip: press <kbd>1</kbd> or <kbd>2</kbd> to choose, then <kbd>Enter</kbd> to continue."),
    "style-or-content": gettext("Tip: press <kbd>1</kbd> or <kbd>2</kbd> to choose, then <kbd>Enter</kbd> to continue."),
    likert: gettext("Tip: press a number key (<kbd>1</kbd>–<kbd>5</kbd> on a five-point scale) to rate the highlighted question, then <kbd>Enter</kbd> to continue."),
    ranking: gettext("Tip: use the ▲ and ▼ buttons (or focus a text and press <kbd>Alt</kbd>+<kbd>↑</kbd>/<kbd>↓</kbd>) to order the texts, then <kbd>Enter</kbd> on Next."),
    rewrite: gettext("Tip: press <kbd>Ctrl</kbd>+<kbd>Enter</kbd> to continue once your text is long enough."),
  };

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([key, value]) => {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;  // texts always go in as text, never as HTML
      else node.setAttribute(key, value);
    });
    (children || []).forEach((child) => { if (child) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child); });
    return node;
  }

  // Item texts are in the study's language (the page's <html lang dir>), marked on each text for screen readers,
  // fonts and right-to-left scripts even where a text sits inside a differently marked element.
  const ITEM_LANG = { lang: document.documentElement.lang || "en", dir: document.documentElement.dir || "ltr" };

  function textCard(tag, cls, text, id) {
    return el("div", { class: "text-card " + cls, id: id || "" }, [el("span", { class: "tag", text: tag }), el("p", Object.assign({ text: text || "" }, ITEM_LANG))]);
  }

  function pill(cls, text) { return el("span", { class: "pill " + cls, text }); }

  // A radio group of large cards; number keys pick the n-th choice.
  function choiceGroup(ctx, choices, describe, question) {
    const name = "choice";
    const group = el("div", { class: "choices" + (choices.length === 2 ? " two" : ""), role: "radiogroup", "aria-labelledby": "item-question" });
    choices.forEach((value, index) => {
      const input = el("input", { type: "radio", name, value, id: name + "-" + index });
      input.addEventListener("change", () => ctx.setSubmitEnabled(true));
      const label = el("label", { class: "option choice", for: name + "-" + index, "data-choice": value },
        [input, el("span", { class: "key keyboard-only", "aria-hidden": "true", text: String(index + 1) }), describe(value, index)]);
      group.appendChild(label);
    });
    const target = ctx.answer || ctx.body;  // the answer bar next to Next, where the page has one
    target.appendChild(el("p", { class: "question-text", id: "item-question", text: question }));
    target.appendChild(group);
    return {
      read: () => { const picked = group.querySelector("input:checked"); return picked ? picked.value : null; },
      onKey: (event) => {
        const n = parseInt(event.key, 10);
        if (!(n >= 1 && n <= choices.length)) return false;
        const input = document.getElementById(name + "-" + (n - 1));
        input.checked = true;
        input.focus();
        ctx.setSubmitEnabled(true);
        return true;
      },
    };
  }

  // A choice in words, as its card draws it: "S2 goes with A1 and S1 goes with A2", "S2 is closer in style to A1".
  function answerWords(kind, value) {
    if (kind === "quadruple") {
      const [first, second] = String(value).split("-");
      return interpolate(gettext("%(first)s goes with A1 and %(second)s goes with A2"), { first: first, second: second }, true);
    }
    return kind === "style-or-content" ? interpolate(gettext("%(sentence)s has the style of A1"), { sentence: value }, true)
      : interpolate(gettext("%(sentence)s is closer in style to A1"), { sentence: value }, true);
  }

  function quadruple(ctx) {
    const t = ctx.item.texts;
    ctx.body.appendChild(el("p", { class: "row-label", text: gettext("Anchors") }));
    ctx.body.appendChild(el("div", { class: "pair-row" }, [textCard("A1", "anchor-1", t.anchor_1, "text-a1"), textCard("A2", "anchor-2", t.anchor_2, "text-a2")]));
    ctx.body.appendChild(el("p", { class: "row-label", text: gettext("Sentences") }));
    ctx.body.appendChild(el("div", { class: "pair-row" }, [textCard("S1", "sentence", t.sentence_1, "text-s1"), textCard("S2", "sentence", t.sentence_2, "text-s2")]));
    // Each choice draws the pairing it stands for, so "S1-S2" never has to be decoded.
    const describe = (value) => {
      const [first, second] = value.split("-");
      return el("span", { class: "pairing" }, [
        el("span", {}, [pill("s", first), " " + gettext("goes with") + " ", pill("a1", "A1")]),
        el("span", {}, [pill("s", second), " " + gettext("goes with") + " ", pill("a2", "A2")]),
        el("span", { class: "visually-hidden", text: " (" + value + ")" }),
      ]);
    };
    return choiceGroup(ctx, ctx.item.choices || ["S1-S2", "S2-S1"], describe, gettext("Which sentence matches each anchor in style?"));
  }

  function triple(ctx) {
    const t = ctx.item.texts;
    const styleOrContent = ctx.kind === "style-or-content";
    ctx.body.appendChild(el("div", { class: "texts" }, [textCard("A1", "anchor-1", t.anchor_1, "text-a1")]));
    ctx.body.appendChild(el("div", { class: "pair-row" }, [textCard("S1", "sentence", t.sentence_1, "text-s1"), textCard("S2", "sentence", t.sentence_2, "text-s2")]));
    const relation = " " + (styleOrContent ? gettext("has the style of") : gettext("is closer in style to")) + " ";
    const describe = (value) => el("span", {}, [pill("s", value), relation, pill("a1", "A1")]);
    const question = styleOrContent ? gettext("Which sentence has the same style as A1 (whatever its content)?")
      : gettext("Which sentence is closest in style to A1?");
    return choiceGroup(ctx, ctx.item.choices || ["S1", "S2"], describe, question);
  }

  function likert(ctx) {
    const t = ctx.item.texts || {};
    const cards = [];
    if (t.source) cards.push(textCard(gettext("Original"), "sentence", t.source, "text-source"));
    if (t.rewrite) cards.push(textCard(t.target_style ? interpolate(gettext("Rewrite (%(style)s)"), { style: t.target_style }, true) : gettext("Rewrite"), "anchor-1", t.rewrite, "text-rewrite"));
    if (t.reference) cards.push(textCard(gettext("Reference"), "anchor-2", t.reference, "text-reference"));
    ctx.body.appendChild(el("div", { class: "texts" }, cards));
    const questions = ctx.item.questions || ctx.questions || [];
    let active = 0;
    const fieldsets = questions.map((q, qi) => {
      const fs = el("fieldset", { class: "question likert", "data-name": q.name });
      fs.appendChild(el("legend", { text: q.text || q.name }));
      const scale = el("div", { class: "scale", role: "radiogroup", "aria-label": q.text || q.name });
      const labels = q.labels || {};
      for (let v = q.min, pos = 1; v <= q.max; v += 1, pos += 1) {
        const id = "q" + qi + "-" + v;
        const input = el("input", { type: "radio", name: "likert-" + q.name, value: String(v), id });
        if (labels[String(v)]) input.setAttribute("aria-label", v + " — " + labels[String(v)]);
        input.addEventListener("change", () => update());
        input.addEventListener("focus", () => setActive(qi));
        scale.appendChild(el("label", { class: "option", for: id, "data-value": String(v), "data-key": String(pos) }, [
          input, el("span", { class: "value", text: (v > 0 && q.min < 0 ? "+" : "") + v }),
          labels[String(v)] ? el("span", { class: "label", text: labels[String(v)], "aria-hidden": "true" }) : null,
        ]));
      }
      fs.appendChild(scale);
      const low = labels[String(q.min)];
      const high = labels[String(q.max)];
      if ((low || high) && Object.keys(labels).length <= 2) {
        fs.appendChild(el("div", { class: "scale-ends", "aria-hidden": "true" }, [el("span", { text: low || "" }), el("span", { text: high || "" })]));
      }
      ctx.body.appendChild(fs);
      return fs;
    });
    function setActive(index) {
      active = index;
      fieldsets.forEach((fs, i) => fs.classList.toggle("active", i === active));
    }
    function update() { ctx.setSubmitEnabled(fieldsets.every((fs) => fs.querySelector("input:checked"))); }
    setActive(0);
    return {
      read: () => {
        const answer = {};
        for (const fs of fieldsets) {
          const picked = fs.querySelector("input:checked");
          if (!picked) return null;
          answer[fs.dataset.name] = parseInt(picked.value, 10);
        }
        return answer;
      },
      onKey: (event) => {
        const n = parseInt(event.key, 10);
        if (!(n >= 1 && n <= 9) || !fieldsets.length) return false;
        const option = fieldsets[active].querySelector('label[data-key="' + n + '"] input');
        if (!option) return false;
        option.checked = true;
        option.focus();
        update();
        // Move on to the next unanswered question so 1–5 can rate them all in a row.
        const following = fieldsets.findIndex((fs, i) => i > active && !fs.querySelector("input:checked"));
        if (following >= 0) setActive(following);
        return true;
      },
    };
  }

  function ranking(ctx) {
    const t = ctx.item.texts || {};
    if (t.source) ctx.body.appendChild(el("div", { class: "texts" }, [textCard(gettext("Original"), "sentence", t.source, "text-source")]));
    ctx.body.appendChild(el("p", { class: "question-text", id: "item-question", text: gettext("Order these texts from best (top) to worst (bottom).") }));
    const list = el("ol", { class: "ranking", "aria-labelledby": "item-question" });
    function renumber() {
      const rows = Array.from(list.children);
      rows.forEach((li, i) => {
        li.querySelector(".rank").textContent = String(i + 1);
        li.querySelector(".up").disabled = i === 0;
        li.querySelector(".down").disabled = i === rows.length - 1;
        li.setAttribute("aria-label", interpolate(gettext("Rank %(rank)s: %(text)s"), { rank: i + 1, text: li.querySelector(".output").textContent }, true));
      });
      ctx.setSubmitEnabled(rows.length > 0);
    }
    function move(li, delta, button) {
      const rows = Array.from(list.children);
      const target = rows.indexOf(li) + delta;
      if (target < 0 || target >= rows.length) return;
      if (delta < 0) list.insertBefore(li, rows[target]); else list.insertBefore(li, rows[target].nextSibling);
      renumber();
      ctx.info(interpolate(gettext("Moved to rank %(rank)s."), { rank: target + 1 }, true));
      // Keep focus on the same control (or its twin if it just became disabled) so repeated presses keep moving.
      li.querySelector(button.disabled ? (delta < 0 ? ".down" : ".up") : (delta < 0 ? ".up" : ".down")).focus();
    }
    (ctx.item.outputs || []).forEach((output, i) => {
      const id = typeof output === "string" ? "o" + (i + 1) : output.id;
      const text = typeof output === "string" ? output : output.text;
      const up = el("button", { type: "button", class: "move up", "aria-label": interpolate(gettext("Move up: %(text)s"), { text: text.slice(0, 60) }, true), text: "▲" });
      const down = el("button", { type: "button", class: "move down", "aria-label": interpolate(gettext("Move down: %(text)s"), { text: text.slice(0, 60) }, true), text: "▼" });
      const li = el("li", { "data-output": id, tabindex: "0" }, [
        el("span", { class: "rank", "aria-hidden": "true" }), el("p", Object.assign({ class: "output", text }, ITEM_LANG)), el("span", { class: "moves" }, [up, down]),
      ]);
      up.addEventListener("click", () => move(li, -1, up));
      down.addEventListener("click", () => move(li, 1, down));
      li.addEventListener("keydown", (event) => {
        if (event.target !== li || !event.altKey) return;
        if (event.key === "ArrowUp") { event.preventDefault(); move(li, -1, up); li.focus(); }
        if (event.key === "ArrowDown") { event.preventDefault(); move(li, 1, down); li.focus(); }
      });
      list.appendChild(li);
    });
    ctx.body.appendChild(list);
    renumber();
    return { read: () => Array.from(list.children).map((li) => li.dataset.output), onKey: null };
  }

  function rewrite(ctx) {
    const t = ctx.item.texts || {};
    const minLength = ctx.item.min_length || ctx.minLength || 1;
    if (t.source) ctx.body.appendChild(el("div", { class: "texts" }, [textCard(gettext("Original"), "sentence", t.source, "text-source")]));
    const prompt = t.target_style ? interpolate(gettext("Rewrite the original so that it is %(style)s, keeping its meaning."), { style: t.target_style }, true)
      : gettext("Rewrite the original in your own words, keeping its meaning.");
    ctx.body.appendChild(el("label", { class: "question-text", for: "rewrite-text", text: prompt }));
    const area = el("textarea", { id: "rewrite-text", name: "rewrite", "aria-describedby": "rewrite-counter", minlength: String(minLength), lang: ITEM_LANG.lang, dir: ITEM_LANG.dir });
    const counter = el("p", { class: "counter", id: "rewrite-counter", "aria-live": "polite" });
    const maxLength = ctx.item.max_length || 5000;
    const threshold = ctx.item.copy_threshold;
    function update() {
      const value = area.value.trim();
      const length = value.length;
      // The server refuses copies (rapidfuzz ratio ≥ the study's threshold); this mirror says so before submit.
      const copied = threshold !== undefined && threshold !== null && t.source && length >= minLength
        && copyRatio(t.source, value) >= threshold;
      const ok = length >= minLength && length <= maxLength && !copied;
      counter.textContent = copied ? gettext("Your rewrite is (nearly) identical to the original: rewrite it in the target style.")
        : length > maxLength ? interpolate(gettext("%(length)s characters: at most %(max)s allowed"), { length: length, max: maxLength }, true)
        : ok ? interpolate(gettext("%(length)s characters ✓"), { length: length }, true) : interpolate(gettext("%(length)s of at least %(min)s characters"), { length: length, min: minLength }, true);
      counter.classList.toggle("ok", ok);
      counter.classList.toggle("copied", Boolean(copied));
      ctx.setSubmitEnabled(ok);
    }
    area.addEventListener("input", update);
    area.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); ctx.submit(); }
    });
    ctx.body.appendChild(area);
    ctx.body.appendChild(counter);
    update();
    setTimeout(() => area.focus(), 0);  // after the screen change has focused the heading
    // Writing telemetry (telemetry.js): counts and durations, sent with the answer.
    const recorder = window.StyleCrowdTelemetry ? window.StyleCrowdTelemetry.attach(area, { source: t.source }) : null;
    // Nothing is sent while the counter says no (too short, too long, a copy of the original).
    return { read: () => (counter.classList.contains("ok") ? area.value.trim() : null), onKey: null,
      telemetry: recorder ? recorder.snapshot : null };
  }

  // rapidfuzz's fuzz.ratio (normalized Indel similarity, 0-100) on lower-cased, space-normalized texts: the
  // browser's mirror of the server's copy check (annotation/services/rewrites.py), which stays authoritative.
  function copyRatio(a, b) {
    const x = a.toLowerCase().split(/\s+/).filter(Boolean).join(" ");
    const y = b.toLowerCase().split(/\s+/).filter(Boolean).join(" ");
    if (!x.length && !y.length) return 100;
    let prev = new Array(y.length + 1).fill(0);
    for (let i = 1; i <= x.length; i++) {
      const row = new Array(y.length + 1).fill(0);
      for (let j = 1; j <= y.length; j++) row[j] = x[i - 1] === y[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], row[j - 1]);
      prev = row;
    }
    return (200 * prev[y.length]) / (x.length + y.length);
  }

  // The reasons of the worker's rejected rewrites (session payload `feedback`), shown on their next visit.
  function feedback(container, rows) {
    const old = document.getElementById("rewrite-feedback");
    if (old) old.remove();
    if (!rows || !rows.length) return;
    const box = el("div", { class: "notice feedback", id: "rewrite-feedback", role: "status" },
      [el("h2", { text: gettext("Feedback on your earlier rewrites") })]);
    rows.forEach((row) => {
      box.appendChild(el("div", { class: "feedback-row" }, [
        el("p", { text: interpolate(gettext("Original: %(text)s"), { text: row.source }, true) }), el("p", { text: interpolate(gettext("Your rewrite: %(text)s"), { text: row.rewrite }, true) }),
        el("p", { class: "reason", text: interpolate(gettext("Rejected: %(reason)s"), { reason: row.reason_label }, true) + (row.note ? " — " + row.note : "") }),
      ]));
    });
    container.insertBefore(box, container.firstChild);
  }

  const RENDERERS = { quadruple, triple, "style-or-content": triple, likert, ranking, rewrite };

  function render(kind, ctx) {
    const renderer = RENDERERS[kind];
    if (!renderer) {
      ctx.body.appendChild(el("p", { text: interpolate(gettext("This item cannot be shown (unknown kind %(kind)s)."), { kind: kind }, true) }));
      return { read: () => null, onKey: null };
    }
    return renderer(Object.assign({ kind }, ctx));
  }

  window.StyleCrowdItems = { render, hints: HINTS, feedback, copyRatio, answerWords };
})();
