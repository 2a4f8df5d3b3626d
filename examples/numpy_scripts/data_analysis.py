"""Tutorial-style data analysis: summary statistics, a z-score filter, groups, a histogram."""
import numpy as np

rs = np.arange(64, dtype=np.float64)
temps = 15.0 + 8.0 * np.sin(rs / 5.0) + 0.3 * (rs % 7) - 0.2 * (rs % 3)
station = (rs % 4).astype(np.int64)

RESULTS = {}
RESULTS["mean"] = np.mean(temps)
RESULTS["median"] = np.median(temps)
RESULTS["quartiles"] = np.percentile(temps, [25, 50, 75])
z = (temps - np.mean(temps)) / np.std(temps)
RESULTS["outliers"] = np.count_nonzero(np.abs(z) > 1.3)
RESULTS["per_station"] = np.array([np.mean(temps[station == k]) for k in range(4)])
RESULTS["counts"], RESULTS["edges"] = np.histogram(temps, bins=6)
RESULTS["corr"] = np.corrcoef(temps[:-1], temps[1:])[0, 1]
RESULTS["station_counts"] = np.bincount(station)
for k, v in RESULTS.items():
    print(k, np.around(v, 6))
