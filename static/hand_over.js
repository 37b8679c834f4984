// A live chapter's link between its stills and its session (app/chapters/live_stills.py
// HandOver): its render script carries this file, then calls AE.handOver.link(data). Panel
// sends to the session the properties its scripts assign (data.stops, below); the session
// answers in data.taken, whose script calls AE.handOver.taken(). static/live_stills.js does the
// rest, whichever of the two runs first.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.handOver) { return; }
  AE.handOver = {
    data: null,
    link(data) {
      AE.handOver.data = data;
      if (AE.liveStills) { AE.liveStills.connect(); }
    },
    send(stops) {
      const data = AE.handOver.data;
      data.stops = stops;
    },
    taken() { if (AE.liveStills) { AE.liveStills.taken(); } },
  };
})();
