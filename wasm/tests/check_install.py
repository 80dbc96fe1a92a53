#!/usr/bin/env python3
"""The install target: `cmake --install BUILD --prefix DIR` puts holoquic-pack, vpcc-encode,
vpcc-decode and vpcc-quality into DIR/bin, and each installed binary runs (--help exits 0).

    check_install.py CMAKE BUILD_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile


def main(cmake, build):
    prefix = tempfile.mkdtemp(prefix="holoquic-check-install-")
    try:
        done = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"FAIL cmake --install: {done.stdout}{done.stderr}")
            sys.exit(1)
        failed = False
        for tool in ["holoquic-pack", "vpcc-encode", "vpcc-decode", "vpcc-quality"]:
            path = os.path.join(prefix, "bin", tool)
            if not os.access(path, os.X_OK):
                print(f"FAIL {path} is not installed")
                failed = True
                continue
            run = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=30)
            if run.returncode != 0 or "Usage:" not in run.stdout:
                print(f"FAIL {path} --help: exit {run.returncode}: {run.stdout}{run.stderr}")
                failed = True
            else:
                print(f"ok   bin/{tool} --help")
        if failed:
            sys.exit(1)
    finally:
        shutil.rmtree(prefix, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
