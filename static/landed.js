// A live panel's last object (app/chapters/live_stills.py Landed): its render script carries
// this file, then calls AE.panelLanded.add(data) as the panel's views are built (a layout builds
// all its children's views before it renders them). static/live_stills.js hands the panel over.
(function () {
  "use strict";
  const AE = window.AE = window.AE || {};
  if (AE.panelLanded) { return; }
  AE.landed = AE.landed || new Set();
  AE.panelLanded = {
    add(data) {
      AE.landed.add(data.slot);
      if (AE.liveStills) { AE.liveStills.taken(); }
    },
  };
})();
