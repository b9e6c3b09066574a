"""requirements/test.lock (the tested versions CI installs from, README's test command)
pins every dependency pyproject.toml names, for the product and its tests, at a version
the declared range allows: a dependency added or re-ranged without re-locking fails here.
Re-lock with: uv pip compile pyproject.toml --extra test --universal --python-version 3.11
-o requirements/test.lock"""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)")


def _locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (REPO / "requirements" / "test.lock").read_text().splitlines():
        found = _PIN.match(line)
        if found:
            pins[canonicalize_name(found.group(1))] = found.group(2)
    return pins


def test_every_declared_dependency_is_locked_within_its_range():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    pins = _locked()
    problems = []
    for text in declared:
        req = Requirement(text)
        version = pins.get(canonicalize_name(req.name))
        if version is None:
            problems.append(f"{req.name}: not in the lock")
        elif not req.specifier.contains(version, prereleases=True):
            problems.append(f"{req.name}: locked {version}, declared {req.specifier}")
    assert problems == [], "re-lock (see this file's docstring): " + "; ".join(problems)


def test_the_readme_test_command_installs_from_the_lock():
    readme = (REPO / "README.md").read_text()
    command = readme.split("<!-- test-command -->", 1)[1].split("```sh", 1)[1].split("```")[0]
    assert "-c requirements/test.lock" in command
