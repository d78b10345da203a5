#!/usr/bin/env python3
"""Validate a .oinf file and print its contents.

    python python/verify_oinf.py FILE

Exit 0 when the file follows every rule of the format (versions 1 and 2), after printing
size variables, metadata and tensor previews with statistics. Otherwise print one line
`error: FILE: <where>: <what>` to stderr and exit 1 (never a traceback).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from openinfer_oinf import OinfError, read_oinf_file, render  # noqa: E402


def main(argv: Optional[List[str]] = None) -> int:
    """CLI entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description="Validate and pretty-print a .oinf file")
    parser.add_argument("path", help="the .oinf file")
    args = parser.parse_args(argv)
    try:
        listing = render(read_oinf_file(args.path))
    except OinfError as exc:
        print(f"error: {args.path}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {args.path}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a corrupt file must never yield a traceback
        print(f"error: {args.path}: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    try:
        print(listing)
    except BrokenPipeError:          # `verify_oinf.py FILE | head` closed the pipe early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
