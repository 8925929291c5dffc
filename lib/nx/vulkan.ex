defmodule Nx.Vulkan do
  @moduledoc """
  Nx on any GPU with a Vulkan driver (and on any machine through Mesa's lavapipe).

  Switch the default backend with one line:

      Nx.global_default_backend(Nx.Vulkan.Backend)

  This module holds the public API for devices, memory statistics and settings.

  ## Settings

    * `config :nx_vulkan, host_fallback: :allow | :warn | :raise` - what happens when an
      op has no native kernel for its types on the device: run it on the host through
      `Nx.BinaryBackend` silently (`:allow`), with a warning once per op (`:warn`, the
      default), or raise `Nx.Vulkan.Error` (`:raise`). See `with_host_fallback/2` for a
      per-process override.
    * `config :nx_vulkan, add_backend_on_inspect: boolean` - whether inspected tensors show
      the backend and device (default: the `:nx` setting of the same name, else `true`).

  Environment variables read by the engine (once, when the first device opens; the README's
  Settings section lists them all): `NX_VULKAN_DEVICE` (default device, by index, name or UUID
  prefix),
  `NX_VULKAN_DISABLE` (capabilities to turn off: `f64,int64,f16,bf16,coopmat,subgroup`),
  `NX_VULKAN_HEAP_LIMIT`, `NX_VULKAN_VALIDATION=1` (validation layers) and
  `NX_VULKAN_TUNING` (kernel choices, for benchmarks).
  """

  alias Nx.Vulkan.{Error, Fallback, Native, NIF}

  @doc """
  All physical devices, as maps (`:index`, `:name`, `:type`, `:vendor`, `:driver_name`,
  `:api_version`, `:heaps`, `:features`, limits, ...). Features are those of the hardware,
  before any capability mask.
  """
  def devices do
    Error.unwrap!(NIF.devices())
  end

  @doc "The index of the default device (opened on first use)."
  def default_device, do: Native.default_device()

  @doc """
  The opened device at `index` (default: the default device), with its features after the
  capability mask (`NX_VULKAN_DISABLE`).
  """
  def device_info(index \\ nil) do
    index |> device_index() |> NIF.device_info() |> Error.unwrap!()
  end

  @doc """
  Device memory statistics: `%{bytes_in_use: n, peak_bytes: n, buffers: n, cached_bytes: n,
  memory_limit: n}` (`cached_bytes`: memory of dropped tensors kept for reuse, see
  `clear_cache/1`; `memory_limit`: `set_memory_limit/2`'s, 0 for none).

  Buffers are freed when their last tensor is garbage collected (or deallocated with
  `Nx.backend_deallocate/1`) and no recorded work still needs them.
  """
  def memory_statistics(index \\ nil) do
    index |> device_index() |> NIF.memory_statistics() |> Error.unwrap!()
  end

  @doc """
  Limits the tensor memory in use on a device to `bytes` (`:infinity` removes the limit): an
  allocation that would pass it, once in-flight work has released the buffers it holds, raises
  `Nx.Vulkan.Error` (out of memory) and leaves the device usable. Memory already in use stays;
  freed memory kept for reuse (`clear_cache/1`) does not count. `memory_statistics/1` reports
  the limit as `:memory_limit` (0 for none).
  """
  def set_memory_limit(bytes, index \\ nil)

  def set_memory_limit(:infinity, index), do: set_memory_limit(0, index)

  def set_memory_limit(bytes, index) when is_integer(bytes) and bytes >= 0 do
    index |> device_index() |> NIF.set_memory_limit(bytes) |> Error.unwrap!()
  end

  def set_memory_limit(other, _index) do
    raise ArgumentError,
          "expected the memory limit as a non-negative number of bytes or :infinity, got: #{inspect(other)}"
  end

  @doc "Resets the peak of `memory_statistics/1` to the memory in use now."
  def reset_peak_memory(index \\ nil) do
    index |> device_index() |> NIF.reset_peak_memory() |> Error.unwrap!()
  end

  @doc """
  Frees the device memory of dropped tensors that the device keeps for reuse (`:cached_bytes`
  of `memory_statistics/1`; its size is `NX_VULKAN_BUFFER_CACHE_BYTES`), giving it back to the
  driver, for other processes or libraries on the same GPU.
  """
  def clear_cache(index \\ nil) do
    index |> device_index() |> NIF.clear_buffer_cache() |> Error.unwrap!()
  end

  @doc """
  Kernel statistics of the device: `%{compiled: n, disk_hits: n, memory_hits: n, pipelines: n,
  pipeline_cache_hits: n, pipeline_cache_loaded_bytes: n, pipeline_cache_saves: n}`.

  Compiled kernels (SPIR-V) and the driver's pipeline cache persist in `NX_VULKAN_CACHE_DIR`
  (default `~/.cache/nx_vulkan`; `off` disables both). The pipeline cache is written in the
  background after each batch of new pipelines and when the application stops; a process
  started later creates its pipelines from it (`pipeline_cache_hits`, where the driver reports
  them).
  """
  def kernel_cache_statistics(index \\ nil) do
    index |> device_index() |> NIF.kernel_cache_stats() |> Error.unwrap!()
  end

  @doc """
  Stream statistics of the device: `%{submits: n, commands: n, barriers: n, waits: n}`, where
  `waits` counts the times the host waited for the device's results (a download whose data was
  not ready yet).
  """
  def stream_statistics(index \\ nil) do
    index |> device_index() |> NIF.stream_stats() |> Error.unwrap!()
  end

  @doc """
  GPU time per kernel of the work finished since the last call, from timestamps, as
  `[{kernel_label, dispatches, total_microseconds}]`, largest first. Each dispatch is charged
  the time since the previous one ended (its barrier and launch gap included), so the times
  add up to the device's busy time. Profiling is on when `NX_VULKAN_PROFILE=1` is set as the
  device opens (it adds two timestamps per dispatch); otherwise the list is empty. Waits for
  the work recorded until now.
  """
  def kernel_profile(index \\ nil) do
    index |> device_index() |> NIF.kernel_profile() |> Error.unwrap!()
  end

  @doc "Writes the device's pipeline cache now if it has pipelines not saved yet."
  def save_pipeline_cache(index \\ nil) do
    index |> device_index() |> NIF.save_pipeline_cache() |> Error.unwrap!()
  end

  @doc """
  Opens the device again after it was lost (an `Nx.Vulkan.Error` of kind `:device_lost`: a
  driver reset or a GPU fault). Later tensors go to the new logical device; tensors of the lost
  one are gone and raise `:device_lost` when used.
  """
  def reopen_device(index \\ nil) do
    index = device_index(index)
    result = index |> NIF.reopen_device() |> Error.unwrap!()
    # The shared constants of the lost device are gone with it.
    Nx.Vulkan.Tables.with_tables(fn ->
      :ets.match_delete(Nx.Vulkan.Tables.constants(), {{index, :_, :_, :_}, :_})
    end)

    result
  end

  @doc "Waits until all the work recorded so far on the device has finished."
  def synchronize(index \\ nil) do
    index |> device_index() |> NIF.synchronize() |> Error.unwrap!()
  end

  @doc """
  Validation-layer state (`NX_VULKAN_VALIDATION=1` turns the Khronos validation layer on):
  `%{enabled: boolean, count: n, messages: [binary]}` (the most recent messages).
  """
  def validation, do: Error.unwrap!(NIF.validation())

  @doc "Forgets the validation messages seen so far."
  def clear_validation_messages, do: NIF.clear_validation_messages()

  @doc """
  How many times each op ran on the host through `Nx.BinaryBackend`, as `%{op => count}`.
  """
  def fallback_counts, do: Fallback.counts()

  @doc "Clears `fallback_counts/0` and the once-per-op fallback warnings."
  def reset_fallback_counts, do: Fallback.reset()

  @doc "The names of the ops the engine implements natively (for some types and devices)."
  def native_ops do
    Native.native_ops() |> MapSet.to_list() |> Enum.sort()
  end

  @doc """
  Runs `fun` with the host-fallback setting `mode` (`:allow`, `:warn` or `:raise`) for the
  calling process only.
  """
  def with_host_fallback(mode, fun) when is_function(fun, 0) do
    unless mode in Fallback.modes() do
      raise ArgumentError, "host fallback mode must be one of :allow, :warn, :raise"
    end

    previous = Process.put(:nx_vulkan_host_fallback, mode)

    try do
      fun.()
    after
      if previous,
        do: Process.put(:nx_vulkan_host_fallback, previous),
        else: Process.delete(:nx_vulkan_host_fallback)
    end
  end

  defp device_index(nil), do: Native.default_device()
  defp device_index(index) when is_integer(index) and index >= 0, do: index

  defp device_index(other) do
    raise ArgumentError, "expected a device index, got: #{inspect(other)}"
  end
end
