"""Every drawing and table, by (panel slot, name), and how a figure draws one.

The package's docstring (app/chapters/drawings/__init__.py) says what a drawing is."""


from app.chapters.drawings import (
    bill,
    crossover,
    kv,
    model_table,
    multiples,
    online_table,
    products,
    row,
    scratch,
    step_time,
    svg,
    tiles,
    traffic,
    truncate,
)

# (panel slot, drawing name) -> the drawing of that panel's state: settings -> (height, body,
# label). Each reads the panel's parameters by their names.
DRAWINGS = {
    ("head", "row"): lambda s: row.draw(s["length"], s["query"], s["mask"], s["divide"],
                                        s["phase"]),
    ("head", "truncate"): lambda s: truncate.draw(s["length"], s["query"], s["mask"],
                                                  s["divide"], s["phase"]),
    ("shapes", "products"): lambda s: products.draw(s["length"], s["phase"]),
    ("ladder", "multiples"): lambda s: multiples.draw(s["length"]),
    ("online", "table"): lambda s: online_table.draw(s["scores"], s["block"]),
    ("decode", "bill"): lambda s: bill.draw(s["model"], s["context"], s["gpu"]),
    ("decode", "time"): lambda s: step_time.draw(s["model"], s["context"], s["gpu"]),
    ("memory", "scratch"): lambda s: scratch.draw(s["model"], s["prompt"], s["dtype"]),
    ("cost", "crossover"): lambda s: crossover.draw(s["model"], s["kernel"]),
    ("tiles", "grid"): lambda s: tiles.grid(s["block_rows"], s["block_cols"], s["causal"],
                                            s["step"]),
    ("tiles", "step"): lambda s: tiles.step(s["block_rows"], s["block_cols"], s["causal"],
                                            s["step"]),
    ("traffic", "bars"): lambda s: traffic.bars(s["prompt"], s["causal"]),
    ("blocks", "pool"): lambda s: kv.pool(s["block_size"], s["event"]),
    ("fit", "bar"): lambda s: kv.bar(s["model"], s["gpu"], s["utilization"]),
    ("traffic", "standard"): lambda s: traffic.bars(s["prompt"], s["causal"],
                                                    standard_only=True),
}
# (panel slot, name) -> a table of that panel's state: settings -> HTML (a <table>, which a
# reader can select and copy; beside= does not apply)
TABLES = {
    ("cost", "table"): lambda s: model_table.table(s["model"]),
    ("tiles", "check"): lambda s: tiles.check(s["block_rows"], s["block_cols"], s["causal"]),
    ("traffic", "table"): lambda s: traffic.table(s["causal"]),
    ("fit", "kinds"): lambda s: kv.kinds(),
    ("fit", "recompute"): lambda s: kv.recompute(s["model"], s["context"]),
}


def names(slot):  # -> the drawings a panel has
    return sorted(name for s, name in [*DRAWINGS, *TABLES] if s == slot)


def draw(slot, name, settings, beside=()):  # beside: ((heading, settings), ...) or ()
    # -> the <svg> (or a table's <table>); KeyError for a drawing the panel does not have
    if (slot, name) in TABLES and not beside:
        return TABLES[(slot, name)](settings)
    make = DRAWINGS[(slot, name)]
    drawn = (svg.stacked([(heading, make(stop)) for heading, stop in beside]) if beside
             else make(settings))
    return svg.figure(*drawn, kind=name)
