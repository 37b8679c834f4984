"""The Readout mechanism: a subclass's template decides its class's browser scripts."""

import importlib
import pkgutil

import pytest

import app.panels
from app.kit.readout import Readout, hole, readout_class


def all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from all_subclasses(sub)


def test_every_readout_class_draws_its_own_template():
    for info in pkgutil.iter_modules(app.panels.__path__):  # every panel's readouts, loaded
        importlib.import_module(f"app.panels.{info.name}")
    classes = [c for c in all_subclasses(Readout) if "template" in c.__dict__]
    assert len(classes) > 20
    for cls in classes:
        assert cls.__dict__["_scripts"] == Readout.scripts(cls.template), cls.__name__
    renders = {cls.__dict__["_scripts"]["render"] for cls in classes}
    assert len(renders) == len({cls.template for cls in classes})  # one template, one script


def test_readout_class_makes_a_named_class_in_the_module_it_is_given():
    cls = readout_class("ProbeReadout", f"<p>{hole('a')}</p>", module=__name__)
    assert cls.__name__ == "ProbeReadout" and cls.__module__ == __name__
    elsewhere = readout_class("ElsewhereReadout", "<p></p>", module="elsewhere")
    assert elsewhere.__module__ == "elsewhere"
    with pytest.raises(TypeError):  # no module guessed from the caller's frame
        readout_class("UnplacedReadout", "<p></p>")
    assert cls.__dict__["_scripts"] == Readout.scripts(cls.template)
    view = cls({"a": "<1>"})
    view.show({"a": "2"})
    assert view.patch == {"a": "2"} and view.filled() == '<p><span data-s="a">2</span></p>'
