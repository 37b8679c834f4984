"""The arithmetic of scaled dot-product attention, in numpy only.

Nothing here imports panel, bokeh or torch, so it runs wherever numpy runs.
Modules: head (one head, fixed-order reductions), worked_example (the cat sat on the
mat), sqrt_dk (why the divisor), costs (FLOPs and bytes of a real model), online_softmax
(blocks, running max and sum, tiled attention), numerics (float16 overflow), dot_product
(agreement), claims (every number the documents quote, recomputed).
"""
