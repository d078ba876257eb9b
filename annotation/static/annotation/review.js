/* The rewrite review queue (admin): j/k move, a accept, r + digit reject with a reason, Enter sends "other"; with a
 * mouse or a touch screen, each card's Accept and Reject buttons (Reject opens the reasons under that card). The
 * current card is focused and outlined; the first pending card is current on arrival, and the first j keeps it (it
 * looks selected, so it must not be skipped). Every decision's time (from the row becoming current to the server's answer) is kept in window.reviewTimings. */
(function () {
  "use strict";
  const rows = Array.from(document.querySelectorAll(".rq-row"));
  const reasons = JSON.parse(document.getElementById("rq-reason-data").textContent);
  const panel = document.getElementById("rq-reasons");
  const other = document.getElementById("rq-other");
  const errorBox = document.getElementById("rq-error");
  let current = -1;
  let moved = false;  // false until the reviewer moves or decides: the card current on arrival was chosen for them
  let rejecting = false;
  let busy = false;
  let since = performance.now();
  window.reviewTimings = [];

  function csrf() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }
  function pending(index) { return rows[index] && !rows[index].classList.contains("done"); }
  function select(index) {
    if (index < 0 || index >= rows.length) return;
    if (rows[current]) { rows[current].classList.remove("current"); rows[current].removeAttribute("aria-current"); }
    if (index !== current) closeReasons();
    current = index;
    rows[current].classList.add("current");
    rows[current].setAttribute("aria-current", "true");
    rows[current].focus({ preventScroll: true });
    rows[current].scrollIntoView({ block: "nearest" });
    since = performance.now();
  }
  function openReasons() {
    rejecting = true;
    rows[current].appendChild(panel);  // under the card it is about (on a tablet, where the finger is)
    panel.classList.add("open");
  }
  function nextPending(from) {
    for (let i = from + 1; i < rows.length; i++) if (pending(i)) return i;
    for (let i = 0; i < rows.length; i++) if (pending(i)) return i;
    return -1;
  }
  function closeReasons() { rejecting = false; panel.classList.remove("open"); other.hidden = true; other.value = ""; }
  function left() { return rows.filter((row) => !row.classList.contains("done")).length; }

  async function decide(decision, reason, reasonText) {
    const row = rows[current];
    if (!row || busy || !pending(current)) return;
    busy = true;
    errorBox.hidden = true;
    try {
      const response = await fetch(window.REVIEW_DECIDE_URL, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
        body: JSON.stringify({ response: Number(row.dataset.response), decision, reason: reason || "", reason_text: reasonText || "" }),
      });
      const body = await response.json();
      if (!response.ok) throw new Error((body.error && body.error.message) || "failed");
      window.reviewTimings.push((performance.now() - since) / 1000);
      row.classList.add("done");
      row.dataset.status = body.status;
      row.querySelector(".rq-status").textContent = body.status + (body.reason ? " (" + body.reason + ")" : "") + " by " + body.reviewer;
      document.getElementById("rq-count").textContent = left() + " pending rewrite(s).";
      closeReasons();
      const next = nextPending(current);
      if (next >= 0) select(next);
    } catch (err) {
      errorBox.textContent = "Not saved: " + err.message;
      errorBox.hidden = false;
    } finally { busy = false; }
  }

  function reasonByKey(key) { return reasons.find((r) => r.key === key); }
  function chooseReason(reason) {
    if (reason.code === "other") { other.hidden = false; other.focus(); return; }
    decide("reject", reason.code, "");
  }

  document.querySelectorAll(".rq-reason").forEach((button) => {
    button.addEventListener("click", () => chooseReason(reasonByKey(button.dataset.key)));
  });
  rows.forEach((row, index) => {
    row.addEventListener("click", (event) => {
      if (event.target.closest("button, input, details, a")) return;
      moved = true;
      if (index !== current) select(index);
    });
    row.querySelector(".rq-accept").addEventListener("click", () => {
      moved = true;
      select(index);
      decide("accept");
    });
    row.querySelector(".rq-reject").addEventListener("click", () => {
      moved = true;
      select(index);
      if (pending(index)) openReasons();
    });
  });
  other.addEventListener("keydown", (event) => {
    if (event.key === "Enter") { event.preventDefault(); if (other.value.trim()) decide("reject", "other", other.value.trim()); }
    if (event.key === "Escape") { event.preventDefault(); closeReasons(); }
  });
  document.addEventListener("keydown", (event) => {
    if (event.target === other || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT" || event.target.tagName === "TEXTAREA") return;
    if (rejecting) {
      const reason = reasonByKey(event.key);
      if (reason) { event.preventDefault(); chooseReason(reason); } else if (event.key === "Escape") closeReasons();
      return;
    }
    const step = moved ? 1 : 0;  // the first j or k keeps the card that looks selected
    if (event.key === "j") { moved = true; select(Math.min(current + step, rows.length - 1)); }
    else if (event.key === "k") { moved = true; select(Math.max(current - step, 0)); }
    else if (event.key === "a") { moved = true; decide("accept"); }
    else if (event.key === "r" && pending(current)) { moved = true; openReasons(); }
    else return;
    event.preventDefault();
  });
  const first = nextPending(-1);
  if (first >= 0) select(first);
})();
