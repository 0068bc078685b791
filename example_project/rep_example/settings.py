"""Settings of the example project: Scrapy's defaults plus scrapy_rep's add-on.

Switching a project over to scrapy_rep takes the ``ADDONS`` line; everything
else here is what any project has. Spiders override the robots.txt token in
their own ``custom_settings``.
"""

BOT_NAME = "rep_example"
SPIDER_MODULES = ["rep_example.spiders"]
NEWSPIDER_MODULE = "rep_example.spiders"

# scrapy_rep replaces Scrapy's built-in RobotsTxtMiddleware (same position, 100).
ADDONS = {"scrapy_rep.Addon": 0}
ROBOTSTXT_OBEY = True
# Keep robots.txt records in memory: every run starts afresh, which suits a
# demo. A real project keeps the default ("sqlite", in .scrapy/), so that the
# 12-hour and 30-day rules for unreachable sites hold across runs.
REP_STORAGE = "memory"

# The product token "examplebot" is what robots.txt groups are matched against
# for spiders that set no ROBOTSTXT_USER_AGENT of their own.
USER_AGENT = "ExampleBot/1.0 (+https://example.invalid/bot)"

# Where the spiders start: "-a base=URL[,URL...]" on the command line wins.
EXAMPLE_BASE_URLS: list[str] = []

TELNETCONSOLE_ENABLED = False
DOWNLOAD_TIMEOUT = 15
FEED_EXPORT_ENCODING = "utf-8"
