# The MLP step's products (bench/mlp_step.exs at batch 256), each compiled alone, bare and with
# the prologue or epilogue the step fuses into it, so that what a fused activation, bias, mask
# or update costs a product shows beside the product itself:
#
#     NX_VULKAN_PROFILE=1 mix run bench/mlp_products.exs     # GPU time per kernel, from timestamps
#     VARIANTS=ab,ab_epi mix run bench/mlp_products.exs
#
# (NX_PATH etc. as for the Elixir suite.) Each line: the variant, its launches, the wall time
# per call of 400 calls then one wait, and with NX_VULKAN_PROFILE=1 each kernel's GPU time a
# call. Names: ab / abt / atb are A B, A B^T and A^T B of 256x1024 by 1024x1024 (atb: K = 256,
# the weight gradient); mv / mvt / k10 are the 10-column products (256x1024x10, its A^T B
# 1024x256x10, and 256x10x1024); _pro reads relu(A), _epi adds a bias, _mask multiplies by
# z > 0, _upd is an SGD update w - 0.01 * g.
Nx.global_default_backend(Nx.Vulkan.Backend)
Application.put_env(:nx_vulkan, :host_fallback, :raise)

defmodule MLPProducts do
  import Nx.Defn

  defn ab({h, w, _z, _b, _w3, _b3, _d}), do: Nx.dot(h, w)
  defn ab_pro({_h, w, z, _b, _w3, _b3, _d}), do: Nx.dot(Nx.max(z, 0), w)
  defn ab_epi({h, w, _z, b, _w3, _b3, _d}), do: Nx.dot(h, w) + b
  defn ab_pro_epi({_h, w, z, b, _w3, _b3, _d}), do: Nx.dot(Nx.max(z, 0), w) + b
  defn abt({h, w, _z, _b, _w3, _b3, _d}), do: Nx.dot(h, [1], w, [1])
  defn abt_mask({h, w, z, _b, _w3, _b3, _d}), do: Nx.dot(h, [1], w, [1]) * (z > 0)
  defn atb({h, _w, z, _b, _w3, _b3, _d}), do: Nx.dot(h, [0], z, [0])
  defn atb_pro_upd({h, w, z, _b, _w3, _b3, _d}), do: w - 0.01 * Nx.dot(Nx.max(h, 0), [0], z, [0])
  defn mv({h, _w, _z, _b, w3, _b3, _d}), do: Nx.dot(h, w3)
  defn mv_pro_epi({_h, _w, z, _b, w3, b3, _d}), do: Nx.dot(Nx.max(z, 0), w3) + b3
  defn mvt({h, _w, _z, _b, _w3, _b3, d}), do: Nx.dot(h, [0], d, [0])
  defn mvt_pro_upd({h, _w, _z, _b, w3, _b3, d}), do: w3 - 0.01 * Nx.dot(Nx.max(h, 0), [0], d, [0])
  defn k10({_h, _w, _z, _b, w3, _b3, d}), do: Nx.dot(d, [1], w3, [1])
  defn k10_mask({_h, _w, z, _b, w3, _b3, d}), do: Nx.dot(d, [1], w3, [1]) * (z > 0)
end

:telemetry.attach(
  :mlp_products,
  [:nx_vulkan, :compilation],
  fn _, _, meta, _ -> Process.put(:launches, meta.launches) end,
  nil
)

key = Nx.Random.key(1)
{h, key} = Nx.Random.normal(key, 0.0, 1.0, shape: {256, 1024}, type: :f32)
{z, key} = Nx.Random.normal(key, 0.0, 1.0, shape: {256, 1024}, type: :f32)
{w, key} = Nx.Random.normal(key, 0.0, 0.05, shape: {1024, 1024}, type: :f32)
{b, key} = Nx.Random.normal(key, 0.0, 0.05, shape: {1024}, type: :f32)
{w3, key} = Nx.Random.normal(key, 0.0, 0.05, shape: {1024, 10}, type: :f32)
{b3, key} = Nx.Random.normal(key, 0.0, 0.05, shape: {10}, type: :f32)
{d, _} = Nx.Random.normal(key, 0.0, 0.05, shape: {256, 10}, type: :f32)
args = {h, w, z, b, w3, b3, d}

variants =
  System.get_env(
    "VARIANTS",
    "ab,ab_pro,ab_epi,ab_pro_epi,abt,abt_mask,atb,atb_pro_upd,mv,mv_pro_epi,mvt,mvt_pro_upd,k10,k10_mask"
  )
  |> String.split(",", trim: true)

IO.puts("device: #{Nx.Vulkan.device_info().name}")

for v <- variants do
  product =
    Nx.Defn.jit(Function.capture(MLPProducts, String.to_atom(v), 1), compiler: Nx.Vulkan.Compiler)

  for _ <- 1..5, do: product.(args)
  Nx.Vulkan.synchronize()
  Nx.Vulkan.kernel_profile()
  n = 400

  {t_us, _} =
    :timer.tc(fn ->
      for _ <- 1..n, do: product.(args)
      Nx.Vulkan.synchronize()
    end)

  gpu =
    case Nx.Vulkan.kernel_profile() do
      [] ->
        ""

      kernels ->
        ", GPU " <> Enum.map_join(kernels, " + ", &"#{Float.round(elem(&1, 2) / n, 1)}") <> " us"
    end

  IO.puts("#{v}: #{Process.get(:launches)} launches, #{Float.round(t_us / n, 1)} us a call#{gpu}")
end
