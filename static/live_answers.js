// A live chapter's answers, kept in this browser (app/chapters/live_question.py AnswerMemory):
// one localStorage key per page and question, as static/questions.js keeps a static chapter's
// (the session forgets them when it closes). AnswerMemory's render script carries this file
// and calls AE.liveAnswers.recall(data); its other script calls keepAnswers. Panel sends back
// to the session the properties a ReactiveHTML's scripts assign (`data.kept = ...`, read in
// its script text), so this file assigns only AnswerMemory's, and no other component carries
// it. ("Hide questions" needs no session: static/live_page.js.)
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.liveAnswers) { return; }
  const entries = (o) => (o instanceof Map ? [...o.entries()] : Object.entries(o || {}));
  const store = () => "ae-questions:" + window.location.pathname;

  // AnswerMemory's render: what this browser kept, sent to the session once
  function recall(data) {
    const kept = {};
    try { // storage can throw (private modes, a full quota): then nothing is kept
      for (const id of data.ids) {
        const text = window.localStorage.getItem(store() + "#" + id);
        const value = text === null ? null : JSON.parse(text);
        if (value && value.answer !== undefined && value.answer !== null) {
          kept[id] = value.answer;
        }
      }
    } catch (error) { /* nothing kept */ }
    if (Object.keys(kept).length) { data.kept = kept; }
  }

  function keepAnswers(data) {
    try {
      for (const [id, answer] of entries(data.answers)) {
        window.localStorage.setItem(store() + "#" + id, JSON.stringify({answer}));
      }
    } catch (error) { /* not kept */ }
  }

  AE.liveAnswers = {recall, keepAnswers};
})();
