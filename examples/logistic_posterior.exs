# The model of examples/hmc_sampler.exs and bench/hmc.exs (whose JAX twin, bench/hmc_jax.py,
# builds the same data): a Bayesian logistic regression, 8 coefficients with N(0, 1) priors,
# 200 observations, f64.
defmodule LogisticPosterior do
  import Nx.Defn

  defn log_posterior(q, x, y) do
    z = Nx.dot(x, q)
    # Bernoulli(y | sigmoid(z)) written stably, and a N(0, 1) prior on each coefficient.
    softplus = Nx.max(z, 0) + Nx.log1p(Nx.exp(-Nx.abs(z)))
    Nx.sum(y * z - softplus) - 0.5 * Nx.sum(q * q)
  end

  # x[i][j] = sin(i * 8 + j + 1); y = 1 where x . linspace(-1, 1) > 0.
  def data do
    x = Nx.iota({200, 8}, type: :f64) |> Nx.add(1) |> Nx.sin()
    q_true = Nx.linspace(-1.0, 1.0, n: 8, type: :f64)
    y = Nx.dot(x, q_true) |> Nx.greater(0) |> Nx.as_type(:f64)
    {x, y}
  end
end
