from textkit.pages import Page


def test_url():
    assert Page("Hello World").url() == "/blog/hello-world/"


def test_url_of_another_section():
    assert Page("Release notes", section="news").url() == "/news/release-notes/"
