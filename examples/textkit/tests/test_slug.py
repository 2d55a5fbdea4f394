from textkit.slug import slugify


def test_words_are_joined():
    assert slugify("Hello, World!") == "hello-world"


def test_case_is_lowered():
    assert slugify("README") == "readme"


def test_numbers_are_kept():
    assert slugify("Top 10 Tips") == "top-10-tips"
