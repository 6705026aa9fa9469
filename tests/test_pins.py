"""What `make install` puts in the venv is pinned, the whole resolved set, not only what
pyproject.toml asks for: a new release of a dependency's dependency must not change a fresh
clone's run (constraints.txt, read by the Makefile and the Dockerfile)."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"(?P<name>[A-Za-z0-9_.-]+)==(?P<version>[A-Za-z0-9_.+-]+)")


def _name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def constraints() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        found = PIN.fullmatch(line)
        assert found, f"constraints.txt: not an exact pin: {line!r}"
        pins[_name(found["name"])] = found["version"]
    return pins


def test_every_installed_package_is_pinned_at_the_version_installed() -> None:
    pins = constraints()
    installed = {
        _name(dist.metadata["Name"]): dist.version
        for dist in metadata.distributions()
        if _name(dist.metadata["Name"]) not in {"facade", "pip", "setuptools", "wheel"}
    }
    unpinned = sorted(set(installed) - set(pins))
    assert not unpinned, f"installed but not in constraints.txt: {unpinned}"
    other = {name: (installed[name], pins[name]) for name in installed if installed[name] != pins[name]}
    assert not other, f"installed version differs from constraints.txt (installed, pinned): {other}"


def test_the_makefile_and_the_image_install_with_the_constraints() -> None:
    assert "-c constraints.txt" in (ROOT / "Makefile").read_text()
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "-c constraints.txt" in dockerfile
    assert re.search(r"^COPY [^\n]*constraints\.txt", dockerfile, re.M)
