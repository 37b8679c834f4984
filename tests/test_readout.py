"""The Readout mechanism: a subclass's template decides its class's browser scripts."""

import importlib
import pkgutil

import app.panels
from app.readout import Readout


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
