"""``h5loom`` console script: runs the h5loom command shipped inside the package."""

from __future__ import annotations

import os
import pathlib
import sys


def binary() -> pathlib.Path:
    """Path of the bundled h5loom executable."""
    return pathlib.Path(__file__).resolve().parent / "bin" / "h5loom"


def main() -> None:
    if sys.argv[1:2] == ["report"]:  # the report is written in Python (h5loom.report)
        from .report import main as report_main

        sys.exit(report_main(sys.argv[2:]))
    exe = binary()
    if not exe.exists():
        sys.exit(f"h5loom: the bundled command is missing at {exe}; reinstall the package")
    os.execv(str(exe), [str(exe), *sys.argv[1:]])


if __name__ == "__main__":
    main()
