"""The ``specdec-service`` command.

- ``specdec-service serve [gunicorn options...]`` runs the service under
  gunicorn with ``gunicorn.conf.py`` (bind address and workers from
  ``SPECDEC_BIND`` / ``SPECDEC_WORKERS``, see that file); extra arguments
  go to gunicorn.
- ``specdec-service openapi`` prints the OpenAPI document;
  ``--write`` rewrites the repository's ``openapi.yaml``; ``--check``
  exits 1 (with the regeneration command) when it is out of date.
  ``--path FILE`` names another file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

APP = "specdec_service:create_app()"


def gunicorn_config_path() -> Optional[Path]:
    """``gunicorn.conf.py``: ``$SPECDEC_GUNICORN_CONF``, else the one in the
    current directory, else the one at the root of the source checkout."""
    candidates = [os.environ.get("SPECDEC_GUNICORN_CONF"), "gunicorn.conf.py",
                  Path(__file__).resolve().parents[2] / "gunicorn.conf.py"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def serve(extra: Sequence[str]) -> int:
    """Replace this process by gunicorn serving :data:`APP`."""
    argv = [sys.executable, "-m", "gunicorn"]
    config = gunicorn_config_path()
    if config is not None:
        argv += ["--config", str(config)]
    argv += [*extra, APP]
    os.execv(sys.executable, argv)
    return 0  # not reached


def openapi(write: bool, check: bool, path: Optional[str]) -> int:
    """Print, write or check the OpenAPI document; the exit status."""
    from .api.openapi import REGENERATE, openapi_yaml, repository_openapi_path

    text = openapi_yaml()
    target = Path(path) if path else repository_openapi_path()
    if check:
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if current != text:
            print(f"{target} is out of date: run `{REGENERATE}`", file=sys.stderr)
            return 1
        print(f"{target} is up to date")
        return 0
    if write:
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
        return 0
    sys.stdout.write(text)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``specdec-service``."""
    parser = argparse.ArgumentParser(prog="specdec-service", description="The specdec REST service.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve_parser = commands.add_parser("serve", help="run the service under gunicorn (extra arguments go to gunicorn)")
    serve_parser.add_argument("gunicorn_args", nargs=argparse.REMAINDER)
    openapi_parser = commands.add_parser("openapi", help="print, write or check openapi.yaml")
    group = openapi_parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="rewrite openapi.yaml from the schemas")
    group.add_argument("--check", action="store_true", help="exit 1 if openapi.yaml is out of date")
    openapi_parser.add_argument("--path", help="the file to write or check (default: the repository's openapi.yaml)")
    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve(args.gunicorn_args)
    return openapi(args.write, args.check, args.path)


if __name__ == "__main__":
    sys.exit(main())
