# Samples the posterior of a Bayesian logistic regression (8 coefficients, 200 observations,
# f64) with Hamiltonian Monte Carlo, written as ordinary `defn`: the gradient by `grad`, 32
# leapfrog steps in a `while`, momenta and the accept test from Nx.Random.
#
#     mix run examples/hmc_sampler.exs
#
# Each sample is one call of a compiled function (Nx.Vulkan.Compiler: the leapfrog loop has a
# fixed trip count, so the whole transition is one program and one submission). The first
# samples are drawn again on Nx.BinaryBackend with Nx.Defn.Evaluator, from the same key, to
# show that both give the same chain.
Code.require_file("logistic_posterior.exs", __DIR__)

defmodule HMCSampler do
  import Nx.Defn
  import LogisticPosterior, only: [log_posterior: 3]

  @steps 32

  defn hamiltonian(q, p, x, y), do: -log_posterior(q, x, y) + 0.5 * Nx.sum(p * p)

  # One HMC transition from q: fresh momenta, a leapfrog trajectory, Metropolis acceptance.
  defn transition(q, key, x, y, eps) do
    {p0, key} = Nx.Random.normal(key, shape: Nx.shape(q), type: :f64)
    {u, key} = Nx.Random.uniform(key, type: :f64)

    {q1, p1, _, _, _, _} =
      while {q1 = q, p1 = p0, x, y, eps, i = 0}, i < @steps do
        p1 = p1 + 0.5 * eps * grad(q1, &log_posterior(&1, x, y))
        q1 = q1 + eps * p1
        p1 = p1 + 0.5 * eps * grad(q1, &log_posterior(&1, x, y))
        {q1, p1, x, y, eps, i + 1}
      end

    accept = Nx.log(u) < hamiltonian(q, p0, x, y) - hamiltonian(q1, p1, x, y)
    {Nx.select(accept, q1, q), accept, key}
  end

  # `n` samples from q0: the samples (one row each) and how many were accepted.
  def sample(fun, q0, key, x, y, eps, n) do
    {samples, {_, _, accepted}} =
      Enum.map_reduce(1..n, {q0, key, 0}, fn _, {q, key, accepted} ->
        {q, accept, key} = fun.(q, key, x, y, eps)
        {q, {q, key, accepted + Nx.to_number(accept)}}
      end)

    {Nx.stack(samples), accepted}
  end
end

run = fn backend, compiler, n ->
  Nx.with_default_backend(backend, fn ->
    {x, y} = LogisticPosterior.data()
    q0 = Nx.broadcast(Nx.tensor(0.0, type: :f64), {8})
    eps = Nx.tensor(0.05, type: :f64)
    fun = Nx.Defn.jit(&HMCSampler.transition/5, compiler: compiler)
    HMCSampler.sample(fun, q0, Nx.Random.key(42), x, y, eps, n)
  end)
end

IO.puts("device: #{Nx.Vulkan.device_info().name}")
# Compile, then time.
run.(Nx.Vulkan.Backend, Nx.Vulkan.Compiler, 2)
n = 1000
{us, {samples, accepted}} = :timer.tc(fn -> run.(Nx.Vulkan.Backend, Nx.Vulkan.Compiler, n) end)
burned = samples[200..-1//1]

IO.puts(
  "#{n} samples in #{Float.round(us / 1.0e6, 2)} s: #{round(n / (us / 1.0e6))} samples/s, " <>
    "acceptance #{Float.round(accepted / n, 3)}"
)

IO.puts(
  "posterior mean (after 200 burn-in): #{inspect(Nx.to_flat_list(Nx.mean(burned, axes: [0])) |> Enum.map(&Float.round(&1, 3)))}"
)

check = 10
{ours, _} = run.(Nx.Vulkan.Backend, Nx.Vulkan.Compiler, check)
{reference, _} = run.(Nx.BinaryBackend, Nx.Defn.Evaluator, check)

difference =
  ours
  |> Nx.backend_transfer(Nx.BinaryBackend)
  |> Nx.subtract(reference)
  |> Nx.abs()
  |> Nx.reduce_max()

IO.puts(
  "first #{check} samples against Nx.BinaryBackend: largest difference #{Nx.to_number(difference)}"
)
