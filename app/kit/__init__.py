"""The panel kit: states, readouts, URL binding, chrome, theme, number formats, the
registry of panels, and the one module that touches Panel's and Bokeh's internals."""
