"""Image filtering with convolve: a separable Gaussian blur, then a gradient edge map."""
import numpy as np

yy, xx = np.indices((8, 8)).astype(np.float64)
image = ((xx - 4) ** 2 + (yy - 4) ** 2 < 8).astype(np.float64) + 0.1 * np.sin(xx * yy)
g = np.exp(-0.5 * (np.arange(-2, 3) / 1.0) ** 2)
g = g / np.sum(g)
padded = np.pad(image, 2, mode="edge")
rows = np.vstack([np.convolve(r, g, mode="valid") for r in padded])
blurred = np.column_stack([np.convolve(c, g, mode="valid") for c in rows.T])
dy, dx = np.gradient(blurred)
edges = np.hypot(dx, dy)

RESULTS = {}
RESULTS["blurred_sum"] = np.sum(blurred)
RESULTS["edge_max"] = np.max(edges)
RESULTS["edge_pixels"] = np.count_nonzero(edges > 0.2)
RESULTS["row"] = blurred[4, ::2]
for k, v in RESULTS.items():
    print(k, np.around(v, 6))
