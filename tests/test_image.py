"""Issue 16, point 6: the production image and compose stack, read rather than run (Docker
cannot run here).

- Every directory the app reads at run time is copied to where BASE_DIR expects it: the
  packages pyproject's `packages.find` includes, and the directories the settings read from
  BASE_DIR (templates, static files, translations).  The list is derived from the repository,
  and a new top-level directory fails until it is copied or named in NOT_AT_RUN_TIME.
- Every command the image and compose run exists: its program is an installed entry point and
  its arguments parse with that program's own parser (daphne's, celery's, manage.py's), naming
  an application, Celery app or management command that is really there.
- Every environment variable compose or the image sets is one the settings read, and the
  settings load with compose's environment and take its values."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import posixpath
import re
import shlex
import subprocess
import sys
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from django.conf import settings
from django.urls import resolve

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "facade:latest"
WEB = ["daphne", "-b", "0.0.0.0", "-p", "8000", "facade.asgi:application"]

# Top-level directories the running app never reads, each with why.  A new directory belongs
# either here or in the image.
NOT_AT_RUN_TIME = {
    ".ci": "the CI entry script",
    "tests": "the test suite",
    "bench": "benchmarks, run from a checkout",
    "tools": "an auditor's offline verifier of exports, run from a checkout",
}
# Variables the image or compose sets that the settings do not read, and what reads them.
NOT_FOR_THE_SETTINGS = {
    "PYTHONDONTWRITEBYTECODE": "Python",
    "PYTHONUNBUFFERED": "Python",
    "PIP_NO_CACHE_DIR": "pip, while the image is built",
    "DJANGO_SETTINGS_MODULE": "Django, through manage.py, facade/asgi.py and facade/celery.py",
}


# --- reading the files ------------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    """The Dockerfile's instructions, (INSTRUCTION, rest), continuation lines joined."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        keyword, _, rest = (pending + line).strip().partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
        pending = ""
    return instructions


def workdir() -> str:
    dirs = [rest for keyword, rest in dockerfile() if keyword == "WORKDIR"]
    assert len(dirs) == 1, dirs
    return dirs[0]


def copied() -> dict[str, str]:
    """Where each COPY puts what: image path → path in the repository."""
    where: dict[str, str] = {}
    for keyword, rest in dockerfile():
        if keyword in ("ADD", "COPY"):
            words = [word for word in shlex.split(rest) if not word.startswith("--")]
            *sources, dest = words
            dest = posixpath.normpath(posixpath.join(workdir(), dest))
            into_dir = len(sources) > 1 or words[-1].endswith("/")
            for source in sources:
                target = posixpath.join(dest, posixpath.basename(source)) if into_dir else dest
                where[target] = posixpath.normpath(source)
    return where


def dockerfile_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for keyword, rest in dockerfile():
        if keyword == "ENV":
            for pair in shlex.split(rest):
                name, _, value = pair.partition("=")
                env[name] = value
    return env


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
    return loaded


def app_services() -> dict[str, dict[str, Any]]:
    """The services that run this project's image."""
    services = {
        name: service
        for name, service in compose()["services"].items()
        if service.get("image") == IMAGE or "build" in service
    }
    assert {"web", "worker", "beat", "migrate"} <= set(services), sorted(services)
    return services


def compose_env(service: dict[str, Any]) -> dict[str, str]:
    raw = service.get("environment") or {}
    if isinstance(raw, list):
        raw = dict(item.partition("=")[::2] for item in raw)
    return {str(name): "" if value is None else str(value) for name, value in raw.items()}


def with_defaults(value: str) -> str:
    """A compose value with `${NAME:-default}` as its default (what an empty .env gives)."""
    return re.sub(r"\$\{[A-Z0-9_]+(?::?-([^}]*))?\}", lambda m: m.group(1) or "", value)


