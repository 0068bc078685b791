# settings.py: scrapy_rep set up by hand, exactly what ADDONS = {"scrapy_rep.Addon": 0}
# does (tests/crawler/test_by_hand_setup.py keeps the two the same).

ROBOTSTXT_OBEY = True

DOWNLOADER_MIDDLEWARES = {
    # where Scrapy's own sits, before UserAgentMiddleware (500)
    "scrapy_rep.RobotsTxtMiddleware": 100,
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
}

SPIDER_MIDDLEWARES = {
    # drops known-forbidden requests before the scheduler, fetches an
    # unknown origin's robots.txt as soon as its first request is yielded
    "scrapy_rep.RobotsTxtSpiderMiddleware": 100,
    # with REP_PAGE_DIRECTIVES = True the add-on also adds:
    # "scrapy_rep.PageDirectivesMiddleware": 950,
}

EXTENSIONS = {
    # both stay off unless REP_CRAWL_DELAY = "obey" / REP_FOLLOW_SITEMAPS = True
    "scrapy_rep.CrawlDelay": 0,
    "scrapy_rep.FollowSitemaps": 0,
}
