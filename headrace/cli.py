"""The ``headrace`` command line.

Subcommands: ``process`` (ephemeral run), ``demo``, ``explain``, ``connections``; ``stream``
(sharded streams), ``zones`` (zone-aware writes), ``serve`` and ``sp`` (the instance), ``dlq`` (DLQ replay) and
``zeitgeist`` (keyed computations) register themselves from their packages.
Exit codes: 0 ok, 1 runtime failure, 2 invalid input (pipeline, options, configuration).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Callable

from .errors import HeadraceError

#: Packages that add subcommands (each has ``cli.register(subparsers)``), with the commands each adds:
#: a command line naming one of them imports only that package (``sp process`` builds its parser
#: in about 0.1 s instead of 0.25 s; ``tests/unit/test_cli.py`` checks the names).
PLUGINS = {"headrace.streams.cli": ("stream",), "headrace.zones.cli": ("zones",),
           "headrace.instance.cli": ("serve", "sp"), "headrace.keyed.zeitgeist.cli": ("zeitgeist",),
           "headrace.connectors.cli": ("dlq",)}


def _fail(err: Exception, code: int = 2) -> int:
    if isinstance(err, HeadraceError):
        print(f"error [{err.code}]: {err}", file=sys.stderr)
    else:
        print(f"error: {err}", file=sys.stderr)
    return code


def _plugins_for(argv: list[str] | None) -> list[str]:
    """The plugin modules to load for ``argv``: the one adding its command, else all (help, typos)."""
    first = next((a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")), None)
    owner = [m for m, names in PLUGINS.items() if first in names]
    return owner or ([] if first in _CORE else list(PLUGINS))


_CORE = ("process", "explain", "demo", "store", "connections")


def build_parser(argv: list[str] | None = None, *, everything: bool = False) -> argparse.ArgumentParser:
    """The parser of ``argv``'s command (``everything``: of all commands)."""
    p = argparse.ArgumentParser(prog="headrace", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    from . import commands

    commands.register(sub)
    for mod in (list(PLUGINS) if everything else _plugins_for(argv)):
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name and mod.startswith(exc.name):
                continue
            raise
        m.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return int(func(args) or 0)
    except HeadraceError as err:
        return _fail(err, getattr(err, "exit_code", 2))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
