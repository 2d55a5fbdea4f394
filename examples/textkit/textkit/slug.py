import re

SEPARATOR = "-"


def slugify(title):
    words = re.findall(r"[a-z]+", title.lower())
    return SEPARATOR.join(words)
