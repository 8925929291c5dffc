defmodule Nx.Vulkan.InspectTest do
  # Not async: it changes an application setting that the async doctests' inspect reads.
  use Nx.Vulkan.Case, async: false

  test "inspect with and without the backend" do
    t = Nx.tensor([1, 2, 3])
    assert inspect(t) =~ "[1, 2, 3]"
    Application.put_env(:nx_vulkan, :add_backend_on_inspect, true)

    try do
      assert inspect(t) =~ "Nx.Vulkan.Backend<vulkan:"
    after
      Application.delete_env(:nx_vulkan, :add_backend_on_inspect)
    end
  end
end
