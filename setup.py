"""The package list, which pyproject.toml cannot express: static/ sits beside app/ in the
repository, and a wheel or sdist carries it as the package data of `app.static`. An editable
install finds it in place (app/kit/resources.py looks beside app/ first)."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["attention_core*", "kernels*", "app*"]) + ["app.static"],
    package_dir={"app.static": "static"},
)
