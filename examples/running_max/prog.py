def running_max(xs):
    """Return a list whose i-th element is the largest of xs[0], ..., xs[i]."""
    out = []
    best = 0
    for x in xs:
        best = max(best, x)
        out.append(best)
    return out
