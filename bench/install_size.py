"""Install size and time of longqa in a fresh virtual environment.

    python bench/install_size.py [--keep DIR]

Creates a new venv in a temporary folder (or DIR), runs `pip install <this checkout>` and prints
the wall time, the size of site-packages and the ten biggest distributions in it. pip's cache is
used as it is on this machine (a llama-cpp-python wheel built earlier is reused, and downloads
come from the cache): say so when quoting the time. One `pip install` is the whole install: the
default embedder's vocabulary ships inside longqa. `--extras server` installs those extras too.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def size_of(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            file = Path(root) / name
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, default=None, help="create the venv here and keep it")
    parser.add_argument("--extras", default="", help="extras to install with longqa, e.g. 'server'")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        venv = args.keep or Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        started = time.perf_counter()
        subprocess.run(pip + [f"{REPO}[{args.extras}]" if args.extras else str(REPO)], check=True)
        seconds = time.perf_counter() - started
        site = next((venv / "lib").glob("python*/site-packages"))
        sizes = sorted(((size_of(p), p.name) for p in site.iterdir() if p.is_dir()), reverse=True)
        print(f"pip install (pip cache in use): {seconds:.0f} s; load average {os.getloadavg()[0]:.1f}")
        print(f"site-packages: {size_of(site) / 1e6:.0f} MB; the whole venv: {size_of(venv) / 1e6:.0f} MB")
        for size, name in sizes[:10]:
            print(f"  {size / 1e6:7.1f} MB  {name}")
        banned = [n for _, n in sizes if n.split("-")[0].lower() in ("torch", "transformers", "triton")]
        print("torch/transformers/triton present: " + (", ".join(banned) if banned else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
