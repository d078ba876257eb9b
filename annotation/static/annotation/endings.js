/* StyleCrowd annotator: the words of every ending (docs/annotator-api.md, "Endings"), per platform.
 *
 * Loaded before annotator.js, which shows them: what happened, the code if there is one, and what to do now on the
 * platform the participant came from (return the submission on Prolific, the HIT on MTurk; nothing for an anonymous
 * link). Nobody who did not take part is thanked for taking part.
 */
(function () {
  "use strict";

  const RETURN_TODO = {
    prolific: gettext("Please return your submission on Prolific: open Prolific, find this study under your submissions and click \u201cReturn submission\u201d (\u201cStop without completing\u201d). This keeps your record clean, and the place goes to someone else."),
    mturk: gettext("Please return the HIT on Amazon Mechanical Turk: click \u201cReturn\u201d on the HIT. Do not submit it, since there is no code to submit."),
    anonymous: gettext("There is nothing more to do: you can close this page."),
  };
  const ENDINGS = {
    screened_out: {
      heading: gettext("This study is not a match for you"),
      // Only a platform pays for the screening; an open link has no platform and promises no payment.
      message: {
        prolific: gettext("Thank you for your answers. This study is looking for participants with a different profile, so it ends here. You will be compensated for the screening as the study page describes."),
        mturk: gettext("Thank you for your answers. This study is looking for participants with a different profile, so it ends here. You will be compensated for the screening as the HIT describes."),
        anonymous: gettext("Thank you for your answers. This study is looking for participants with a different profile, so it ends here. Nothing more is asked of you; this open link does not come with a payment for the screening."),
      },
      todo: {
        prolific: gettext("Enter this screened-out code on Prolific (or use the button below), so that Prolific records that you were screened out."),
        mturk: gettext("Submit the HIT on Mechanical Turk with this code (the button below), so that it is recorded that you were screened out."),
        anonymous: gettext("Please keep this code: the researcher may ask you for it."),
      },
    },
    // The first-answer grace ran out ({grace}: how long it was): the batch was never answered, so its time limit is
    // not what ended it.
    grace_expired: {
      heading: gettext("Your time for a first answer has run out"),
      message: gettext("No first answer arrived within {grace} of the first item being shown, so the items of this batch were given to other participants. There is no completion code for a batch that was not answered."),
      todo: RETURN_TODO,
    },
    expired: {
      heading: gettext("Your time has run out"),
      message: gettext("The time limit for this batch has passed, so your unanswered items were given to other participants. There is no completion code for a batch that was not finished."),
      todo: RETURN_TODO,
    },
    declined: {
      heading: gettext("You chose not to take part"),
      message: gettext("Your choice has been recorded. None of your answers will be collected and nothing more about you is stored."),
      todo: RETURN_TODO,
    },
    full: {
      heading: gettext("This study is full"),
      message: gettext("There is no more work available for you in this study: all of its places are taken, or you have done as much of it as one person may."),
      todo: RETURN_TODO,
    },
    unavailable: {
      heading: gettext("This study is not taking participants"),
      message: gettext("This study is not taking participants at the moment."),
      todo: RETURN_TODO,
    },
    in_progress: {
      heading: gettext("This study is open in another browser"),
      message: gettext("This study is already in progress in another browser or on another device, and only that browser can continue it."),
      todo: {
        prolific: gettext("Please continue in the browser where you started. If you cannot, wait until the batch's time limit has passed and open the study link again, or return your submission on Prolific (\u201cReturn submission\u201d)."),
        mturk: gettext("Please continue in the browser where you started. If you cannot, wait until the batch's time limit has passed and open the HIT again, or return the HIT on Mechanical Turk (\u201cReturn\u201d)."),
        anonymous: gettext("Please continue in the browser where you started."),
      },
    },
    already_participated: {
      heading: gettext("You have already taken part"),
      message: gettext("You have already taken part in this study from another browser or device."),
      todo: {
        prolific: gettext("If you finished there, your completion code was shown there. Otherwise please return your submission on Prolific (\u201cReturn submission\u201d), or message the researcher on Prolific."),
        mturk: gettext("If you finished there, your code was shown there. Otherwise please return the HIT on Mechanical Turk (\u201cReturn\u201d)."),
        anonymous: gettext("There is nothing more to do: you can close this page."),
      },
    },
    screened_out_before: {
      heading: gettext("This study is not a match for you"),
      message: gettext("Based on your earlier answers you are not eligible for this study."),
      todo: {
        prolific: gettext("If you already entered your screened-out code on Prolific there is nothing more to do. Otherwise, please return your submission on Prolific (\u201cReturn submission\u201d)."),
        mturk: gettext("If you already submitted the HIT there is nothing more to do. Otherwise, please return the HIT on Mechanical Turk (\u201cReturn\u201d)."),
        anonymous: gettext("There is nothing more to do: you can close this page."),
      },
    },
  };

  const REDIRECT_LABEL = { prolific: gettext("Go to Prolific to finish"), anonymous: gettext("Continue") };
  // Under the completion code, once: where the code goes (an open link has no platform, so nothing more to say).
  const DONE_NOTE = {
    prolific: gettext("Keep this code until Prolific has approved your submission."),
    mturk: gettext("Keep this code until your HIT has been approved."),
  };
  window.StyleCrowdEndings = { endings: ENDINGS, redirectLabel: REDIRECT_LABEL, doneNote: DONE_NOTE };
})();
