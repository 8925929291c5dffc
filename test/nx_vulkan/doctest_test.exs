defmodule Nx.Vulkan.DoctestTest do
  # Nx's own doctests on Nx.Vulkan.Backend (set as the global default in test_helper.exs),
  # as EXLA and Torchx run them. Exclusions are only for documented rounding differences;
  # each one says why, and there are never more than EXLA's.
  use Nx.Vulkan.Case, async: true

  # Documented rounding differences only: Nx.Vulkan.Test.Doctests says why for each.
  @rounding_error_doctests Nx.Vulkan.Test.Doctests.nx_rounding_exclusions()

  doctest Nx, except: [:moduledoc] ++ @rounding_error_doctests
end

defmodule Nx.Vulkan.LinAlgDoctestTest do
  use Nx.Vulkan.Case, async: true

  # Documented rounding differences only: Nx.Vulkan.Test.Doctests says why for each.
  @rounding_error_doctests Nx.Vulkan.Test.Doctests.linalg_rounding_exclusions()

  doctest Nx.LinAlg, except: [:moduledoc] ++ @rounding_error_doctests
end
