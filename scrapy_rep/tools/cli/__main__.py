"""``python -m scrapy_rep.tools.cli``: the ``scrapy-rep`` console script."""

from __future__ import annotations

import sys

from scrapy_rep.tools.cli.console import main

if __name__ == "__main__":
    sys.exit(main())
