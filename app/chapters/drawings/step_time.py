"""How long one decode step takes: the time to read its bytes against the time to do its
arithmetic, at the GPU's peaks. The step can finish no sooner than the longer of the two, so
its least time is max(bytes ÷ bandwidth, operations ÷ peak), and one user's tokens per second
at most the inverse. For one user of a 8-billion-parameter model the reading is hundreds of
times longer: the bars are drawn on one linear scale of time, so the arithmetic's is a sliver.
Every number is attention_core.costs' (the decode panel's time line).
"""

from app.chapters.drawings import svg
from app.kit import fmt
from app.panels.decode_bill import BYTES_PER_VALUE
from app.panels.model_picker import shape_of
from attention_core import costs

BAR_W = 312  # the longer time's bar; the other to the same scale
READ, MATH = "#0072B2", "#D55E00"  # Okabe-Ito: bytes blue, operations orange (as the bill)


def times(model, context, gpu):  # -> {figure: value} of one user's step, from the core
    m, g = shape_of(model), costs.GPUS[gpu]
    step_bytes = float(costs.decode_step_bytes(m, context, 1, BYTES_PER_VALUE))
    step_flops = float(costs.decode_step_flops(m, context))
    seconds = float(costs.decode_step_seconds(m, g, context, 1, BYTES_PER_VALUE))
    return {"gpu": g, "bytes": step_bytes, "flops": step_flops,
            "read_s": step_bytes / g.bandwidth, "math_s": step_flops / g.peak_flops,
            "step_s": seconds}


def ms(seconds):  # -> "4.64 ms"; "0.0174 ms"
    return f"{fmt.significant(seconds * 1e3, 3)} ms"


def draw(model, context, gpu):  # -> (height, body, label)
    t = times(model, context, gpu)
    g, longer = t["gpu"], max(t["read_s"], t["math_s"])
    out = [svg.text(4, 8, f"One user's step at {context:,} tokens, {g.name}", bold=True)]
    y = 30
    for name, what, colour, key in (
            ("read", (f"read {fmt.significant(t['bytes'] / 1e9, 3)} GB at "
                      f"{fmt.significant(g.bandwidth / 1e12, 3)} TB/s"), READ, "read_s"),
            ("math", (f"{fmt.scale_words(t['flops'])} FLOPs at "
                      f"{fmt.thousands(g.peak_flops / 1e12)} TFLOP/s"), MATH, "math_s")):
        out.append(svg.text(4, y, what, muted=True))
        out.append(svg.text(316, y, ms(t[key]), anchor="end", bold=True,
                            data={"step": name, "value": repr(t[key])}))
        out.append(svg.box(4, y + 6, max(1.0, BAR_W * t[key] / longer), 12, colour=colour,
                           opacity=0.6, outline=False, data={"bar": name}))
        y += 40
    out.append(svg.line(0, y - 10, svg.W, y - 10, muted=True))
    out.append(svg.text(4, y + 2, "the step: at least the longer,", muted=True))
    out.append(svg.text(316, y + 2, ms(t["step_s"]), anchor="end", bold=True,
                        data={"step": "step", "value": repr(t["step_s"])}))
    out.append(svg.text(4, y + 20, "so one user gets at most", muted=True))
    out.append(svg.text(316, y + 20, f"{fmt.thousands(1 / t['step_s'])} tokens/s",
                        anchor="end", bold=True, data={"step": "tokens", "value":
                                                       repr(1 / t["step_s"])}))
    label = (f"One decode step for one user at {context:,} tokens on the {g.name}: reading "
             f"takes {ms(t['read_s'])}, the arithmetic {ms(t['math_s'])}; the step takes at "
             f"least {ms(t['step_s'])}, at most {fmt.thousands(1 / t['step_s'])} tokens/s")
    return y + 32, "".join(out), label
