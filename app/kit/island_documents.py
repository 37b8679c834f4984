"""A static group's Bokeh document as the island ships it: the edits a document needs between
Panel's serialization and the browser, in one place.

A document arrives here as the JSON text Panel's save would put in a page
(app.kit.panel_internals.document_parts). The island gets it as a script (`doc_script`) that hands
islands.js a JS object literal with two edits, both undone by nothing the browser needs:
each recurring stylesheet stands once (`shared_stylesheets`), and each document keeps only the
data-model definitions its models use (`used_model_defs`). `read_doc_script` reads a script
back as the browser would, for checks in Python.
"""

import json
import re

SHARED = re.compile(r'"\\u0001(\d+)\\u0001"')


def shared_stylesheets(docs):  # docs (parsed) -> the same with every stylesheet text that
    # recurs replaced by a marker, and the texts in marker order. Bokeh writes a model's
    # stylesheets out in full for every model that has them: the same few sheets stood
    # hundreds of times in a document (most of the built site's bytes of documents).
    count = {}

    def each(node, visit):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "stylesheets" and isinstance(value, list):
                    node[key] = [visit(v) if isinstance(v, str) else v for v in value]
                each(node[key], visit)
        elif isinstance(node, list):
            for value in node:
                each(value, visit)

    def tally(text):
        count[text] = count.get(text, 0) + 1
        return text

    each(docs, tally)
    texts = [text for text, n in count.items() if n > 1]
    index = {text: i for i, text in enumerate(texts)}
    each(docs, lambda text: f"\u0001{index[text]}\u0001" if text in index else text)
    return docs, texts


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


def doc_script(group):  # -> the JS file that hands a group's document to islands.js
    # the document as a JS object literal, not JSON text: each recurring stylesheet stands
    # once, in an array S, and every place that used it names S[i]
    text = group.docs_json
    if "\\u0001" in text:  # the marker must be ours alone
        raise ValueError(f"group {group.name}: its document holds the text marker \\u0001")
    docs, texts = shared_stylesheets(used_model_defs(json.loads(text)))
    body = SHARED.sub(r"S[\1]", json.dumps(docs, ensure_ascii=False, separators=(",", ":")))
    sheets = json.dumps(texts, ensure_ascii=False, separators=(",", ":"))
    text = f"(function (S) {{ return {body}; }})({sheets})"
    for sep in ("\u2028", "\u2029"):  # line separators end a line in older JS parsers
        text = text.replace(sep, "\\u" + format(ord(sep), "04x"))
    return f"AE.islands.receive({json.dumps(group.name)}, {text});\n"


DOC_SCRIPT = re.compile(r'AE\.islands\.receive\(("[^"]*"), \(function \(S\) \{ return (.*); '
                        r'\}\)\((\[.*\])\)\);\n?', re.DOTALL)


def read_doc_script(script):  # -> (group name, document): what doc_script wrote, read back
    # as the browser reads it (for checks in Python: every S[i] put back as its text)
    name, body, sheets = DOC_SCRIPT.fullmatch(script).groups()
    texts = json.loads(sheets)
    whole = re.sub(r"S\[(\d+)\]", lambda m: json.dumps(texts[int(m.group(1))]), body)
    return json.loads(name), json.loads(whole)
