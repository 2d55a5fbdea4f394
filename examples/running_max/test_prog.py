import prog
from prog import running_max


def test_rising():
    assert running_max([1, 3, 2, 5]) == [1, 3, 3, 5]


def test_negative():
    assert running_max([-3, -1, -2]) == [-3, -1, -1]


def test_empty():
    assert prog.running_max([]) == []
