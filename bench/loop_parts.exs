# The loop kernel's time for parts of bench/hmc.exs' leapfrog body, each a `while` of 32 trips
# compiled into one launch, from GPU timestamps: what a trip of each costs.
#
#     NX_VULKAN_PROFILE=1 mix run bench/loop_parts.exs
Code.require_file("../examples/logistic_posterior.exs", __DIR__)
Nx.default_backend(Nx.Vulkan.Backend)

if !System.get_env("NX_VULKAN_PROFILE"),
  do: IO.puts("NX_VULKAN_PROFILE=1 gives the kernel times; without it, only the calls'")

{x, y} = LogisticPosterior.data()
q = Nx.iota({8}, type: :f64) |> Nx.multiply(0.01)
eps = Nx.tensor(0.01, type: :f64)
z0 = Nx.dot(x, q)

defmodule Parts do
  import Nx.Defn

  defn empty_loop(q, eps) do
    {q, _, _} =
      while {q, eps, i = 0}, i < 32 do
        {q + eps, eps, i + 1}
      end

    q
  end

  defn matvec(q, x, eps) do
    {q, _, _, _} =
      while {q, x, eps, i = 0}, i < 32 do
        {q + eps * Nx.sum(Nx.dot(x, q)), x, eps, i + 1}
      end

    q
  end

  defn two_products(q, x, eps) do
    {q, _, _, _} =
      while {q, x, eps, i = 0}, i < 32 do
        {q + eps * Nx.dot(Nx.dot(x, q), x), x, eps, i + 1}
      end

    q
  end

  defn exp200(z, eps) do
    {z, _, _} =
      while {z, eps, i = 0}, i < 32 do
        {z + eps * Nx.exp(-Nx.abs(z)), eps, i + 1}
      end

    z
  end

  defn div200(z, eps) do
    {z, _, _} =
      while {z, eps, i = 0}, i < 32 do
        {z + eps / (1 + Nx.abs(z)), eps, i + 1}
      end

    z
  end

  defn log1p200(z, eps) do
    {z, _, _} =
      while {z, eps, i = 0}, i < 32 do
        {z + eps * Nx.log1p(Nx.abs(z)), eps, i + 1}
      end

    z
  end

  defn sum200(z, eps) do
    {z, _, _} =
      while {z, eps, i = 0}, i < 32 do
        {z + eps * Nx.sum(z), eps, i + 1}
      end

    z
  end

  defn grad1(q, x, y, eps) do
    {q, _, _, _, _} =
      while {q, x, y, eps, i = 0}, i < 32 do
        {q + eps * grad(q, &LogisticPosterior.log_posterior(&1, x, y)), x, y, eps, i + 1}
      end

    q
  end
end

runs = [
  {"q + eps (a trip's floor)", &Parts.empty_loop/2, [q, eps]},
  {"sum(x . q), 200x8", &Parts.matvec/3, [q, x, eps]},
  {"x.q then (x.q).x", &Parts.two_products/3, [q, x, eps]},
  {"exp(-|z|) 200", &Parts.exp200/2, [z0, eps]},
  {"eps/(1+|z|) 200", &Parts.div200/2, [z0, eps]},
  {"log1p 200", &Parts.log1p200/2, [z0, eps]},
  {"sum 200", &Parts.sum200/2, [z0, eps]},
  {"one gradient (bench/hmc.exs takes two a trip)", &Parts.grad1/4, [q, x, y, eps]}
]

first = fn
  %Nx.Tensor{} = t -> t
  t -> elem(t, 0)
end

for {name, f, args} <- runs do
  fun = Nx.Defn.jit(f, compiler: Nx.Vulkan.Compiler)
  for _ <- 1..3, do: apply(fun, args) |> first.() |> Nx.to_binary()
  Nx.Vulkan.kernel_profile()
  n = 100
  {us, _} = :timer.tc(fn -> for _ <- 1..n, do: apply(fun, args) |> first.() |> Nx.to_binary() end)
  prof = Nx.Vulkan.kernel_profile()
  loop = for {k, _c, t} <- prof, String.starts_with?(k, "loop_kernel"), do: t

  IO.puts(
    "#{String.pad_trailing(name, 48)} call #{Float.round(us / n, 1)} us, loop kernel #{Float.round(Enum.sum(loop) / n, 1)} us (#{Float.round(Enum.sum(loop) / n / 32 * 1000, 0)} ns a trip)"
  )
end
