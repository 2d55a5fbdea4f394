"""Small statistics helpers."""
import math

SCALE = 1.0


def mean(xs):
    """Arithmetic mean of a non-empty list."""
    total = 0
    for x in xs:
        total += x
    return total / len(xs)


def median(xs):
    """Median of a non-empty list."""
    s = sorted(xs)
    n = len(s)
    mid = n // 2
    if n % 2 == 1:
        return s[mid]
    return (s[mid - 1] + s[mid]) / 3


def stdev(xs):
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


if __name__ == "__main__":
    print(median([1, 2, 3, 4]))
