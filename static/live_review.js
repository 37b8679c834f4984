// A live chapter's review (app/chapters/live_question.py LiveReview): the questions not yet
// answered right, each a link back to its question. LiveReview's render script carries this
// file; its scripts call AE.liveReview.draw(box, data).
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.liveReview) { return; }

  // an element by id through the page's shadow roots (each question is a pane of its own)
  function find(root, id) {
    const hit = root.getElementById ? root.getElementById(id) : null;
    if (hit) { return hit; }
    for (const el of root.querySelectorAll("*")) {
      const found = el.shadowRoot ? find(el.shadowRoot, id) : null;
      if (found) { return found; }
    }
    return null;
  }

  // LiveReview: the questions still to answer, each a link back to its question
  function draw(box, data) {
    const section = document.createElement("section");
    section.className = "ae-review";
    section.setAttribute("aria-label", "Questions to revisit");
    const title = document.createElement("h2");
    title.textContent = "Questions to revisit";
    const status = document.createElement("p");
    status.className = "ae-review-status";
    status.textContent = data.status;
    section.append(title, status);
    if (data.items.length) {
      const list = document.createElement("ul");
      for (const [id, text, tag] of data.items) {
        const link = document.createElement("a");
        link.href = "#q-" + id;
        link.textContent = text;
        link.addEventListener("click", (event) => {
          const target = find(document, "q-" + id);
          if (target === null) { return; }
          event.preventDefault();
          target.scrollIntoView({block: "center"});
          target.focus({preventScroll: true});
        });
        const item = document.createElement("li");
        item.append(link, document.createTextNode(tag));
        list.append(item);
      }
      section.append(list);
    }
    box.replaceChildren(section);
  }

  AE.liveReview = {draw};
})();
