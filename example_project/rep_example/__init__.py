"""scrapy_rep's example project: per-spider robots.txt configuration."""
