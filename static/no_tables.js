// Loaded in bokeh-tables' place, after bokeh.min.js and before panel.min.js, on a page
// that mounts no table (app/hosting/build.py); the stand-in is the fence's.
window.AE.fence.standInForTables();
