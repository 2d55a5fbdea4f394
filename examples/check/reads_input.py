n = int(input())
values = list(map(int, input().split()))
if len(values) != n:
    raise ValueError("expected %d values, got %d" % (n, len(values)))
print(sum(values) // n)