def tracked() -> list[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def runtime_dirs() -> dict[str, str]:
    """Top-level directories the app reads at run time, each with the reason, from the repository."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    dirs = {
        path.name: "a package in pyproject's packages.find"
        for path in ROOT.iterdir()
        if path.is_dir() and (path / "__init__.py").is_file() and any(fnmatch(path.name, p) for p in include)
    }
    templates: list[dict[str, Any]] = settings.TEMPLATES
    read_from_base_dir = {
        "TEMPLATES DIRS": [d for engine in templates for d in engine.get("DIRS", [])],
        "STATICFILES_DIRS": list(settings.STATICFILES_DIRS),
        "LOCALE_PATHS": list(settings.LOCALE_PATHS),
    }
    for setting, paths in read_from_base_dir.items():
        assert paths, setting
        for path in paths:
            relative = Path(path).resolve().relative_to(ROOT)  # BASE_DIR is the repository
            dirs.setdefault(relative.parts[0], setting)
    return dirs


def settings_reads() -> set[str]:
    """The environment variables facade/settings/ reads."""
    names: set[str] = set()
    for module in (ROOT / "facade" / "settings").glob("*.py"):
        text = module.read_text()
        names |= set(re.findall(r"env_(?:str|bool|int|list)\(\s*\"([A-Z][A-Z0-9_]*)\"", text))
        names |= set(re.findall(r"os\.environ(?:\.get|\.setdefault)?[\[(]\s*\"([A-Z][A-Z0-9_]*)\"", text))
    return names


def console_scripts() -> set[str]:
    return {entry.name for entry in importlib.metadata.entry_points(group="console_scripts")}


def assert_command_exists(argv: list[str]) -> None:
    """The program is installed and takes these arguments, naming things that exist."""
    program, *args = argv
    if program == "daphne":
        from daphne.cli import CommandLineInterface

        assert "daphne" in console_scripts()
        try:
            parsed = CommandLineInterface().parser.parse_args(args)
        except SystemExit:
            pytest.fail(f"daphne does not take {args}")
        module, _, attribute = parsed.application.partition(":")
        assert callable(getattr(importlib.import_module(module), attribute)), parsed.application
    elif program == "celery":
        from celery.app.control import Inspect
        from celery.bin.base import CLIContext
        from celery.bin.celery import celery as celery_cli
        from celery.bin.celery import find_app

        from facade.celery import app as facade_app

        assert "celery" in console_scripts()
        assert args[0] in ("-A", "--app"), argv
        app = find_app(args[1])
        assert app is facade_app, app
        command, *rest = args[2:]
        assert command in celery_cli.commands, command
        context = CLIContext(app=app, no_color=True, workdir=None, quiet=True)
        parsed_context = celery_cli.commands[command].make_context(command, list(rest), obj=context)
        if command == "inspect":
            assert callable(getattr(Inspect, parsed_context.params["command"], None)), rest
    elif program == "python" and args[:1] == ["manage.py"]:
        from django.core.management import get_commands, load_command_class

        assert (ROOT / "manage.py").is_file() and copied().get(f"{workdir()}/manage.py") == "manage.py"
        name, *rest = args[1:]
        commands = get_commands()
        assert name in commands, name
        load_command_class(commands[name], name).create_parser("manage.py", name).parse_args(rest)
    else:
        pytest.fail(f"this test does not know how to check {argv}: teach it")


def health_probe(argv: list[str]) -> float:
    """A `python -c` health check of the web process: it compiles, asks /healthz, and gives up
    after the returned number of seconds."""
    assert argv[:2] == ["python", "-c"], argv
    code = argv[2]
    compile(code, "<healthcheck>", "exec")
    urls = re.findall(r"https?://[^'\"]+", code)
    assert len(urls) == 1, code
    assert resolve(urlparse(urls[0]).path).func.__name__ == "healthz", urls
    assert urlparse(urls[0]).port == int(WEB[WEB.index("-p") + 1]), urls
    timeout = re.search(r"timeout=(\d+(?:\.\d+)?)", code)
    assert timeout, "the probe must not wait forever"
    return float(timeout.group(1))


def seconds(value: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * units[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", value))


# --- what the image holds -------------------------------------------------------------------


def test_every_directory_the_app_reads_at_run_time_is_copied_where_base_dir_expects_it() -> None:
    runtime = runtime_dirs()
    assert {"facade", "guard", "templates", "static", "locale"} <= set(runtime), runtime
    image = copied()
    base = workdir()
    missing = {d: why for d, why in runtime.items() if image.get(f"{base}/{d}") != d}
    assert not missing, f"the Dockerfile does not COPY these to {base}/: {missing}"
    for needed in ("pyproject.toml", "manage.py"):  # pip install -e . ; the migrate command
        assert image.get(f"{base}/{needed}") == needed, needed


def test_no_top_level_directory_is_left_out_unnoticed() -> None:
    top = {path.split("/", 1)[0] for path in tracked() if "/" in path}
    runtime = set(runtime_dirs())
    assert not runtime & set(NOT_AT_RUN_TIME), runtime & set(NOT_AT_RUN_TIME)
    unclassified = top - runtime - set(NOT_AT_RUN_TIME)
    assert not unclassified, (
        f"new top-level directories {sorted(unclassified)}: COPY them in the Dockerfile if the app "
        "reads them at run time, otherwise name them in NOT_AT_RUN_TIME with the reason"
    )
    assert set(NOT_AT_RUN_TIME) <= top, set(NOT_AT_RUN_TIME) - top  # no stale entries


def test_dockerignore_keeps_every_file_the_app_reads() -> None:
    patterns = [
        line.strip().lstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert not [p for p in patterns if p.startswith("!")], "exceptions: teach this test Docker's rules for them"

    def ignored(path: str) -> bool:
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        for pattern in patterns:
            tail = pattern[3:] if pattern.startswith("**/") else None
            for prefix in prefixes:
                if fnmatch(prefix, pattern) or (tail and fnmatch(prefix.rsplit("/", 1)[-1], tail)):
                    return True
        return False

    runtime = set(runtime_dirs())
    shipped = [path for path in tracked() if path.split("/", 1)[0] in runtime or "/" not in path]
    assert not [path for path in shipped if ignored(path)]
    # The guard's corpus and the compiled translations are among them.
    assert any(path.startswith("guard/corpus/") and path.endswith(".tsv") for path in shipped)
    assert "locale/zh_Hans/LC_MESSAGES/django.mo" in shipped


def test_package_data_lies_inside_a_copied_package() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    image = copied()
    for package, globs in pyproject["tool"]["setuptools"]["package-data"].items():
        assert image.get(f"{workdir()}/{package}") == package, package
        for pattern in globs:
            assert list((ROOT / package).glob(pattern)), f"{package}/{pattern} matches nothing"


def test_every_translation_catalogue_is_compiled_and_tracked() -> None:
    """The image has no gettext to compile them: the .mo files travel with the sources."""
    files = set(tracked())
    catalogues = [path for path in files if path.startswith("locale/") and path.endswith(".po")]
    assert catalogues
    for po in catalogues:
        assert po[:-3] + ".mo" in files, po


# --- what the image and compose run -----------------------------------------------------------


def test_the_images_command_and_every_services_command_exist() -> None:
    commands = [json.loads(rest) for keyword, rest in dockerfile() if keyword == "CMD"]
    assert commands == [WEB], commands
    assert_command_exists(commands[0])
    for name, service in app_services().items():
        assert isinstance(service.get("command"), list), name
        assert_command_exists(service["command"])
    assert app_services()["web"]["command"] == WEB


def test_health_checks_ask_for_longer_than_healthz_may_take_and_only_the_web_asks_healthz() -> None:
    bound = float(settings.FACADE_HEALTH_TIMEOUT)
    image_check = next(rest for keyword, rest in dockerfile() if keyword == "HEALTHCHECK")
    options = dict(re.findall(r"--([a-z-]+)=(\S+)", image_check))
    probe = health_probe(shlex.split(image_check.split(" CMD ", 1)[1]))
    assert bound + 1 < probe < seconds(options["timeout"]), (bound, probe, options)

    services = app_services()
    web = services["web"]["healthcheck"]
    assert web["test"][0] == "CMD"
    probe = health_probe(web["test"][1:])
    assert bound + 1 < probe < seconds(web["timeout"]), (bound, probe, web)
    for name, service in services.items():
        if name == "web":
            continue
        # Otherwise it would inherit the image's check of the web process, which it is not.
        check = service.get("healthcheck")
        assert check, f"{name} needs a health check of its own or `disable: true`"
        if check.get("disable"):
            continue
        test = check["test"]
        argv = shlex.split(test[1].replace("$$", "$")) if test[0] == "CMD-SHELL" else test[1:]
        assert_command_exists(argv)
        assert "healthz" not in " ".join(argv), name


def test_every_environment_variable_compose_and_the_image_set_is_read_by_the_settings() -> None:
    reads = settings_reads()
    assert {"DATABASE_URL", "REDIS_URL", "FACADE_HEALTH_TIMEOUT"} <= reads, "the settings reader found too little"
    set_by = {name: "Dockerfile ENV" for name in dockerfile_env()}
    for service_name, service in app_services().items():
        set_by.update({name: f"compose {service_name}" for name in compose_env(service)})
    unread = {name: where for name, where in set_by.items() if name not in reads and name not in NOT_FOR_THE_SETTINGS}
    assert not unread, f"set but never read by facade/settings/: {unread}"
    for name in ("manage.py", "facade/asgi.py", "facade/celery.py"):
        assert "DJANGO_SETTINGS_MODULE" in (ROOT / name).read_text(), name
    # The variables compose's comments tell the operator to set in .env are read too.
    header = "\n".join(
        line for line in (ROOT / "compose.yaml").read_text().splitlines() if line.lstrip().startswith("#")
    )
    named = set(re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", header)) - {"X_FORWARDED_FOR"}
    assert {"SECRET_KEY", "FACADE_LEDGER_SIGNING_KEY"} <= named, named
    assert named <= reads, named - reads


def test_the_settings_load_with_composes_environment_and_take_its_values(tmp_path: Path) -> None:
    service = app_services()["web"]
    env = {name: with_defaults(value) for name, value in compose_env(service).items()}
    image_env = dockerfile_env()
    program = """
import json, django
django.setup()
from django.conf import settings as s
db = s.DATABASES["default"]
print(json.dumps({
    "db": [db["ENGINE"], db["HOST"], db["PORT"], db["NAME"], db["USER"]],
    "pool": db["OPTIONS"].get("pool", {}).get("max_size"),
    "broker": s.CELERY_BROKER_URL,
    "layer": s.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"],
    "email": [s.EMAIL_HOST, s.EMAIL_PORT],
    "hosts": s.ALLOWED_HOSTS,
    "public": s.FACADE_PUBLIC_URL,
    "checkpoints": str(s.FACADE_LEDGER_CHECKPOINT_DIR),
    "proxies": s.FACADE_TRUSTED_PROXIES,
}))
"""
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        env={
            "PATH": os.environ["PATH"],
            **env,
            "DJANGO_SETTINGS_MODULE": image_env["DJANGO_SETTINGS_MODULE"],
            "FACADE_VAR_DIR": str(tmp_path),  # the image's /var/lib/facade, here
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    database = urlparse(env["DATABASE_URL"])
    assert loaded["db"] == [
        "django.db.backends.postgresql",
        database.hostname,
        database.port,
        database.path.lstrip("/"),
        database.username,
    ]
    assert loaded["pool"] == int(env["DB_POOL"])
    assert loaded["broker"] == env["REDIS_URL"] and loaded["layer"] == [env["REDIS_URL"]]
    assert loaded["email"] == [env["EMAIL_HOST"], int(env["EMAIL_PORT"])]
    assert loaded["hosts"] == env["ALLOWED_HOSTS"].split(",")
    assert loaded["public"] == env["FACADE_PUBLIC_URL"]
    assert loaded["checkpoints"] == env["FACADE_LEDGER_CHECKPOINT_DIR"]
    assert loaded["proxies"] == [p for p in env["FACADE_TRUSTED_PROXIES"].split(",") if p]
