"""``python -m scrapy_rep.tools.demo``: runs ``run.main``."""

from __future__ import annotations

import sys

from scrapy_rep.tools.demo.run import main

if __name__ == "__main__":
    sys.exit(main())
