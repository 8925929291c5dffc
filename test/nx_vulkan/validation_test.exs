defmodule Nx.Vulkan.ValidationTest do
  # With NX_VULKAN_VALIDATION=1 the Khronos validation layer watches every Vulkan call; this
  # module (run after the async ones) asserts that nothing was reported so far. Without it the
  # test would check nothing: test_helper.exs excludes the :validation tag then.
  use Nx.Vulkan.Case, async: false

  @moduletag :validation

  test "no validation messages" do
    t = Nx.iota({8}, type: :f32, backend: Nx.Vulkan.Backend)
    _ = t |> Nx.add(1.0) |> Nx.exp() |> Nx.to_binary()
    validation = Nx.Vulkan.validation()
    assert validation.enabled, "NX_VULKAN_VALIDATION is set but the validation layer is off"
    assert validation.count == 0, Enum.join(validation.messages, "\n")
  end
end
