# Average of the scores read from a record; the scores are strings.
record = "ann:7,bob:9,cy:8"
scores = {}
for item in record.split(","):
    name, score = item.split(":")
    scores[name] = score
total = 0
for name in scores:
    total += scores[name]
print(total / len(scores))
