"""Drawings: small fixed figures that carry one idea each, drawn from the core as SVG.

A content file's `::: figure SLOT draw=NAME name=value ... | caption` places one: the drawing
NAME of that panel, in the panel's state that the settings give (the rest at the panel's
defaults), so its "Explore this" link opens the panel where the drawing is. Unlike a plain
figure, which is the still of the panel's own charts, a drawing shows what the charts do not:
a row's arithmetic step by step, the products behind the shapes, a table per model.
`beside=NAME` draws it once per stop of that control, one under the other, each headed by
its stop. A drawing is static SVG: no script, the same on the static and the live page.
"""
