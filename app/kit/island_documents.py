"""A static group's Bokeh document as the island ships it: the edits a document needs between
Panel's serialization and the browser, in one place.

A document arrives here as the JSON text Panel's save would put in a page
(app.kit.panel_internals.document_parts). The island gets it as a script (`doc_script`), one
call that hands islands.js the documents with two edits: each recurring stylesheet stands
once (`shared_stylesheets`; static/bokeh_fence.js's `withSheets` puts them back), and each
document keeps only the data-model definitions its models use (`used_model_defs`, undone by
nothing the browser needs). `read_doc_script` reads a script back as the browser would, for
checks in Python; `root_elements` reads a document's render items.

With static/bokeh_fence.js (its Part 3) this is the fence of Bokeh's document format: no other
module reads or writes a document's JSON by its keys (tests/test_fence.py).
"""

import json
import re


def each_stylesheet(node, visit):  # every stylesheet of every model under node (a text, or a
    # shared text's index), replaced by visit(it); a reference to a StyleSheet model stays
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "stylesheets" and isinstance(value, list):
                node[key] = [v if isinstance(v, (dict, list)) else visit(v) for v in value]
            each_stylesheet(node[key], visit)
    elif isinstance(node, list):
        for value in node:
            each_stylesheet(value, visit)


def shared_stylesheets(docs):  # docs (parsed) -> the same with every stylesheet text that
    # recurs replaced by its index (a number, which no stylesheet is), and the texts. Bokeh
    # writes a model's stylesheets out in full for every model that has them: the same few
    # sheets stood hundreds of times in a document (most of the built site's bytes of
    # documents).
    count = {}

    def tally(text):
        if not isinstance(text, str):  # the index must be ours alone
            raise TypeError(f"a model's stylesheets hold {text!r}, not a text")
        count[text] = count.get(text, 0) + 1
        return text

    each_stylesheet(docs, tally)
    texts = [text for text, n in count.items() if n > 1]
    index = {text: i for i, text in enumerate(texts)}
    each_stylesheet(docs, lambda text: index.get(text, text))
    return docs, texts


def with_sheets(docs, texts):  # what shared_stylesheets gave -> the documents whole (as
    # islands.js's receive puts them back)
    each_stylesheet(docs, lambda v: texts[v] if isinstance(v, int) else v)
    return docs


def used_model_defs(docs):  # docs (parsed) -> the same, each document's "defs" only those
    # its models use. Panel writes the definition of every data model the process has
    # imported (all the app's readouts, Panel's templates) into every document, and BokehJS
    # makes a class of each one as the document loads: on a panel's page 52 of its 61.
    def names(node, found):  # every model name an object of `node` is, or a def refers to
        if isinstance(node, dict):
            if isinstance(node.get("name"), str) and node.get("type") == "object":
                found.add(node["name"])
            if isinstance(node.get("id"), str) and set(node) == {"id"}:
                found.add(node["id"])  # a def's reference to another def (its base, a kind)
            for key, value in node.items():
                if key != "defs":
                    names(value, found)
        elif isinstance(node, list):
            for value in node:
                names(value, found)
        return found

    for doc in docs.values():
        if "defs" not in doc:
            continue
        defs = doc["defs"]
        used = names(doc, set())
        while True:  # a kept def may name another (its base class)
            more = names([d for d in defs if d["name"] in used], set(used))
            if more == used:
                break
            used = more
        doc["defs"] = [d for d in defs if d["name"] in used]
    return docs


def root_elements(render_items):  # -> [(root model id, the element id it renders into)]
    return [pair for item in render_items for pair in item["roots"].items()]


def doc_script(group):  # -> the JS file that hands a group's document to islands.js: one
    # call, its arguments JSON (a JS literal): the group, the shared stylesheets, the documents
    docs, texts = shared_stylesheets(used_model_defs(json.loads(group.docs_json)))
    name, sheets, docs = (json.dumps(value, ensure_ascii=False, separators=(",", ":"))
                          for value in (group.name, texts, docs))
    for sep in ("\u2028", "\u2029"):  # line separators end a line in older JS parsers
        sheets, docs = (text.replace(sep, "\\u" + format(ord(sep), "04x"))
                        for text in (sheets, docs))
    return f"AE.islands.receive({name}, {sheets}, {docs});\n"


def read_doc_script(script):  # -> (group name, document): what doc_script wrote, read back
    # as the browser reads it (for checks in Python: every index put back as its text)
    call = re.match(r"AE\.islands\.receive\(", script)
    if call is None or not script.rstrip().endswith(");"):
        raise ValueError(f"not a document script: {script[:80]!r}")
    decoder, at, values = json.JSONDecoder(), call.end(), []
    for _ in range(3):  # the group, the texts, the documents, ", " between
        value, at = decoder.raw_decode(script, at)
        values.append(value)
        at += len(", ")
    name, texts, docs = values
    return name, with_sheets(docs, texts)
