// The admin's one job poller. A page with a running job marks one element with
//   data-job-poll="<the job's API URL>" data-job-status="<the status the page was rendered with>".
// Every second it reads the job row and updates every progress.job-progress and span.job-percent on the page; once
// the job is done or failed, it reloads the page (when that status differs from the rendered one), so the server
// renders the result or the one-line error. "attention" is finished too: done, with something a person must check
// (core/jobs.py job_attention_of), which the reloaded page shows in amber with a link to where it is resolved.
// While no worker has taken the job, the poll's "waiting" sentence (the queue it waits on and the command that
// serves it) is shown in every p.job-waiting. A refused request (4xx)
// stops it; a server error or a network blip is tried again.
(function () {
  "use strict";
  const marker = document.querySelector("[data-job-poll]");
  if (!marker) return;
  const url = marker.dataset.jobPoll;
  const rendered = marker.dataset.jobStatus || "";
  const finished = function (status) { return status === "done" || status === "attention" || status === "failed"; };
  if (!url || finished(rendered)) return;

  async function poll() {
    try {
      const response = await fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}});
      if (response.status >= 400 && response.status < 500) return;
      if (response.ok) {
        const job = await response.json();
        document.querySelectorAll("progress.job-progress").forEach(function (bar) { bar.value = job.percent; });
        document.querySelectorAll("span.job-percent").forEach(function (label) {
          label.textContent = job.percent + "% " + job.status;
        });
        document.querySelectorAll("p.job-waiting").forEach(function (notice) {
          notice.textContent = job.waiting ? job.waiting.text : "";
          notice.hidden = !job.waiting;
        });
        if (finished(job.status)) {
          if (job.status !== rendered) window.location.reload();
          return;
        }
      }
    } catch (error) {
      // the network dropped: the next tick tries again
    }
    window.setTimeout(poll, 1000);
  }
  poll();
})();
