"""Only what pyproject.toml cannot say: every package under bot/ and workers/ is found (a new one
needs no list to be updated), and schema/ is added under the name it ships as, `kindred_schema`."""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["bot", "bot.*", "workers", "workers.*"]), "kindred_schema"])
