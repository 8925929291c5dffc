# The value and gradient of the Eight Schools log-density (non-centred: mu, log tau and 8
# standardised effects, 10 parameters, f64), the small-tensor work of a probabilistic
# programming library's sampler, run three ways:
#
#     mix run bench/eight_schools.exs
#
# Nx.BinaryBackend with Nx.Defn.Evaluator (what such a library runs today on the CPU), and
# Nx.Vulkan.Backend with Nx.Defn.Evaluator and with Nx.Vulkan.Compiler. Each figure is the mean
# of 500 calls after warm-up, each call's result read back (a sampler reads every gradient).
defmodule EightSchools do
  import Nx.Defn

  @y Nx.tensor([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0], type: :f64)
  @sigma Nx.tensor([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0], type: :f64)

  defn log_density(params, y, sigma) do
    mu = params[0]
    log_tau = params[1]
    eta = params[2..9]
    theta = mu + Nx.exp(log_tau) * eta
    # N(mu | 0, 5), half-Cauchy(tau | 5) with the log-Jacobian, N(eta | 0, 1), N(y | theta, sigma)
    prior_mu = -0.5 * (mu / 5) ** 2
    tau = Nx.exp(log_tau)
    prior_tau = -Nx.log(1 + (tau / 5) ** 2) + log_tau
    prior_eta = -0.5 * Nx.sum(eta * eta)
    lik = -0.5 * Nx.sum(((y - theta) / sigma) ** 2)
    prior_mu + prior_tau + prior_eta + lik
  end

  defn value_and_grad_at(params, y, sigma) do
    value_and_grad(params, &log_density(&1, y, sigma))
  end

  def data(backend), do: {Nx.backend_copy(@y, backend), Nx.backend_copy(@sigma, backend)}
end

params0 = Nx.tensor([1.0, 0.5, 0.1, -0.2, 0.3, 0.0, -0.1, 0.2, 0.4, -0.3], type: :f64)
n = 500

runs = [
  {"BinaryBackend + Evaluator", Nx.BinaryBackend, Nx.Defn.Evaluator},
  {"Vulkan + Evaluator", Nx.Vulkan.Backend, Nx.Defn.Evaluator},
  {"Vulkan + Nx.Vulkan.Compiler", Nx.Vulkan.Backend, Nx.Vulkan.Compiler}
]

IO.puts("device: #{Nx.Vulkan.device_info().name}")

:telemetry.attach(
  :eight_schools_compilation,
  [:nx_vulkan, :compilation],
  fn _, _, meta, _ ->
    IO.puts(
      "  compiled: #{meta.mode}, #{meta.nodes} nodes, #{meta.fused} fused, #{meta.launches} launches"
    )
  end,
  nil
)

for {name, backend, compiler} <- runs do
  Nx.default_backend(backend)
  {y, sigma} = EightSchools.data(backend)
  params = Nx.backend_copy(params0, backend)
  fun = Nx.Defn.jit(&EightSchools.value_and_grad_at/3, compiler: compiler)

  call = fn ->
    {v, g} = fun.(params, y, sigma)
    {Nx.to_number(v), Nx.to_binary(g)}
  end

  for _ <- 1..20, do: call.()
  {us, {v, _}} = :timer.tc(fn -> Enum.reduce(1..n, nil, fn _, _ -> call.() end) end)

  IO.puts(
    "#{name}: #{Float.round(us / n, 1)} us per value and gradient (value #{Float.round(v, 6)})"
  )
end
