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

#: Packages that add subcommands: each has ``cli.register(subparsers)``.
PLUGINS = ("headrace.streams.cli", "headrace.zones.cli", "headrace.instance.cli", "headrace.keyed.zeitgeist.cli",
           "headrace.connectors.cli")


def _fail(err: Exception, code: int = 2) -> int:
    if isinstance(err, HeadraceError):
        print(f"error [{err.code}]: {err}", file=sys.stderr)
    else:
        print(f"error: {err}", file=sys.stderr)
    return code


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="headrace", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    from . import commands

    commands.register(sub)
    for mod in PLUGINS:
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name and mod.startswith(exc.name):
                continue
            raise
        m.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
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
