"""The example spiders; ``base.py`` holds what they share."""
