"""A simulation: explicit finite differences for the 1-D heat equation, then its energy."""
import numpy as np

n, steps, alpha = 32, 6, 0.4
x = np.linspace(0.0, 1.0, n)
u = np.exp(-100.0 * (x - 0.3) ** 2) + 0.5 * np.exp(-200.0 * (x - 0.7) ** 2)
for _ in range(steps):
    lap = np.concatenate([[0.0], u[2:] - 2.0 * u[1:-1] + u[:-2], [0.0]])
    u = u + alpha * lap

RESULTS = {}
RESULTS["u_max"] = np.max(u)
RESULTS["argmax"] = np.argmax(u)
RESULTS["energy"] = np.trapezoid(u ** 2, x)
RESULTS["gradient_ends"] = np.gradient(u, x)[[0, -1]]
RESULTS["profile"] = u[::4]
for k, v in RESULTS.items():
    print(k, np.around(v, 6))
