# Longest run of 'R' in a string.
s = "RRSRRRS"
best = run = 0
for ch in s:
    if ch == "R":
        run += 1
        best = max(best, run)
    else:
        run = 0
print(best)
