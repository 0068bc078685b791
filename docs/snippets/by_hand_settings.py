# settings.py: what the add-on does, written by hand
DOWNLOADER_MIDDLEWARES = {
    "scrapy_rep.RobotsTxtMiddleware": 100,
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
}
EXTENSIONS = {  # only needed for REP_CRAWL_DELAY / REP_FOLLOW_SITEMAPS
    "scrapy_rep.CrawlDelay": 0,
    "scrapy_rep.FollowSitemaps": 0,
}
ROBOTSTXT_OBEY = True
