n = 12
divisors = [d for d in range(1, n + 1) if n % d == 0]
print(gcd(n, 18), floor(sqrt(n)))
counts = Counter(str(d)[0] for d in divisors)
print(counts.most_common(1)[0][0] + 1)
