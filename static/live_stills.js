// A live chapter's stills, handed over to its session (app/chapters/live_stills.py). Each
// panel's box is an island showing the static chapter's still, its native controls wired by
// still_controls.js from the first paint; the session's root draws unseen under it. The stops
// a reader sets go to the session as they change (AE.handOver: static/hand_over.js, which the
// page's HandOver component runs as it renders), which sets them on its panel and answers in `taken` with the version
// each built panel holds. An island whose panel holds its still's latest stops is handed over
// once every Bokeh document has drawn them: the still goes (its controls with it, never two
// of one control for a screen reader) and the live panel shows in its place in the same frame;
// `ae:mounted` then moves the focus, if it was on a native control, to the live control of
// that name (still_controls.js). A page whose session never attaches keeps its stills.
// Runs after page_url.js, stills.js and still_controls.js (the build's live-stills.js).
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.liveStills) { return; }
  const get = (o, k) => (o instanceof Map ? o.get(k) : (o || {})[k]);
  const sent = new Map(); // slot -> the version of its stops last sent
  let queued = false;
  let checking = false;
  let handedOver = 0;

  function standing() { // the islands whose still still stands
    return [...document.querySelectorAll(".ae-live-panel > .ae-island:not(.ae-mounted)")];
  }
  function panelOf(island) {
    return AE.stillControls ? AE.stillControls.panels.find((p) => p.island === island) : null;
  }
  function versionOf(island) { const p = panelOf(island); return p ? p.version : 0; }

  function send() { // every standing still's stops, whenever one changed, in one message
    queued = false;
    const link = AE.handOver;
    if (!link || !link.data) { return; }
    const stops = {};
    let changed = false;
    for (const island of standing()) {
      const p = panelOf(island);
      if (!p || p.version === 0) { continue; } // as the page opened: the session has those
      const own = {}; // a follower's leader controls are the leader's to send
      p.data.controls.forEach((c, i) => { if (!c.leader) { own[c.name] = p.at[i]; } });
      const slot = island.dataset.slot;
      stops[slot] = {version: p.version, stops: own};
      changed = changed || sent.get(slot) !== p.version;
      sent.set(slot, p.version);
    }
    if (changed) { link.send(stops); }
  }

  // a change is sent in a task after the tap's: the tap's frame paints first
  function queue() {
    if (!queued) {
      queued = true;
      setTimeout(send, 0);
    }
  }

  function ready() { // -> the standing islands whose session panel holds their still's stops
    const link = AE.handOver;
    if (!link || !link.data) { return []; }
    return standing().filter((island) => {
      const slot = island.dataset.slot;
      const held = get(link.data.taken, slot);
      return AE.landed !== undefined && AE.landed.has(slot) && typeof held === "number"
        && held >= versionOf(island);
    });
  }

  function handOver(islands) {
    if (islands.length === 0) { return; }
    if (AE.url) { AE.url.flush(); } // a still's address first: the session's writes follow it
    for (const island of islands) {
      island.classList.add("ae-mounted");
      const still = island.querySelector(".ae-island-still");
      if (still) { still.remove(); }
    }
    handedOver += islands.length;
    document.documentElement.dataset.aeHandedOver = String(handedOver); // tests
    document.dispatchEvent(new CustomEvent("ae:mounted",
      {detail: {slots: islands.map((i) => i.dataset.slot)}}));
  }

  // the session answered, or a panel's views were built (its Landed rendered): once Bokeh
  // has drawn what came with it (its documents idle, then two frames: a figure paints in the
  // frame after its data changes), hand over what is ready (checked then: a tap meanwhile sent
  // newer stops, which wait for theirs)
  const frame = () => new Promise((resolve) => { requestAnimationFrame(resolve); });
  function taken() {
    if (checking) { return; }
    checking = true;
    (function check() {
      if (!(AE.fence && AE.fence.documentsIdle())) {
        setTimeout(check, 16);
        return;
      }
      frame().then(frame).then(() => {
        checking = false;
        handOver(ready());
      });
    })();
  }

  function connect() { // the session's HandOver has rendered (or had, before this file ran)
    sent.clear(); // a new session (a reconnect) has none of them
    send();
    taken();
  }

  document.addEventListener("ae:still-change", queue);
  AE.liveStills = {connect, taken, standing};
  if (AE.handOver && AE.handOver.data) { connect(); }
})();
