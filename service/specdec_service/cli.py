"""The ``specdec-service`` command.

- ``specdec-service serve [gunicorn options...]`` runs the service under
  gunicorn with the package's settings
  (``-c python:specdec_service.gunicorn_conf``: bind address and workers
  from ``SPECDEC_BIND`` / ``SPECDEC_WORKERS``, see that module), or with
  the file ``$SPECDEC_GUNICORN_CONF`` names. Every other argument goes to
  gunicorn unchanged (``serve -w 1 --bind 127.0.0.1:9000``,
  ``serve --print-config``; a leading ``--`` is dropped), and a later
  ``-c``/``--config`` among them wins.
- ``specdec-service openapi`` prints the OpenAPI document;
  ``--write`` rewrites the repository's ``openapi.yaml``; ``--check``
  exits 1 (with the regeneration command) when it is out of date.
  The repository is the nearest directory, from the current one upwards,
  holding specdec-service's ``pyproject.toml`` and an ``openapi.yaml``;
  ``--path FILE`` names another file. Without either, exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from . import __version__

APP = "specdec_service:create_app()"
PACKAGE_CONFIG = "python:specdec_service.gunicorn_conf"
"""gunicorn's ``-c`` value for the settings in :mod:`specdec_service.gunicorn_conf`."""
PROJECT_NAME = 'name = "specdec-service"'


def gunicorn_config() -> str:
    """The ``-c`` value: ``$SPECDEC_GUNICORN_CONF`` if set, else :data:`PACKAGE_CONFIG`.

    Raises ``SystemExit`` (one line, status 2) when the variable names no file.
    """
    named = os.environ.get("SPECDEC_GUNICORN_CONF")
    if not named:
        return PACKAGE_CONFIG
    if not Path(named).is_file():
        raise SystemExit(_fail(f"SPECDEC_GUNICORN_CONF names no file: {named}"))
    return named


def _fail(message: str) -> int:
    print(f"specdec-service: {message}", file=sys.stderr)
    return 2


def gunicorn_argv(extra: Sequence[str]) -> list[str]:
    """The command line of gunicorn serving :data:`APP` with ``extra`` options."""
    extra = list(extra)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    return [sys.executable, "-m", "gunicorn", "--config", gunicorn_config(), *extra, APP]


def serve(extra: Sequence[str]) -> int:
    """Replace this process by gunicorn (see :func:`gunicorn_argv`)."""
    argv = gunicorn_argv(extra)
    os.execv(sys.executable, argv)
    return 0  # not reached


def find_repository_openapi(start: Optional[Path] = None) -> Optional[Path]:
    """``openapi.yaml`` of the nearest directory from ``start`` (default: the
    current one) upwards that also holds specdec-service's ``pyproject.toml``;
    None when there is none (e.g. outside the checkout of a regular install)."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        project, contract = directory / "pyproject.toml", directory / "openapi.yaml"
        if project.is_file() and contract.is_file():
            try:
                if PROJECT_NAME in project.read_text(encoding="utf-8"):
                    return contract
            except (OSError, UnicodeDecodeError):
                continue
    return None


def openapi(write: bool, check: bool, path: Optional[str]) -> int:
    """Print, write or check the OpenAPI document; the exit status."""
    from .api import contract
    from .api.openapi import REGENERATE

    text = contract()
    if not (check or write):
        sys.stdout.write(text)
        return 0
    target = Path(path) if path else find_repository_openapi()
    if target is None:
        return _fail("no openapi.yaml found: run this inside the specdec repository "
                     "(a directory holding its pyproject.toml and openapi.yaml) or give --path FILE")
    try:
        if check:
            current = target.read_text(encoding="utf-8") if target.is_file() else None
            if current != text:
                print(f"{target} is out of date: run `{REGENERATE}`", file=sys.stderr)
                return 1
            print(f"{target} is up to date")
            return 0
        target.write_text(text, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return _fail(f"cannot {'read' if check else 'write'} {target}: {error}")
    print(f"wrote {target}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``specdec-service``."""
    parser = argparse.ArgumentParser(prog="specdec-service", description="The specdec REST service.")
    parser.add_argument("--version", action="version", version=f"specdec-service {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", allow_abbrev=False, add_help=False,
                        help="run the service under gunicorn (every further argument goes to gunicorn, "
                             "e.g. -w 1, --bind HOST:PORT, --print-config, --help)")
    openapi_parser = commands.add_parser("openapi", help="print, write or check openapi.yaml")
    group = openapi_parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="rewrite openapi.yaml from the schemas")
    group.add_argument("--check", action="store_true", help="exit 1 if openapi.yaml is out of date")
    openapi_parser.add_argument("--path", help="the file to write or check (default: the repository's openapi.yaml, "
                                               "found from the current directory upwards)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:  # gunicorn parses the rest: argparse would reject or reorder its options
        return serve(argv[1:])
    args = parser.parse_args(argv)
    if args.command == "serve":  # only reached with global options before "serve"
        return serve([])
    return openapi(args.write, args.check, args.path)


if __name__ == "__main__":
    sys.exit(main())
