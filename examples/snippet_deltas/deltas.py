# Pulled out of a sensor dashboard: how fast did the reading change at most?
deltas = []
for i in range(len(readings)):
    deltas.append(readings[i + 1] - readings[i])
rate = max(deltas) / interval
print(f"fastest change: {rate:.2f} per second")
