// A study's overview page (annotation/admin/overview.py): its progress, money, warnings and arrivals are read again
// every few seconds while the page is shown, from the page itself (the same server-rendered, escaped HTML), so the
// figures stay live as the study's progress table once did. Nothing else on the page changes.
(function () {
  "use strict";
  const root = document.getElementById("study-overview");
  if (!root) return;
  const every = Number(root.dataset.refreshSeconds || "15") * 1000;
  const parts = ["overview-progress", "overview-money", "overview-arrivals", "overview-warnings-block"];

  async function refresh() {
    if (document.hidden) return;
    let response;
    try {
      response = await fetch(window.location.href, {headers: {"Accept": "text/html"}, credentials: "same-origin"});
    } catch (error) {
      return; // the server is away for a moment: the figures stay as they are
    }
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    parts.forEach(function (id) {
      const now = document.getElementById(id);
      const next = fresh.getElementById(id);
      if (now && next) now.replaceWith(document.importNode(next, true));
    });
    root.dataset.refreshed = String(Number(root.dataset.refreshed || "0") + 1);
  }
  setInterval(refresh, every);
})();
