// Predict, then see: the chapters' questions (app/chapters/questions.py writes them into the page).
// "Check" judges the reader's choice or number and says whether it was right, with the
// computed value and why; "Show me" puts the panel that shows it in that state. Answers stay
// in this browser only (localStorage, per page and question), so a reload keeps them. A
// "Hide questions" switch at the top of the article (remembered too) or ?questions=off in
// the address hides them all. The review at a chapter's end lists the questions still
// answered wrongly or not at all, and follows every answer. Plain ES2017, no libraries.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  const PREFIX = "ae-questions:";
  const questions = new Map(); // id -> {el, data}

  function pagePath() { // one key for a page in both themes and with or without index.html
    return window.location.pathname.replace(/index(-dark)?\.html$/, "");
  }

  function load(key) { // storage can throw (file://, private modes, a full quota): then none
    try {
      const text = window.localStorage.getItem(PREFIX + pagePath() + key);
      return text === null ? null : JSON.parse(text);
    } catch (error) {
      return null;
    }
  }

  function save(key, value) {
    try {
      window.localStorage.setItem(PREFIX + pagePath() + key, JSON.stringify(value));
    } catch (error) { /* the answer still shows; it is only not remembered */ }
  }

  function within(value, correct, band) { // band: [kind, amount], from the page
    const kind = band[0];
    const amount = band[1];
    if (kind === "order") {
      if (value <= 0 || correct <= 0) { return value === correct; }
      return value / correct <= amount && correct / value <= amount;
    }
    const slack = 1e-9 * Math.max(1, Math.abs(correct)); // a typed 1.55 is 1.55, not 1.5500…1
    if (kind === "relative") { return Math.abs(value - correct) <= amount * Math.abs(correct) + slack; }
    return Math.abs(value - correct) <= amount + slack;
  }

  function readNumber(input) { // -> a finite number, or null; "1,5" and "122,532" read too
    if (Number.isFinite(input.valueAsNumber)) { return input.valueAsNumber; }
    const text = (input.value || "").trim().replace(/\s/g, "");
    if (!text) { return null; }
    const value = Number(/^\d{1,3}(,\d{3})+(\.\d+)?$/.test(text) ? text.replace(/,/g, "")
      : text.replace(",", "."));
    return Number.isFinite(value) ? value : null;
  }

  function given(q) { // -> the reader's answer as stored: an option key or a number; or null
    if (q.data.kind === "choice") {
      const picked = q.el.querySelector('input[type="radio"]:checked');
      return picked ? picked.value : null;
    }
    return readNumber(q.el.querySelector('input[type="number"]'));
  }

  function slipBand(band) { // a slip is recognised within the answer's band, 10% for a factor
    return band[0] === "order" ? ["relative", 0.1] : band;
  }

  function verdict(q, answer) { // -> {right, reply}: the key of the reply this answer gets
    if (q.data.kind === "choice") { return {right: answer === q.data.correct, reply: answer}; }
    const value = Number(answer);
    if (within(value, q.data.correct, q.data.band)) { return {right: true, reply: null}; }
    for (const slip of q.data.slips || []) {
      if (within(value, slip[1], slipBand(q.data.band))) { return {right: false, reply: slip[0]}; }
    }
    return {right: false, reply: value < q.data.correct ? "low" : "high"};
  }

  function isRight(q, answer) {
    return verdict(q, answer).right;
  }

  function feedback(q, answer) { // -> the feedback's HTML for a stored answer
    const judged = verdict(q, answer);
    const right = judged.right;
    let yours;
    if (q.data.kind === "choice") {
      yours = right ? "" : " You picked: " + (q.data.options[answer] || answer) + ".";
    } else {
      const unit = q.el.querySelector(".ae-q-unit");
      yours = " You said " + String(answer) + (unit ? " " + unit.textContent : "") + ".";
    }
    const said = judged.reply !== null && q.data.replies ? q.data.replies[judged.reply] : "";
    return '<p class="ae-q-verdict"><strong>' + (right ? "Right." : "Not quite.") +
      "</strong>" + yours + "</p>" + (said ? '<p class="ae-q-reply">' + said + "</p>" : "") +
      q.data.answer;
  }

  function settle(q, answer) { // show the verdict for an answer and mark the question with it
    q.el.querySelector(".ae-q-feedback").innerHTML = feedback(q, answer);
    q.el.classList.add("ae-q-answered");
    q.el.dataset.result = isRight(q, answer) ? "right" : "wrong";
  }

  function check(q) {
    const answer = given(q);
    const box = q.el.querySelector(".ae-q-feedback");
    if (answer === null) {
      box.innerHTML = '<p class="ae-q-verdict">' + (q.data.kind === "choice"
        ? "Pick one of the answers first." : "Type a number first.") + "</p>";
      return;
    }
    settle(q, answer);
    save("#" + q.data.id, {answer: answer});
    review();
    // one event per answer; static/embedding.js posts it to a course page that opted in
    const detail = {question: q.data.id, correct: isRight(q, answer),
                    time: new Date().toISOString()};
    detail[q.data.kind === "choice" ? "choice" : "value"] = answer;
    document.dispatchEvent(new CustomEvent("ae:answer", {detail: detail}));
  }

  function restore(q) { // the reader's earlier answer, if this browser kept it
    const kept = load("#" + q.data.id);
    if (!kept || kept.answer === undefined || kept.answer === null) { return; }
    if (q.data.kind === "choice") {
      const radio = Array.from(q.el.querySelectorAll('input[type="radio"]'))
        .find(function (r) { return r.value === kept.answer; });
      if (!radio) { return; } // the question changed since: ask again
      radio.checked = true;
    } else {
      if (!Number.isFinite(Number(kept.answer))) { return; }
      q.el.querySelector('input[type="number"]').value = String(kept.answer);
    }
    settle(q, kept.answer);
  }

  function show(button) { // "Show me": the panel, in the state that shows the answer
    const slot = button.dataset.slot;
    let params;
    try { params = JSON.parse(button.dataset.params || "{}"); } catch (error) { params = {}; }
    const query = new URLSearchParams(params).toString();
    if (AE.islands && typeof AE.islands.show === "function") {
      AE.islands.show(slot, query);
      return;
    }
    const url = new URL(window.location.href); // no islands here: a deep link does the same
    for (const key of Object.keys(params)) { url.searchParams.set(key, params[key]); }
    url.hash = "panel-" + slot;
    window.location.assign(url.href);
  }

  function review() { // each review lists exactly the questions not (yet) answered right
    for (const section of document.querySelectorAll(".ae-review")) {
      const items = Array.from(section.querySelectorAll("li[data-question]"));
      let open = 0;
      for (const li of items) {
        const q = questions.get(li.dataset.question);
        const result = q ? q.el.dataset.result : undefined;
        li.hidden = result === "right";
        if (result === "right") { continue; }
        open += 1;
        let tag = li.querySelector(".ae-review-tag");
        if (!tag) {
          tag = document.createElement("span");
          tag.className = "ae-review-tag";
          li.appendChild(tag);
        }
        tag.textContent = result === "wrong" ? " (answered wrongly)" : " (not answered yet)";
      }
      const status = section.querySelector(".ae-review-status");
      const list = section.querySelector(".ae-review-list");
      if (list) { list.hidden = open === 0; }
      if (status) {
        status.textContent = open === 0
          ? "You have answered all " + items.length + " questions of this chapter right."
          : open + " of " + items.length + " questions still to answer, or to answer again:";
      }
    }
  }

  function setHidden(hidden, toggle) {
    document.documentElement.classList.toggle("ae-questions-hidden", hidden);
    if (toggle) { toggle.setAttribute("aria-pressed", String(hidden)); }
  }

  function addToggle() { // the switch sits at the top of the article, under its title
    const main = document.querySelector("main");
    if (!main) { return null; }
    const row = document.createElement("p");
    row.className = "ae-q-toggle-row";
    const toggle = document.createElement("button");
    toggle.type = "button";
    toggle.className = "ae-q-toggle";
    toggle.textContent = "Hide questions";
    toggle.setAttribute("aria-pressed", "false");
    row.appendChild(toggle);
    const title = main.querySelector("h1");
    if (title && title.parentNode === main) { title.after(row); } else { main.prepend(row); }
    toggle.addEventListener("click", function () {
      const hidden = toggle.getAttribute("aria-pressed") !== "true";
      setHidden(hidden, toggle);
      save(":hidden", hidden);
    });
    return toggle;
  }

  function start() {
    // a panel's own page carries the chapters' questions about it as templates; ?ask=<id>
    // puts that one in the page
    const asked = new URLSearchParams(window.location.search).get("ask");
    for (const template of document.querySelectorAll("template.ae-asked")) {
      if (template.dataset.question !== asked) { continue; }
      const box = document.createElement("div");
      box.className = "ae-asked ae-asked-shown";
      box.dataset.question = asked;
      box.appendChild(template.content.cloneNode(true));
      template.replaceWith(box);
    }
    const fieldsets = document.querySelectorAll(".ae-question");
    if (fieldsets.length === 0) { return; }
    for (const el of fieldsets) {
      let data;
      try {
        data = JSON.parse(el.querySelector("script.ae-q-data").textContent);
      } catch (error) {
        continue; // a question without its data keeps its <details> answer
      }
      const q = {el: el, data: data};
      questions.set(data.id, q);
      const actions = el.querySelector(".ae-q-actions");
      actions.hidden = false;
      actions.querySelector(".ae-q-check").addEventListener("click", function () { check(q); });
      actions.querySelector(".ae-q-show").addEventListener("click", function (event) {
        show(event.currentTarget);
      });
      el.addEventListener("keydown", function (event) { // Enter in an answer checks it
        if (event.key === "Enter" && event.target instanceof HTMLInputElement) {
          event.preventDefault();
          check(q);
        }
      });
      restore(q);
    }
    const inChapter = document.querySelector(".ae-question:not(.ae-asked .ae-question)");
    const toggle = inChapter ? addToggle() : null; // a panel page: its link asked for one
    const off = new URLSearchParams(window.location.search).get("questions");
    const hidden = off !== null && off.trim().toLowerCase() === "off" ? true : load(":hidden") === true;
    setHidden(hidden, toggle);
    review();
  }

  AE.questions = {questions: questions, review: review, within: within, verdict: verdict};
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start, {once: true});
  } else {
    start();
  }
})();
