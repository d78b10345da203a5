#!/usr/bin/env python3
"""check_code_blocks.py ROOT - every ```c block in README.md and docs/*.md
must compile (C11, -Wall -Wextra -pedantic -Werror, syntax only) against the
repository's openinfer.h. A block without its own #include gets
`#include "openinfer.h"` in front. Prints one line per failing block."""
import pathlib
import re
import subprocess
import sys

BLOCK = re.compile(r"^```c\s*\n(.*?)^```", re.S | re.M)


def blocks(path: pathlib.Path):
    text = path.read_text()
    for match in BLOCK.finditer(text):
        line = text.count("\n", 0, match.start()) + 2
        yield line, match.group(1)


def compiles(root: pathlib.Path, code: str) -> str:
    if '#include "openinfer.h"' not in code:
        code = '#include "openinfer.h"\n' + code
    proc = subprocess.run(
        ["cc", "-std=c11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-Wno-unused-function",
         "-fsyntax-only", "-I", str(root), "-x", "c", "-"],
        input=code, capture_output=True, text=True)
    return "" if proc.returncode == 0 else proc.stderr.strip()


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    files = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    checked = failed = 0
    for path in files:
        if not path.is_file():
            continue
        for line, code in blocks(path):
            checked += 1
            errors = compiles(root, code)
            if errors:
                failed += 1
                print(f"{path.relative_to(root)}:{line}: code block does not compile:\n{errors}\n")
    print(f"code blocks: {checked} checked, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
