defmodule Nx.Vulkan.NIF do
  @moduledoc false
  # The native functions (nif/). Every function returns `{:ok, value}` or
  # `{:error, kind, message}` (except `deallocate/1` and `deallocated?/1`).

  @on_load :__on_load__

  def __on_load__ do
    path = :filename.join(:code.priv_dir(:nx_vulkan), ~c"libnx_vulkan_nif")

    case :erlang.load_nif(path, 0) do
      :ok ->
        :ok

      {:error, {reason, text}} ->
        IO.warn("nx_vulkan: could not load the NIF #{path}: #{reason} #{text}")
        :ok
    end
  end

  def from_binary(_device, _type, _shape, _binary), do: nif_error()
  def to_binary(_ref, _limit), do: nif_error()
  def deallocate(_ref), do: nif_error()
  def deallocated?(_ref), do: nif_error()
  def copy(_ref, _device), do: nif_error()
  def op(_device, _op_id, _out_type, _out_shape, _refs, _options), do: nif_error()
  def op_table, do: nif_error()
  def check_op(_device, _op_id, _out_type, _out_shape, _input_specs, _options), do: nif_error()
  def program_compile(_device, _input_specs, _nodes, _outputs, _donations), do: nif_error()

  def program_compile_loop(
        _device,
        _input_specs,
        _nodes,
        _outputs,
        _state,
        _trips,
        _vectorized,
        _conditional
      ),
      do: nif_error()

  def program_run(_program, _refs), do: nif_error()
  def program_run(_program, _refs, _gate), do: nif_error()
  def program_gateable(_program), do: nif_error()
  def devices, do: nif_error()
  def default_device, do: nif_error()
  def device_info(_device), do: nif_error()
  def memory_statistics(_device), do: nif_error()
  def reset_peak_memory(_device), do: nif_error()
  def set_memory_limit(_device, _bytes), do: nif_error()
  def clear_buffer_cache(_device), do: nif_error()
  def kernel_cache_stats(_device), do: nif_error()
  def stream_stats(_device), do: nif_error()
  def kernel_profile(_device), do: nif_error()
  def save_pipeline_cache(_device), do: nif_error()
  def fail_submission(_device, _n, _lose_device), do: nif_error()
  def reopen_device(_device), do: nif_error()
  def synchronize(_device), do: nif_error()
  def validation, do: nif_error()
  def clear_validation_messages, do: nif_error()

  # The NIF replaces these stubs at load time.
  defp nif_error, do: :erlang.nif_error(:nx_vulkan_nif_not_loaded)
end
