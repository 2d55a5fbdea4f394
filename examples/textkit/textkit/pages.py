from .slug import slugify


class Page:
    def __init__(self, title, section="blog"):
        self.title = title
        self.section = section

    def url(self):
        return "/" + self.section + "/" + slugify(self.title) + "/"
