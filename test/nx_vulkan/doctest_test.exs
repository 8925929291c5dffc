defmodule Nx.Vulkan.DoctestTest do
  # Nx's own doctests on Nx.Vulkan.Backend (set as the global default in test_helper.exs),
  # as EXLA and Torchx run them. Exclusions are only for documented rounding differences;
  # each one says why, and there are never more than EXLA's.
  use ExUnit.Case, async: true

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    :ok
  end

  # None yet: the native kernels so far are bit-exact or within what the doctests print.
  @rounding_error_doctests []

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
