"""A least-squares fit: a polynomial by polyfit, the same by lstsq, residuals and a check."""
import numpy as np

t = np.linspace(0.0, 2.0, 30)
y = 1.5 - 0.7 * t + 0.25 * t ** 2 + 0.01 * np.cos(17.0 * t)
coef = np.polyfit(t, y, 2)
A = np.vander(t, 3)
sol, resid, rank, sv = np.linalg.lstsq(A, y, rcond=None)

RESULTS = {}
RESULTS["coef"] = coef
RESULTS["lstsq"] = sol
RESULTS["rank"] = int(rank)
RESULTS["residual"] = resid
RESULTS["fit_err"] = np.linalg.norm(np.polyval(coef, t) - y)
RESULTS["cond"] = np.linalg.cond(A)
RESULTS["agree"] = int(np.allclose(coef, sol))
for k, v in RESULTS.items():
    print(k, np.around(v, 6))
