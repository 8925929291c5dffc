defmodule Nx.Vulkan.DoctestTest do
  # Nx's own doctests on Nx.Vulkan.Backend (set as the global default in test_helper.exs),
  # as EXLA and Torchx run them. Exclusions are only for documented rounding differences;
  # each one says why, and there are never more than EXLA's.
  use ExUnit.Case, async: true

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    :ok
  end

  # Documented rounding differences only (each is also in EXLA's exclusions):
  #   * exp/1 - the device's exp is not correctly rounded: f64 exp(2) prints
  #     7.3890560989306495 instead of 7.38905609893065 (1 ulp).
  #   * logsumexp/2 - built on exp; its f32 results differ in the last digit printed
  #     (4.313262 instead of 4.3132615, 1 ulp).
  @rounding_error_doctests [exp: 1, logsumexp: 2]

  doctest Nx, except: [:moduledoc] ++ @rounding_error_doctests
end

defmodule Nx.Vulkan.LinAlgDoctestTest do
  use ExUnit.Case, async: true

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    :ok
  end

  @rounding_error_doctests []

  doctest Nx.LinAlg, except: [:moduledoc] ++ @rounding_error_doctests
end
