#!/usr/bin/env bash
# One command from a fresh clone: bash example_project/run_demo.sh
#
# Creates .venv at the repository root if it is missing, installs scrapy_rep
# into it (editable, with Scrapy) unless it is there already, then runs the
# demo: local sites on 127.0.0.1 crawled by this project's spiders, and a
# table of what robots.txt did. Needs only python3 (with venv) and access to
# the package index for the first install; the demo itself needs no internet.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
  echo "Creating .venv ..."
  python3 -m venv .venv || {
    echo "error: python3 -m venv failed; on Debian/Ubuntu: apt-get install python3-venv" >&2
    exit 2
  }
fi
if ! .venv/bin/python -m pip show -q scrapy-rep >/dev/null 2>&1; then
  echo "Installing scrapy_rep and Scrapy into .venv ..."
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e .
fi
exec .venv/bin/python -m scrapy_rep.tools.demo "$@"
