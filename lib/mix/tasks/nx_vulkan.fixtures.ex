defmodule Mix.Tasks.NxVulkan.Fixtures do
  @shortdoc "Generates the engine's conformance fixtures from Nx.BinaryBackend"

  @moduledoc """
  Generates `test/fixtures/*.json`: cases recorded from `Nx.BinaryBackend` that the C++
  conformance test (`test/engine/conformance_test.cpp`) replays through the engine.

      mix nx_vulkan.fixtures              # writes test/fixtures/*.json
      mix nx_vulkan.fixtures --out DIR    # somewhere else
      mix nx_vulkan.fixtures --only reduce,shape

  Generation is deterministic (fixed seeds): regenerating with the same Nx version gives the
  same files.

  ## How cases are captured

  Every case runs a high-level Nx function (`Nx.add/2`, `Nx.sum/2`, ...) on tensors of
  `NxVulkan.Fixtures.Recorder`, a backend that delegates each callback to `Nx.BinaryBackend`
  and records the outermost call: the callback, the output spec Nx chose (type and shape,
  promotion already done), the inputs exactly as the backend received them (un-broadcast,
  un-cast), the options and the result. Cases whose computation raises inside
  Nx.BinaryBackend (it raises on e.g. `1.0 / 0.0` or `sqrt(-1.0)`) are either repaired by
  replacing the offending elements or dropped: fixtures only hold what Nx defines.

  ## File format

      {"nx_version": "0.13.1",
       "cases": [
         {"op": "add",
          "out": {"type": "f32", "shape": [2, 3]},
          "inputs": [{"type": "s32", "shape": [3], "data": "<hex>"}, ...],
          "options": {...},
          "expected": {"type": "f32", "shape": [2, 3], "data": "<hex>"},
          "tolerance_ulp": 0}]}

  `data` is the lowercase hex of the tensor's row-major native (little-endian) bytes; complex
  numbers are (re, im) pairs. Types use Nx's spelling: u8 u16 u32 u64 s8 s16 s32 s64 f16
  bf16 f32 f64 c64 c128.

  ## Options convention (shared with the NIF and the engine)

  Elixir term -> JSON: keyword list -> object (atom keys as strings); any other list ->
  array (`[]` -> `[]`); tuple -> array; `nil` -> null; `true`/`false` -> booleans; other
  atoms -> strings; numbers -> numbers. Cases with a tensor inside the options are skipped.

  Callback arguments that are not tensors become options under these names (tensors become
  `inputs`, in argument order):

    * unary ops, binary ops, `select`, `clip`, `as_type`, `bitcast`, `reshape`: no options
    * `squeeze(out, t, axes)`, `transpose(out, t, axes)`, `reverse(out, t, axes)`: `{"axes"}`
    * `broadcast(out, t, shape, axes)`: `{"shape", "axes"}`
    * `pad(out, t, pad_value, config)`: inputs `[t, pad_value]`, `{"padding_config":
      [[lo, hi, interior], ...]}`
    * `dot(out, l, lc, lb, r, rc, rb)`: inputs `[l, r]`, `{"left_contract", "left_batch",
      "right_contract", "right_batch"}`
    * `slice(out, t, start, lengths, strides)`: `{"start_indices", "lengths", "strides"}`
    * `put_slice(out, t, start, slice)`: inputs `[t, slice]`, `{"start_indices"}`
    * `concatenate(out, tensors, axis)`, `stack(out, tensors, axis)`: inputs = the list,
      `{"axis"}`
    * `window_sum|product|max|min(out, t, window_dims, opts)`: `{"window_dimensions", ...opts}`
    * `window_scatter_max|min(out, t, source, init, window_dims, opts)`: inputs
      `[t, source, init]`, `{"window_dimensions", ...opts}`
    * `iota(out, axis, _)`: no inputs, `{"axis": n | null}`; `eye(out, _)`: no inputs
    * `constant(out, number, _)`: no inputs, `{"value": number | "nan" | "infinity" |
      "neg_infinity"}` (complex constants are skipped)
    * every other callback with a keyword list last (`sum`, `argmax`, `gather`, `conv`,
      `sort`, `indexed_add`, `fft`, `triangular_solve`, ...): the keyword list is the options.
    * `Nx.block/4` extensions with a single tensor result are recorded under their own op
      name: the struct's fields are the options, its tensor arguments the inputs:
      `logical_not`, `phase`, `all_close`, `cumulative_sum|product|min|max`, `take`,
      `take_along_axis`, `fft2`, `ifft2`, `rfft`, `irfft`, `linalg_cholesky`, `linalg_solve`,
      `linalg_determinant`. (Blocks with tuple results, e.g. QR, are not recorded.)

  ## Tolerances (`tolerance_ulp`, in ulps of the output type)

  0 (bit-exact; NaN matches any NaN; the sign of zero must match) for integer results and for
  add, subtract, multiply, divide, remainder, sqrt, abs, negate, min/max, rounding ops,
  comparisons, casts, select/clip, shape/index/sort ops and all data movement. Others:

    * transcendental (exp, expm1, log, log1p, sigmoid, trig, hyperbolic, rsqrt, cbrt, pow,
      atan2, phase): 4 (f16: 1)
    * erf, erfc: 8; erf_inv: 32
    * complex multiply 2, complex divide / sqrt / abs 4 (complex components are compared in
      ulps of the larger-magnitude component of the expected value)
    * sum, product, cumulative sums/products, window sums/products, dot, conv, all_close:
      16 for f32/f64 (inputs chosen without cancellation), 2 for f16
    * fft family: 64; linalg: 256
    * any result of type bf16: at least 1, except for pure data movement and exactly
      representable results. Nx.BinaryBackend writes bf16 by truncating the f32 value
      (round toward zero) where hardware rounds to nearest even.
  """

  use Mix.Task

  @switches [out: :string, only: :string]

  @impl true
  def run(args) do
    {opts, _, _} = OptionParser.parse(args, switches: @switches)
    Mix.Task.run("compile")
    {:ok, _} = Application.ensure_all_started(:nx)
    out = opts[:out] || Path.join(File.cwd!(), "test/fixtures")
    only = if o = opts[:only], do: String.split(o, ","), else: nil
    NxVulkan.Fixtures.generate(out, only)
  end
end

defmodule NxVulkan.Fixtures.Recorder do
  @moduledoc false
  # A backend that delegates every callback to Nx.BinaryBackend and records the outermost
  # call in the process dictionary (key :nxv_fixture_records) when recording is on.
  @behaviour Nx.Backend
  defstruct [:state]

  @special [
    init: 1,
    backend_copy: 3,
    backend_transfer: 3,
    backend_deallocate: 1,
    to_binary: 2,
    inspect: 2
  ]

  @impl true
  def init(opts), do: opts

  @impl true
  def backend_copy(t, __MODULE__, _opts), do: t
  def backend_copy(t, backend, opts), do: Nx.BinaryBackend.backend_copy(unwrap(t), backend, opts)

  @impl true
  def backend_transfer(t, __MODULE__, _opts), do: t

  def backend_transfer(t, backend, opts),
    do: Nx.BinaryBackend.backend_transfer(unwrap(t), backend, opts)

  @impl true
  def backend_deallocate(_t), do: :ok

  @impl true
  def to_binary(t, limit), do: Nx.BinaryBackend.to_binary(unwrap(t), limit)

  @impl true
  def inspect(t, opts), do: Nx.BinaryBackend.inspect(unwrap(t), opts)

  for {name, arity} <- Nx.Backend.behaviour_info(:callbacks),
      {name, arity} not in @special do
    args = Macro.generate_arguments(arity, __MODULE__)

    @impl true
    def unquote(name)(unquote_splicing(args)) do
      NxVulkan.Fixtures.Recorder.dispatch(unquote(name), unquote(args))
    end
  end

  @doc false
  def dispatch(name, args) do
    depth = Process.get(:nxv_fixture_depth, 0)
    Process.put(:nxv_fixture_depth, depth + 1)

    try do
      raw_args = unwrap(args)
      result = apply(Nx.BinaryBackend, name, raw_args)

      if depth == 0 and Process.get(:nxv_fixture_recording, false) do
        Process.put(:nxv_fixture_records, [
          {name, raw_args, unwrap(result)} | Process.get(:nxv_fixture_records, [])
        ])
      end

      wrap(result)
    after
      Process.put(:nxv_fixture_depth, depth)
    end
  end

  def unwrap(%Nx.Tensor{data: %__MODULE__{state: s}} = t),
    do: %{t | data: %Nx.BinaryBackend{state: s}}

  def unwrap(list) when is_list(list), do: Enum.map(list, &unwrap/1)
  def unwrap(tuple) when is_tuple(tuple), do: tuple |> Tuple.to_list() |> unwrap() |> List.to_tuple()
  def unwrap(other), do: other

  def wrap(%Nx.Tensor{data: %Nx.BinaryBackend{state: s}} = t),
    do: %{t | data: %__MODULE__{state: s}}

  def wrap(list) when is_list(list), do: Enum.map(list, &wrap/1)
  def wrap(tuple) when is_tuple(tuple), do: tuple |> Tuple.to_list() |> wrap() |> List.to_tuple()
  def wrap(other), do: other
end

defmodule NxVulkan.Fixtures do
  @moduledoc false
  # The generator behind `mix nx_vulkan.fixtures`. See Mix.Tasks.NxVulkan.Fixtures.

  alias NxVulkan.Fixtures.Recorder

  @ints [{:u, 8}, {:u, 16}, {:u, 32}, {:u, 64}, {:s, 8}, {:s, 16}, {:s, 32}, {:s, 64}]
  @floats [{:f, 16}, {:bf, 16}, {:f, 32}, {:f, 64}]
  @complex [{:c, 64}, {:c, 128}]
  @all @ints ++ @floats ++ @complex
  @real @ints ++ @floats

  @unary_math [:exp, :expm1, :log, :log1p, :sigmoid, :cos, :sin, :tan, :cosh, :sinh, :tanh] ++
                [:acos, :asin, :atan, :acosh, :asinh, :atanh, :sqrt, :rsqrt, :cbrt] ++
                [:erf, :erfc, :erf_inv]
  @unary_other [:abs, :bitwise_not, :ceil, :conjugate, :floor, :negate, :round, :sign] ++
                 [:count_leading_zeros, :population_count, :real, :imag, :is_nan, :is_infinity]
  @binary [:add, :subtract, :multiply, :pow, :remainder, :divide, :atan2, :min, :max] ++
            [:quotient, :bitwise_and, :bitwise_or, :bitwise_xor, :left_shift, :right_shift] ++
            [:equal, :not_equal, :greater, :less, :greater_equal, :less_equal] ++
            [:logical_and, :logical_or, :logical_xor]

  @families [
    "elementwise_unary",
    "elementwise_binary",
    "select_clip",
    "as_type",
    "reduce",
    "shape",
    "index",
    "creation",
    "dot",
    "sort",
    "cumulative",
    "window",
    "conv",
    "fft",
    "linalg"
  ]

  ## Entry point

  def generate(dir, only \\ nil) do
    File.mkdir_p!(dir)
    Nx.default_backend(Recorder)

    for family <- @families, only == nil or family in only do
      :rand.seed(:exsss, {20_250_101, :erlang.phash2(family), 7})
      Process.put(:nxv_dropped, 0)
      cases = family |> family_cases() |> List.flatten() |> Enum.uniq()
      path = Path.join(dir, family <> ".json")
      write_file(path, cases)

      Mix.shell().info(
        "#{family}: #{length(cases)} cases, #{File.stat!(path).size} bytes" <>
          " (#{Process.get(:nxv_dropped)} computations dropped)"
      )
    end

    :ok
  end

  defp nx_version, do: to_string(Application.spec(:nx, :vsn))

  defp write_file(path, lines) do
    body = [
      ~s({"nx_version": ),
      json(nx_version()),
      ~s(,\n "cases": [\n),
      Enum.intersperse(lines, ",\n"),
      "\n]}\n"
    ]

    File.write!(path, body)
  end

  ## Capture

  # Runs `fun` with recording on; returns the encoded cases (JSON lines) of the records whose
  # op name is in `keep` (default: every op). A raising computation gives [].
  def capture(keep, fun) do
    Process.put(:nxv_fixture_records, [])
    Process.put(:nxv_fixture_recording, true)

    result =
      try do
        fun.()
        :ok
      rescue
        _ -> :error
      after
        Process.put(:nxv_fixture_recording, false)
      end

    records = Process.get(:nxv_fixture_records, []) |> Enum.reverse()

    case result do
      :ok ->
        for rec <- records,
            c = to_case(rec),
            c != nil,
            keep == nil or c.op in keep,
            line = safe_encode(c),
            line != nil,
            do: line

      :error ->
        Process.put(:nxv_dropped, Process.get(:nxv_dropped, 0) + 1)
        []
    end
  end

  # Does `fun` run on Nx.BinaryBackend without raising?
  defp runs?(fun) do
    try do
      fun.()
      true
    rescue
      _ -> false
    end
  end

  @kw_last [:gather, :conv, :all, :any, :sum, :product, :reduce_max, :reduce_min] ++
             [:argmax, :argmin, :sort, :argsort, :indexed_add, :indexed_put] ++
             [:triangular_solve, :fft, :ifft]

  defp arg_spec(:squeeze), do: [:t, "axes"]
  defp arg_spec(:transpose), do: [:t, "axes"]
  defp arg_spec(:reverse), do: [:t, "axes"]
  defp arg_spec(:broadcast), do: [:t, "shape", "axes"]
  defp arg_spec(:pad), do: [:t, :t, "padding_config"]
  defp arg_spec(:dot), do: [:t, "left_contract", "left_batch", :t, "right_contract", "right_batch"]
  defp arg_spec(:slice), do: [:t, "start_indices", "lengths", "strides"]
  defp arg_spec(:put_slice), do: [:t, "start_indices", :t]
  defp arg_spec(:concatenate), do: [:tl, "axis"]
  defp arg_spec(:stack), do: [:tl, "axis"]
  defp arg_spec(:window_scatter_max), do: [:t, :t, :t, "window_dimensions", :kw]
  defp arg_spec(:window_scatter_min), do: [:t, :t, :t, "window_dimensions", :kw]
  defp arg_spec(:iota), do: ["axis", :ignore]
  defp arg_spec(:eye), do: [:ignore]
  defp arg_spec(:constant), do: ["value", :ignore]
  defp arg_spec(:from_binary), do: :skip
  defp arg_spec(:reduce), do: :skip
  defp arg_spec(:window_reduce), do: :skip
  defp arg_spec(:to_batched), do: :skip
  defp arg_spec(:from_pointer), do: :skip
  defp arg_spec(:to_pointer), do: :skip

  defp arg_spec(name)
       when name in [:window_sum, :window_product, :window_max, :window_min],
       do: [:t, "window_dimensions", :kw]

  defp arg_spec(name) when name in @kw_last, do: :kw_last
  defp arg_spec(_), do: :all_tensors

  defp to_case({:block, [struct, _output, args, _fun], result}) do
    with %Nx.Tensor{} <- result,
         true <- Enum.all?(args, &match?(%Nx.Tensor{}, &1)) do
      op = block_name(struct)
      opts = struct |> Map.from_struct() |> Enum.sort()
      build_case(op, result, args, opts, result)
    else
      _ -> nil
    end
  end

  defp to_case({name, [out | rest], result}) do
    case arg_spec(name) do
      :skip ->
        nil

      :all_tensors ->
        build_case(Atom.to_string(name), out, rest, [], result)

      :kw_last ->
        {tensors, [kw]} = Enum.split(rest, -1)
        build_case(Atom.to_string(name), out, tensors, kw, result)

      spec ->
        {inputs, opts} =
          Enum.zip(spec, rest)
          |> Enum.reduce({[], []}, fn
            {:t, t}, {ins, opts} -> {[t | ins], opts}
            {:tl, ts}, {ins, opts} -> {Enum.reverse(ts) ++ ins, opts}
            {:kw, kw}, {ins, opts} -> {ins, Enum.reverse(kw) ++ opts}
            {:ignore, _}, acc -> acc
            {key, v}, {ins, opts} -> {ins, [{key, v} | opts]}
          end)

        build_case(Atom.to_string(name), out, Enum.reverse(inputs), Enum.reverse(opts), result)
    end
  end

  defp block_name(struct) do
    struct.__struct__
    |> Module.split()
    |> Enum.drop(2)
    |> Enum.map(fn
      "LinAlg" -> "linalg"
      part -> Macro.underscore(part)
    end)
    |> Enum.join("_")
  end

  defp build_case(op, out, inputs, opts, result) do
    cond do
      not match?(%Nx.Tensor{}, result) -> nil
      not Enum.all?(inputs, &match?(%Nx.Tensor{}, &1)) -> nil
      Enum.any?([out, result | inputs], &(type_name(&1.type) == nil)) -> nil
      contains_tensor?(opts) -> nil
      op == "constant" and match?({_, %Complex{}}, List.keyfind(opts, "value", 0)) -> nil
      true -> %{op: op, out: out, inputs: inputs, opts: opts, result: result}
    end
  end

  defp contains_tensor?(%Nx.Tensor{}), do: true
  defp contains_tensor?(%Complex{}), do: false
  defp contains_tensor?(list) when is_list(list), do: Enum.any?(list, &contains_tensor?/1)
  defp contains_tensor?(t) when is_tuple(t), do: t |> Tuple.to_list() |> contains_tensor?()
  defp contains_tensor?(m) when is_map(m) and not is_struct(m), do: m |> Map.values() |> contains_tensor?()
  defp contains_tensor?(_), do: false

  ## Encoding

  defp encode_case(%{op: op, out: out, inputs: inputs, opts: opts, result: result}) do
    in_types = Enum.map(inputs, & &1.type)

    json(
      {:obj,
       [
         {"op", op},
         {"out", {:obj, [{"type", type_name(out.type)}, {"shape", Tuple.to_list(out.shape)}]}},
         {"inputs", Enum.map(inputs, &tensor_json/1)},
         {"options", term_json(opts, true)},
         {"expected", tensor_json(result)},
         {"tolerance_ulp", tolerance(op, result.type, in_types)}
       ]}
    )
  end

  defp safe_encode(c) do
    c |> encode_case() |> IO.iodata_to_binary()
  rescue
    _ ->
      Process.put(:nxv_dropped, Process.get(:nxv_dropped, 0) + 1)
      nil
  end

  defp tensor_json(t) do
    {:obj,
     [
       {"type", type_name(t.type)},
       {"shape", Tuple.to_list(t.shape)},
       {"data", Base.encode16(Nx.to_binary(t), case: :lower)}
     ]}
  end

  def type_name({:u, n}), do: "u#{n}"
  def type_name({:s, n}), do: "s#{n}"
  def type_name({:f, n}) when n in [16, 32, 64], do: "f#{n}"
  def type_name({:bf, 16}), do: "bf16"
  def type_name({:c, n}), do: "c#{n}"
  def type_name(_), do: nil

  # Elixir term -> JSON value, per the convention in the task's moduledoc.
  defp term_json(list, _top) when is_list(list) and list != [] do
    if Enum.all?(list, &match?({k, _} when is_atom(k) or is_binary(k), &1)) do
      {:obj, Enum.map(list, fn {k, v} -> {to_string(k), term_json(v, false)} end)}
    else
      Enum.map(list, &term_json(&1, false))
    end
  end

  defp term_json([], true), do: {:obj, []}
  defp term_json([], false), do: []
  defp term_json(t, _) when is_tuple(t), do: t |> Tuple.to_list() |> Enum.map(&term_json(&1, false))
  defp term_json(nil, _), do: nil
  defp term_json(b, _) when is_boolean(b), do: b
  defp term_json(a, _) when is_atom(a), do: Atom.to_string(a)
  defp term_json(n, _) when is_number(n), do: n
  defp term_json(s, _) when is_binary(s), do: s

  def json({:obj, pairs}),
    do: ["{", Enum.map_intersperse(pairs, ", ", fn {k, v} -> [json(k), ": ", json(v)] end), "}"]

  def json(list) when is_list(list), do: ["[", Enum.map_intersperse(list, ", ", &json/1), "]"]
  def json(nil), do: "null"
  def json(true), do: "true"
  def json(false), do: "false"
  def json(n) when is_integer(n), do: Integer.to_string(n)
  def json(f) when is_float(f), do: Float.to_string(f)
  def json(s) when is_binary(s), do: [?", String.replace(s, ~S("), ~S(\")), ?"]

  ## Tolerances

  @transcendental ~w(exp expm1 log log1p sigmoid cos sin tan cosh sinh tanh acos asin atan) ++
                    ~w(acosh asinh atanh rsqrt cbrt pow atan2 phase)
  @accumulating ~w(sum product cumulative_sum cumulative_product window_sum window_product) ++
                  ~w(dot conv all_close window_scatter_max window_scatter_min)
  @fft ~w(fft ifft fft2 ifft2 rfft irfft)
  @linalg ~w(triangular_solve linalg_cholesky linalg_solve linalg_determinant)
  # Ops whose result is one of the input values (or exactly representable): no bf16 bump.
  @value_preserving ~w(negate abs sign ceil floor round real imag conjugate min max select) ++
                      ~w(clip reduce_max reduce_min window_max window_min cumulative_min) ++
                      ~w(cumulative_max reshape transpose broadcast squeeze pad slice put_slice) ++
                      ~w(concatenate stack reverse gather take take_along_axis indexed_put) ++
                      ~w(sort argsort argmax argmin bitcast eye is_nan is_infinity) ++
                      ~w(equal not_equal greater less greater_equal less_equal logical_not)

  # Arithmetic whose integer inputs may not be exact in the float output type: Nx computes in
  # f64 from the exact integers, a device converts them to the output type first (as EXLA does).
  @arith ~w(add subtract multiply divide pow atan2 remainder)

  def tolerance(op, out_type, in_types) do
    base = base_tolerance(op, out_type, in_types)

    base =
      if op in @arith and Enum.any?(in_types, &lossy?(&1, out_type)), do: max(base, 2), else: base

    cond do
      out_type == {:bf, 16} and op == "as_type" and in_types == [{:bf, 16}] -> 0
      out_type == {:bf, 16} and op not in @value_preserving -> max(base, 1)
      true -> base
    end
  end


  defp lossy?({k, bits}, {fk, fbits}) when k in [:u, :s] and fk in [:f, :bf, :c] do
    mantissa =
      case {fk, fbits} do
        {:bf, 16} -> 8
        {:f, 16} -> 11
        {:f, 32} -> 24
        {:c, 64} -> 24
        _ -> 53
      end

    (if k == :s, do: bits - 1, else: bits) > mantissa
  end

  defp lossy?(_, _), do: false

  defp base_tolerance(op, type, in_types) do
    {kind, _} = type
    complex_in? = Enum.any?(in_types, &match?({:c, _}, &1))

    cond do
      kind in [:u, :s] -> 0
      op in @fft -> 64
      op in @linalg -> 256
      op in ["erf", "erfc"] -> if type == {:f, 16}, do: 1, else: 8
      op == "erf_inv" -> if type == {:f, 16}, do: 2, else: 32
      op in @transcendental -> if type == {:f, 16}, do: 1, else: 4
      op in @accumulating -> if type in [{:f, 16}, {:bf, 16}], do: 2, else: 16
      complex_in? and op == "multiply" -> 2
      complex_in? and op in ["divide", "sqrt", "abs"] -> 4
      true -> 0
    end
  end

  ## Data

  defp neg_zero, do: (<<x::float-64>> = <<1::1, 0::63>>; x)

  defp specials({:f, 16}), do: common_specials() ++ [6.103515625e-05, 5.960464477539063e-08, 65504.0, -65504.0, 2048.0, 2049.0]
  defp specials({:bf, 16}), do: common_specials() ++ [1.1754943508222875e-38, 9.183549615799121e-41, 3.3895313892515355e38, -3.3895313892515355e38, 256.0, 257.0]
  defp specials({:f, 32}), do: common_specials() ++ [1.1754943508222875e-38, 1.401298464324817e-45, 3.4028234663852886e38, -3.4028234663852886e38, 16_777_216.0, 16_777_217.0]
  defp specials({:f, 64}), do: common_specials() ++ [2.2250738585072014e-308, 5.0e-324, 1.7976931348623157e308, -1.7976931348623157e308, 9_007_199_254_740_992.0, 1.0e20]

  defp common_specials,
    do: [:nan, :infinity, :neg_infinity, 0.0, neg_zero(), 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0e-6]

  defp int_range({:u, n}), do: {0, Bitwise.bsl(1, n) - 1}
  defp int_range({:s, n}), do: {-Bitwise.bsl(1, n - 1), Bitwise.bsl(1, n - 1) - 1}

  defp uniform(lo, hi), do: lo + :rand.uniform() * (hi - lo)
  defp rand_int(lo, hi), do: lo + :rand.uniform(hi - lo + 1) - 1

  # One random value of `type` for a data `kind`:
  #   :general  moderate values of every sign and magnitude (ints: small and full-range)
  #   :plain    finite, nonzero, moderate
  #   :positive in [0.1, 10] (ints: 1..10)
  #   :near_one in [0.6, 1.6] (ints: 1..2)
  #   :unit     in (-1, 1) (ints: 0..1)
  #   :bool     0 or 1
  defp value({:c, _}, kind) do
    Complex.new(value({:f, 64}, kind), value({:f, 64}, kind))
  end

  defp value({k, _} = type, kind) when k in [:u, :s] do
    {lo, hi} = int_range(type)

    case kind do
      :general ->
        if :rand.uniform() < 0.6,
          do: rand_int(max(lo, -100), min(hi, 100)),
          else: Enum.random([lo, hi, 0, 1, lo + 1, hi - 1, rand_int(lo, hi), rand_int(lo, hi)])

      :plain ->
        v = rand_int(1, 20)
        if lo < 0 and :rand.uniform() < 0.5, do: -v, else: v

      :positive -> rand_int(1, 10)
      :near_one -> rand_int(1, 2)
      :unit -> rand_int(0, 1)
      :bool -> rand_int(0, 1)
    end
  end

  defp value(_float, kind) do
    case kind do
      :general ->
        m = :rand.normal() * :math.pow(10, rand_int(-3, 3))
        Float.round(m, 6)

      :plain ->
        v = uniform(0.1, 100.0)
        if :rand.uniform() < 0.5, do: -v, else: v

      :positive -> uniform(0.1, 10.0)
      :near_one -> uniform(0.6, 1.6)
      :unit -> uniform(-0.99, 0.99)
      :bool -> rand_int(0, 1) * 1.0
    end
  end

  defp values(type, n, kind), do: for(_ <- 1..n//1, do: value(type, kind))

  # :special data: every special value of the type first (floats and complex), then random.
  defp data(type, n, :special) do
    s =
      case type do
        {:c, 64} -> Enum.map(specials({:f, 32}) |> Enum.filter(&is_float/1), &Complex.new(&1, 0.5))
        {:c, 128} -> Enum.map(specials({:f, 64}) |> Enum.filter(&is_float/1), &Complex.new(-0.25, &1))
        {k, _} when k in [:f, :bf] -> specials(type)
        _ -> {lo, hi} = int_range(type); [lo, hi, 0, 1, lo + 1, hi - 1]
      end

    s = Enum.take(s, n)
    s ++ values(type, n - length(s), :general)
  end

  defp data(type, n, kind), do: values(type, n, kind)

  @doc false
  def tensor(type, shape, kind \\ :general) do
    n = Tuple.product(shape)
    from_list(data(type, n, kind), type, shape)
  end

  def from_list([], type, shape) do
    Nx.broadcast(Nx.tensor(0, type: type, backend: Recorder), shape)
  end

  def from_list(list, type, shape) do
    bin = Nx.tensor(list, type: type, backend: Nx.BinaryBackend) |> Nx.to_binary()
    Nx.from_binary(bin, type, backend: Recorder) |> Nx.reshape(shape)
  end

  defp to_list_flat(t), do: t |> Nx.backend_transfer(Nx.BinaryBackend) |> Nx.to_flat_list()

  ## Repair: replace elements on which Nx.BinaryBackend raises

  # Elementwise (unary or same-shape n-ary) computation `fun` on `inputs` (same shape):
  # elements where it raises get replacement values (:positive kind).
  defp repair(fun, inputs) do
    if runs?(fn -> apply(fun, inputs) end) do
      inputs
    else
      lists = Enum.map(inputs, &to_list_flat/1)
      n = length(hd(lists))

      fixed =
        for i <- 0..(n - 1)//1 do
          point = for {l, t} <- Enum.zip(lists, inputs), do: from_list([Enum.at(l, i)], t.type, {})

          if runs?(fn -> apply(fun, point) end),
            do: Enum.map(lists, &Enum.at(&1, i)),
            else: replacement(fun, inputs)
        end

      cols = fixed |> Enum.zip() |> Enum.map(&Tuple.to_list/1)
      for {col, t} <- Enum.zip(cols, inputs), do: from_list(col, t.type, t.shape)
    end
  end

  # Values (one per input) on which `fun` runs: moderate positive, then in (0, 1).
  defp replacement(fun, inputs) do
    candidates =
      for kind <- [:positive, :unit, :positive, :unit, :bool] do
        for t <- inputs do
          v = value(t.type, kind)
          if is_float(v), do: abs(v), else: v
        end
      end

    Enum.find(candidates, List.last(candidates), fn vals ->
      point = for {v, t} <- Enum.zip(vals, inputs), do: from_list([v], t.type, {})
      runs?(fn -> apply(fun, point) end)
    end)
  end

  ## Case families

  defp family_cases("elementwise_unary") do
    ops = @unary_math ++ @unary_other

    for op <- ops do
      fun = fn t -> apply(Nx, op, [t]) end

      main =
        for type <- @all do
          t = tensor(type, {4, 8}, :special)
          [t] = repair(fun, [t])
          capture([to_string(op)], fn -> fun.(t) end)
        end

      extra =
        for {type, shape, kind} <- [
              {{:f, 32}, {}, :unit},
              {{:s, 32}, {}, :positive},
              {{:f, 32}, {257}, :unit},
              {{:f, 16}, {1, 3, 1}, :positive},
              {{:u, 8}, {257}, :general},
              {{:f, 32}, {3, 5}, :positive},
              {{:f, 64}, {3, 5}, :unit}
            ] do
          t = tensor(type, shape, kind)
          [t] = if Nx.size(t) > 0, do: repair(fun, [t]), else: [t]
          capture([to_string(op)], fn -> fun.(t) end)
        end

      [main, extra]
    end ++
      for type <- @all, op <- [:logical_not, :phase] do
        t = tensor(type, {3, 4}, :special)
        capture([to_string(op)], fn -> apply(Nx, op, [t]) end)
      end
  end

  defp family_cases("elementwise_binary") do
    mixed = [
      {{:u, 8}, {:s, 8}},
      {{:s, 32}, {:f, 32}},
      {{:u, 8}, {:f, 16}},
      {{:s, 64}, {:f, 64}},
      {{:f, 16}, {:f, 32}},
      {{:bf, 16}, {:f, 16}},
      {{:f, 32}, {:c, 64}},
      {{:u, 32}, {:s, 32}},
      {{:u, 64}, {:s, 64}},
      {{:s, 16}, {:u, 16}}
    ]

    shape_pairs = [{{3}, {2, 3}}, {{}, {2, 3}}, {{2, 1}, {1, 3}}, {{4, 1, 2}, {3, 1}}]

    for op <- @binary do
      fun = binary_fun(op)
      keep = [to_string(op)]

      same =
        for type <- @all do
          a = tensor(type, {4, 8}, :special)
          b = tensor(type, {4, 8}, :general)
          b2 = Nx.reverse(a)
          [a, b] = repair(fun, [a, b])
          [a2, b2] = repair(fun, [a, b2])
          [capture(keep, fn -> fun.(a, b) end), capture(keep, fn -> fun.(a2, b2) end)]
        end

      cross =
        for type <- [{:f, 32}, {:f, 64}, {:f, 16}, {:s, 32}, {:u, 8}] do
          s = specials_or_ints(type)
          col = from_list(s, type, {length(s), 1})
          row = from_list(s, type, {length(s)})
          cross_case(fun, keep, col, row)
        end

      mix =
        for {{ta, tb}, i} <- Enum.with_index(mixed) do
          {sa, sb} = Enum.at(shape_pairs, rem(i, length(shape_pairs)))
          a = tensor(ta, sa, :plain)
          b = tensor(tb, sb, :plain)

          fallback = fn ->
            a = tensor(ta, sa, :positive)
            b = tensor(tb, sb, :positive)
            [capture(keep, fn -> fun.(a, b) end), capture(keep, fn -> fun.(b, a) end)]
          end

          if runs?(fn -> {fun.(a, b), fun.(b, a)} end),
            do: [capture(keep, fn -> fun.(a, b) end), capture(keep, fn -> fun.(b, a) end)],
            else: fallback.()
        end

      edge =
        for {ta, sa, sb, kind} <- [
              {{:f, 32}, {257}, {257}, :positive},
              {{:s, 32}, {257}, {257}, :positive},
              {{:f, 32}, {}, {}, :positive},
              {{:u, 8}, {1, 5, 1}, {1, 5, 1}, :positive}
            ] do
          a = tensor(ta, sa, kind)
          b = tensor(ta, sb, kind)
          capture(keep, fn -> fun.(a, b) end)
        end

      numbers =
        for type <- [{:s, 8}, {:u, 8}, {:f, 32}, {:bf, 16}, {:s, 64}], n <- [2, 0.5] do
          a = tensor(type, {5}, :positive)
          capture(keep, fn -> fun.(a, n) end)
        end

      [same, cross, mix, edge, numbers]
    end
  end

  # Nx.BinaryBackend (through Complex) gives +0.0 for x / +-Inf and +Inf for Inf / -0.0,
  # where IEEE 754 (and EXLA) give signed results: such divisions count as undefined (raise),
  # so the generator leaves them out.
  defp binary_fun(:divide) do
    fn a, b ->
      if float?(b) and Nx.to_number(Nx.any(Nx.is_infinity(b))) == 1,
        do: raise(ArgumentError, "division by infinity")

      if float?(b) and float?(a) and
           Nx.to_number(Nx.any(Nx.logical_and(Nx.is_infinity(a), Nx.equal(b, 0)))) == 1,
         do: raise(ArgumentError, "infinity divided by zero")

      Nx.divide(a, b)
    end
  end

  defp binary_fun(op), do: fn a, b -> apply(Nx, op, [a, b]) end

  defp float?(t), do: elem(Nx.type(t), 0) in [:f, :bf]

  defp family_cases("select_clip") do
    select =
      for type <- @all do
        pred = tensor({:u, 8}, {4, 8}, :bool)
        a = tensor(type, {4, 8}, :special)
        b = tensor(type, {4, 8}, :general)
        capture(["select"], fn -> Nx.select(pred, a, b) end)
      end ++
        for {pt, ps, at, as, bt, bs} <- [
              {{:u, 8}, {}, {:f, 32}, {3, 2}, {:f, 32}, {3, 2}},
              {{:u, 8}, {3, 1}, {:s, 32}, {2}, {:f, 32}, {}},
              {{:f, 32}, {2, 3}, {:u, 8}, {2, 3}, {:s, 8}, {3}},
              {{:s, 32}, {257}, {:f, 64}, {257}, {:f, 64}, {}},
              {{:bf, 16}, {4}, {:c, 64}, {4}, {:f, 16}, {4}}
            ] do
          pred =
            if pt == {:f, 32},
              do: from_list([0.0, neg_zero(), :nan, 1.0, 0.0, -2.0], pt, ps),
              else: tensor(pt, ps, :bool)

          a = tensor(at, as, :general)
          b = tensor(bt, bs, :general)
          capture(["select"], fn -> Nx.select(pred, a, b) end)
        end

    clip =
      for type <- @real do
        t = tensor(type, {4, 8}, :special)
        {lo, hi} = if type in @ints, do: {1, 50}, else: {-1.5, 2.5}
        lo = from_list([lo], type, {})
        hi = from_list([hi], type, {})
        capture(["clip"], fn -> Nx.clip(t, lo, hi) end)
      end ++
        for {type, shape, lo, hi, lt} <- [
              {{:f, 32}, {257}, -0.5, 0.5, {:f, 32}},
              {{:s, 32}, {}, -3, 3, {:s, 32}},
              {{:u, 8}, {3, 5}, 10, 200, {:u, 8}},
              {{:f, 32}, {2, 3}, 0.0, :nan, {:f, 32}},
              {{:s, 8}, {2, 3}, -1.0, 1.0, {:f, 32}}
            ] do
          t = tensor(type, shape, :general)
          lo = from_list([lo], lt, {})
          hi = from_list([hi], lt, {})
          capture(["clip"], fn -> Nx.clip(t, lo, hi) end)
        end

    [select, clip]
  end

  defp family_cases("as_type") do
    as_type =
      for from <- @all, to <- @all do
        t = tensor(from, {4, 8}, :special)
        [t] = repair(fn t -> Nx.as_type(t, to) end, [t])
        capture(["as_type"], fn -> Nx.as_type(t, to) end)
      end ++
        for {from, to, shape} <- [
              {{:f, 32}, {:s, 32}, {257}},
              {{:f, 64}, {:f, 16}, {257}},
              {{:f, 32}, {:bf, 16}, {257}},
              {{:s, 64}, {:f, 32}, {}}
            ] do
          t = tensor(from, shape, :general)
          capture(["as_type"], fn -> Nx.as_type(t, to) end)
        end

    bitcast =
      for from <- @all, to <- @all, elem(from, 1) == elem(to, 1) do
        t = tensor(from, {3, 4}, :special)
        capture(["bitcast"], fn -> Nx.bitcast(t, to) end)
      end

    [as_type, bitcast]
  end

  defp family_cases("reduce") do
    shapes = [
      {{4, 6}, []},
      {{4, 6}, [axes: [0]]},
      {{4, 6}, [axes: [1], keep_axes: true]},
      {{2, 3, 4}, [axes: [0, 2]]},
      {{2, 3, 4}, [axes: [-1], keep_axes: true]},
      {{}, []},
      {{1, 5, 1}, [axes: [0, 2]]}
    ]

    reducers = [
      {:sum, :positive},
      {:product, :near_one},
      {:reduce_max, :special},
      {:reduce_min, :special},
      {:all, :bool},
      {:any, :bool}
    ]

    basic =
      for {op, kind} <- reducers, type <- @all, {shape, opts} <- shapes do
        kind = if kind == :special and Tuple.product(shape) < 15, do: :general, else: kind
        t = tensor(type, shape, kind)
        capture([to_string(op)], fn -> apply(Nx, op, [t, opts]) end)
      end

    special_sums =
      for op <- [:sum, :product, :all, :any], type <- @floats ++ @ints do
        t = tensor(type, {4, 5}, :special)
        capture([to_string(op)], fn -> apply(Nx, op, [t, [axes: [1]]]) end)
      end

    big =
      for {op, type, kind} <- [
            {:sum, {:f, 32}, :positive},
            {:sum, {:s, 32}, :general},
            {:sum, {:u, 8}, :general},
            {:sum, {:f, 16}, :positive},
            {:sum, {:bf, 16}, :positive},
            {:product, {:f, 32}, :near_one},
            {:reduce_max, {:f, 32}, :general},
            {:reduce_min, {:s, 64}, :general},
            {:argmax, {:f, 32}, :general},
            {:any, {:u, 8}, :unit}
          ],
          shape <- [{257}, {3, 257}] do
        t = tensor(type, shape, kind)
        opts = if tuple_size(shape) == 2, do: [axes: [1]], else: []
        opts = if op == :argmax, do: (if opts == [], do: [], else: [axis: 1]), else: opts
        capture([to_string(op)], fn -> apply(Nx, op, [t, opts]) end)
      end

    arg_opts = [
      [],
      [axis: 0],
      [axis: 1, keep_axis: true],
      [axis: 1, tie_break: :high],
      [tie_break: :high],
      [axis: 0, type: :s64]
    ]

    args =
      for op <- [:argmax, :argmin], type <- @real, opts <- arg_opts do
        # ties: small value range
        t =
          if type in @ints,
            do: tensor(type, {4, 6}, :near_one),
            else: from_list(data(type, 24, :special) |> Enum.shuffle(), type, {4, 6})

        capture([to_string(op)], fn -> apply(Nx, op, [t, opts]) end)
      end ++
        for op <- [:argmax, :argmin], {shape, opts} <- [{{}, []}, {{2, 3, 4}, [axis: 2]}, {{1, 1}, [axis: 1]}] do
          t = tensor({:f, 32}, shape, :general)
          capture([to_string(op)], fn -> apply(Nx, op, [t, opts]) end)
        end

    all_close =
      for type <- [{:f, 32}, {:f, 64}, {:s, 32}] do
        a = tensor(type, {3, 4}, :positive)
        b = Nx.add(a, from_list([1.0e-6], {:f, 32}, {}))
        [
          capture(["all_close"], fn -> Nx.all_close(a, a) end),
          capture(["all_close"], fn -> Nx.all_close(a, b, atol: 1.0e-3) end),
          capture(["all_close"], fn -> Nx.all_close(a, b, atol: 0.0, rtol: 0.0) end)
        ]
      end

    [basic, special_sums, big, args, all_close]
  end

  defp family_cases("shape") do
    per_type =
      for type <- @all do
        t = tensor(type, {2, 3, 4}, :special)

        [
          capture(["reshape"], fn -> Nx.reshape(t, {4, 6}) end),
          capture(["transpose"], fn -> Nx.transpose(t, axes: [2, 0, 1]) end),
          capture(["reverse"], fn -> Nx.reverse(t, axes: [0, 2]) end),
          capture(["broadcast"], fn -> Nx.broadcast(Nx.slice(t, [0, 0, 0], [1, 3, 1]) |> Nx.squeeze(), {2, 3}) end),
          capture(["slice"], fn -> Nx.slice(t, [0, 1, 1], [2, 2, 3], strides: [1, 1, 2]) end),
          capture(["pad"], fn -> Nx.pad(t, from_list([0], type, {}), [{1, 0, 0}, {0, 1, 1}, {-1, 2, 0}]) end),
          capture(["concatenate"], fn -> Nx.concatenate([t, t], axis: 1) end),
          capture(["stack"], fn -> Nx.stack([t, t], axis: 1) end),
          capture(["put_slice"], fn -> Nx.put_slice(t, [0, 1, 2], tensor(type, {2, 2, 2}, :general)) end),
          capture(["squeeze"], fn -> Nx.squeeze(tensor(type, {1, 3, 1}), axes: [0, 2]) end)
        ]
      end

    f = fn shape -> tensor({:f, 32}, shape, :general) end
    s = fn shape -> tensor({:s, 32}, shape, :general) end

    misc = [
      capture(["reshape"], fn -> Nx.reshape(f.({}), {1, 1}) end),
      capture(["reshape"], fn -> Nx.reshape(f.({257}), {257, 1}) end),
      capture(["transpose"], fn -> Nx.transpose(f.({3, 5})) end),
      capture(["transpose"], fn -> Nx.transpose(s.({1, 257})) end),
      capture(["transpose"], fn -> Nx.transpose(s.({2, 3, 2, 3}), axes: [3, 1, 2, 0]) end),
      capture(["broadcast"], fn -> Nx.broadcast(f.({}), {2, 2}) end),
      capture(["broadcast"], fn -> Nx.broadcast(f.({3, 1}), {3, 4}) end),
      capture(["broadcast"], fn -> Nx.broadcast(s.({3}), {3, 2}, axes: [0]) end),
      capture(["broadcast"], fn -> Nx.broadcast(s.({2, 3}), {4, 3, 2}, axes: [2, 1]) end),
      capture(["broadcast"], fn -> Nx.broadcast(f.({1}), {257}) end),
      capture(["squeeze"], fn -> Nx.squeeze(f.({1, 1})) end),
      capture(["pad"], fn -> Nx.pad(f.({3}), from_list([:nan], {:f, 32}, {}), [{2, 3, 1}]) end),
      capture(["pad"], fn -> Nx.pad(f.({3, 5}), from_list([1.5], {:f, 32}, {}), [{-1, -2, 0}, {0, 0, 2}]) end),
      capture(["pad"], fn -> Nx.pad(f.({}), from_list([1.5], {:f, 32}, {}), []) end),
      capture(["pad"], fn -> Nx.pad(s.({2, 2}), from_list([-1], {:s, 32}, {}), [{0, 0, 3}, {1, 1, 0}]) end),
      capture(["slice"], fn -> Nx.slice(f.({257}), [100], [157]) end),
      capture(["slice"], fn -> Nx.slice(f.({3, 5}), [1, 0], [2, 5], strides: [2, 3]) end),
      capture(["slice"], fn -> Nx.slice(s.({3, 5}), [2, 4], [1, 1]) end),
      capture(["slice"], fn -> Nx.slice(s.({3, 5}), [2, 4], [2, 3]) end),
      capture(["slice"], fn -> Nx.slice(f.({2, 0}), [0, 0], [1, 0]) end),
      capture(["put_slice"], fn -> Nx.put_slice(f.({3, 5}), [2, 3], f.({2, 3})) end),
      capture(["put_slice"], fn -> Nx.put_slice(f.({3, 5}), [1, 1], s.({2, 2})) end),
      capture(["put_slice"], fn -> Nx.put_slice(f.({257}), [250], f.({10})) end),
      capture(["concatenate"], fn -> Nx.concatenate([f.({2, 3}), f.({2, 1})], axis: 1) end),
      capture(["concatenate"], fn -> Nx.concatenate([s.({3}), f.({2})]) end),
      capture(["concatenate"], fn -> Nx.concatenate([f.({1, 2}), f.({256, 2})]) end),
      capture(["stack"], fn -> Nx.stack([f.({}), f.({}), f.({})]) end),
      capture(["stack"], fn -> Nx.stack([s.({2, 3}), s.({2, 3})], axis: 2) end),
      capture(["stack"], fn -> Nx.stack([s.({3}), f.({3})], axis: 0) end),
      capture(["reverse"], fn -> Nx.reverse(f.({257})) end),
      capture(["reverse"], fn -> Nx.reverse(f.({3, 5}), axes: [1]) end),
      capture(["reverse"], fn -> Nx.reverse(f.({})) end),
    ]

    [per_type, misc]
  end

  defp family_cases("index") do
    idx = fn list, shape, type -> from_list(list, type, shape) end

    per_type =
      for type <- @all do
        t = tensor(type, {4, 3}, :special)

        [
          capture(["gather"], fn -> Nx.gather(t, idx.([0, 1, 3, 2, 1, 0], {3, 2}, {:s, 32})) end),
          capture(["take"], fn -> Nx.take(t, idx.([3, 0, 0, 2], {2, 2}, {:s, 64}), axis: 0) end),
          capture(["take_along_axis"], fn ->
            Nx.take_along_axis(t, idx.([2, 1, 0, 0, 1, 2, 2, 2], {4, 2}, {:s, 32}), axis: 1)
          end),
          capture(["indexed_add"], fn ->
            Nx.indexed_add(t, idx.([0, 0, 3, 2, 0, 0], {3, 2}, {:s, 32}), tensor(type, {3}, :positive))
          end),
          capture(["indexed_put"], fn ->
            Nx.indexed_put(t, idx.([0, 1, 3, 2, 1, 2], {3, 2}, {:s, 32}), tensor(type, {3}, :general))
          end)
        ]
      end

    f = fn shape -> tensor({:f, 32}, shape, :general) end
    s = fn shape -> tensor({:s, 32}, shape, :general) end

    misc = [
      capture(["gather"], fn -> Nx.gather(f.({3, 4, 2}), idx.([1, 0, 2, 1], {2, 2}, {:s, 32}), axes: [0, 1]) end),
      capture(["gather"], fn -> Nx.gather(f.({3, 4, 2}), idx.([3, 0, 1], {3, 1}, {:u, 8}), axes: [1]) end),
      capture(["gather"], fn -> Nx.gather(f.({257}), idx.([256, 0, 128], {3, 1}, {:s, 64})) end),
      capture(["gather"], fn -> Nx.gather(f.({3, 4}), idx.([5, 1, -1, 2, 2, 9], {3, 2}, {:s, 32})) end),
      capture(["take"], fn -> Nx.take(s.({3, 5}), idx.([4, 0, 2], {3}, {:u, 32}), axis: 1) end),
      capture(["take"], fn -> Nx.take(s.({3, 5}), idx.([1], {}, {:s, 32}), axis: 0) end),
      capture(["take"], fn -> Nx.take(f.({257}), idx.([256, 255, 0, 1], {2, 2}, {:s, 32})) end),
      capture(["take_along_axis"], fn ->
        Nx.take_along_axis(f.({2, 3}), idx.([0, 0, 1, 1, 1, 0], {3, 2}, {:s, 32}), axis: 0)
      end),
      capture(["indexed_add"], fn ->
        Nx.indexed_add(f.({3, 4, 2}), idx.([0, 1, 0, 1, 2, 3], {3, 2}, {:s, 32}), f.({3, 2}), axes: [0, 1])
      end),
      capture(["indexed_add"], fn ->
        Nx.indexed_add(s.({5}), idx.([1, 1, 1, 4], {4, 1}, {:s, 64}), s.({4}))
      end),
      capture(["indexed_add"], fn ->
        Nx.indexed_add(f.({4}), idx.([7, -1], {2, 1}, {:s, 32}), f.({2}))
      end),
      capture(["indexed_add"], fn ->
        Nx.indexed_add(s.({257}), idx.([0, 256, 100], {3, 1}, {:s, 32}), f.({3}))
      end),
      capture(["indexed_put"], fn ->
        Nx.indexed_put(f.({3, 4, 2}), idx.([0, 1, 2, 3], {2, 2}, {:u, 8}), f.({2, 2}), axes: [0, 1])
      end),
      capture(["indexed_put"], fn ->
        Nx.indexed_put(s.({5}), idx.([2, 2], {2, 1}, {:s, 32}), s.({2}))
      end)
    ]

    [per_type, misc]
  end

  defp family_cases("creation") do
    iota =
      for type <- @all, {shape, axis} <- [{{2, 3}, 1}, {{2, 3}, nil}, {{5}, 0}] do
        capture(["iota"], fn -> Nx.iota(shape, type: type, axis: axis) end)
      end ++
        [
          capture(["iota"], fn -> Nx.iota({}, type: :s32) end),
          capture(["iota"], fn -> Nx.iota({300}, type: :u8) end),
          capture(["iota"], fn -> Nx.iota({257}, type: :bf16) end),
          capture(["iota"], fn -> Nx.iota({2, 3, 4}, type: :s64, axis: 2) end)
        ]

    eye =
      for type <- @all, shape <- [{3, 3}, {2, 4}] do
        capture(["eye"], fn -> Nx.eye(shape, type: type) end)
      end ++
        [
          capture(["eye"], fn -> Nx.eye({2, 3, 3}, type: :f32) end),
          capture(["eye"], fn -> Nx.eye({1, 1}, type: :s32) end),
        ]

    constant =
      for type <- @real ++ @complex, v <- [0, 1, -1, 2.5, 300, :nan, :infinity, :neg_infinity] do
        capture(["constant"], fn -> Nx.broadcast(Nx.tensor(v, type: type), {2, 3}) end) ++
          capture(["constant"], fn -> Nx.broadcast(v, {2, 2}) |> Nx.as_type(type) end)
      end ++
        for v <- [1, 2.0, -0.0] do
          capture(["constant"], fn ->
            Recorder.constant(%Nx.Tensor{type: {:f, 32}, shape: {3}, names: [nil], data: nil}, v, [])
          end)
        end

    [iota, eye, constant]
  end

  defp family_cases("dot") do
    combos = [
      {{5}, {5}, [0], [], [0], []},
      {{3, 5}, {5}, [1], [], [0], []},
      {{3, 5}, {5, 4}, [1], [], [0], []},
      {{5, 3}, {5, 4}, [0], [], [0], []},
      {{2, 3, 4}, {2, 4, 5}, [2], [0], [1], [0]},
      {{2, 3, 4}, {4, 2}, [2, 0], [], [0, 1], []},
      {{3}, {4}, [], [], [], []},
      {{}, {3, 2}, [], [], [], []},
      {{4, 2, 3}, {3, 2, 4}, [1, 2], [0], [1, 0], [2]},
      {{3, 257}, {257, 2}, [1], [], [0], []}
    ]

    types = [{:f, 32}, {:f, 64}, {:f, 16}, {:bf, 16}, {:s, 32}, {:u, 8}, {:s, 64}, {:c, 64}]

    for {sa, sb, ca, ba, cb, bb} = combo <- combos,
        type <- types,
        combo == hd(combos) or tuple_size(sa) < 3 or type in [{:f, 32}, {:s, 32}, {:f, 16}],
        Tuple.product(sa) < 300 or type in [{:f, 32}, {:s, 32}] do
      a = tensor(type, sa, :positive)
      b = tensor(type, sb, :positive)
      capture(["dot"], fn -> Nx.dot(a, ca, ba, b, cb, bb) end)
    end ++
      for {ta, tb} <- [{{:s, 32}, {:f, 32}}, {{:u, 8}, {:s, 8}}, {{:f, 16}, {:f, 32}}, {{:f, 32}, {:c, 64}}] do
        a = tensor(ta, {2, 3}, :positive)
        b = tensor(tb, {3, 2}, :positive)
        capture(["dot"], fn -> Nx.dot(a, b) end)
      end ++
      [
        capture(["dot"], fn ->
          Nx.dot(from_list([:nan, 1.0, :infinity, 0.0], {:f, 32}, {2, 2}), tensor({:f, 32}, {2, 2}, :positive))
        end),
        capture(["dot"], fn ->
          Nx.dot(tensor({:s, 8}, {4, 8}, :general), tensor({:s, 8}, {8, 3}, :general))
        end)
      ]
  end

  defp family_cases("sort") do
    for op <- [:sort, :argsort],
        type <- @real,
        opts <- [[], [axis: 0], [direction: :desc], [axis: 1, direction: :desc]] do
      t = from_list(data(type, 24, :special) |> Enum.shuffle(), type, {4, 6})
      opts = if op == :argsort and opts == [], do: [stable: true], else: opts
      capture([to_string(op)], fn -> apply(Nx, op, [t, opts]) end)
    end ++
      for op <- [:sort, :argsort],
          {type, shape, opts} <- [
            {{:f, 32}, {257}, []},
            {{:s, 32}, {257}, [direction: :desc]},
            {{:f, 32}, {}, []},
            {{:s, 32}, {2, 1, 3}, [axis: 1]},
            {{:u, 8}, {3, 5}, [axis: 1, type: :s64]},
            {{:s, 32}, {10}, [stable: true, direction: :desc]}
          ] do
        kind = if shape == {10}, do: :near_one, else: :general
        t = tensor(type, shape, kind)
        opts = if op == :sort, do: Keyword.drop(opts, [:type, :stable]), else: opts
        capture([to_string(op)], fn -> apply(Nx, op, [t, opts]) end)
      end
  end

  defp family_cases("cumulative") do
    for op <- [:cumulative_sum, :cumulative_product, :cumulative_min, :cumulative_max],
        type <- @all,
        opts <- [[], [axis: 1, reverse: true]] do
      kind =
        case op do
          :cumulative_sum -> :positive
          :cumulative_product -> :near_one
          _ -> :special
        end

      t = tensor(type, {4, 6}, kind)
      capture([to_string(op)], fn -> apply(Nx, op, [t, opts]) end)
    end ++
      for op <- [:cumulative_sum, :cumulative_max],
          {type, shape} <- [{{:f, 32}, {257}}, {{:s, 32}, {}}, {{:s, 64}, {2, 3, 4}}] do
        t = tensor(type, shape, :positive)
        capture([to_string(op)], fn -> apply(Nx, op, [t, [axis: -1]]) end)
      end
  end

  defp family_cases("window") do
    window_opts = [
      {{4, 5}, {2, 2}, []},
      {{4, 5}, {2, 3}, [strides: [2, 1]]},
      {{4, 5}, {3, 3}, [padding: :same]},
      {{4, 5}, {2, 2}, [padding: [{1, 0}, {0, 2}], strides: [1, 2]]},
      {{4, 5}, {2, 2}, [window_dilations: [2, 1]]},
      {{1, 3, 5}, {1, 2, 2}, [padding: :valid, strides: [1, 1, 2]]},
      {{7}, {3}, [padding: [{2, 2}]]},
      {{257}, {4}, [strides: [3]]}
    ]

    for op <- [:window_sum, :window_product, :window_max, :window_min],
        type <- @real ++ @complex,
        {{shape, win, opts}, i} <- Enum.with_index(window_opts),
        i < 4 or type in [{:f, 32}, {:s, 32}] do
      kind =
        case op do
          :window_sum -> :positive
          :window_product -> :near_one
          _ -> :special
        end

      t = tensor(type, shape, kind)
      capture([to_string(op)], fn -> apply(Nx, op, [t, win, opts]) end)
    end ++
      for op <- [:window_scatter_max, :window_scatter_min],
          type <- [{:f, 32}, {:f, 64}, {:s, 32}, {:u, 8}, {:f, 16}],
          {shape, win, opts, src_shape} <- [
            {{4, 6}, {2, 3}, [strides: [2, 3]], {2, 2}},
            {{4, 5}, {2, 2}, [strides: [1, 1]], {3, 4}},
            {{5, 5}, {3, 3}, [strides: [2, 2], padding: :same], {3, 3}}
          ] do
        t = tensor(type, shape, :general)
        src = tensor(type, src_shape, :positive)
        init = from_list([0], type, {})
        capture([to_string(op)], fn -> apply(Nx, op, [t, src, init, win, opts]) end)
      end
  end

  defp family_cases("conv") do
    cases = [
      {{1, 1, 5, 5}, {1, 1, 3, 3}, []},
      {{2, 3, 5, 4}, {4, 3, 2, 2}, [strides: [2, 1], padding: :same]},
      {{1, 2, 6}, {2, 2, 3}, [padding: [{1, 2}], input_dilation: 2]},
      {{1, 2, 7}, {4, 2, 2}, [kernel_dilation: [3]]},
      {{1, 4, 5}, {4, 2, 2}, [feature_group_size: 2]},
      {{2, 2, 5}, {4, 2, 2}, [batch_group_size: 2]},
      {{1, 5, 5, 2}, {3, 2, 2, 2}, [input_permutation: [0, 3, 1, 2], output_permutation: [0, 3, 1, 2]]},
      {{1, 1, 3, 3, 3}, {2, 1, 2, 2, 2}, [strides: 2, padding: :same]},
      {{1, 1, 257}, {1, 1, 4}, [strides: [3]]}
    ]

    for {{sa, sk, opts}, i} <- Enum.with_index(cases),
        type <- [{:f, 32}, {:f, 64}, {:f, 16}, {:s, 32}, {:c, 64}],
        i < 3 or type == {:f, 32} do
      a = tensor(type, sa, :positive)
      k = tensor(type, sk, :positive)
      capture(["conv"], fn -> Nx.conv(a, k, opts) end)
    end
  end

  defp family_cases("fft") do
    for op <- [:fft, :ifft],
        type <- [{:c, 64}, {:c, 128}, {:f, 32}],
        {shape, opts} <- [{{8}, []}, {{2, 5}, []}, {{3, 4}, [length: 6]}, {{3, 4}, [length: 2]}, {{1}, []}] do
      t = tensor(type, shape, :unit)
      capture([to_string(op)], fn -> apply(Nx, op, [t, opts]) end)
    end ++
      for {op, type, shape, opts} <- [
            {:fft2, {:c, 64}, {4, 4}, []},
            {:fft2, {:c, 64}, {2, 3, 4}, [lengths: [4, 2]]},
            {:ifft2, {:c, 128}, {3, 4}, []},
            {:rfft, {:f, 32}, {8}, []},
            {:rfft, {:f, 64}, {2, 6}, [length: 5]},
            {:irfft, {:c, 64}, {5}, []},
            {:irfft, {:c, 128}, {2, 3}, [length: 6]},
            {:fft, {:c, 64}, {257}, []}
          ] do
        t = tensor(type, shape, :unit)
        capture([to_string(op)], fn -> apply(Nx, op, [t, opts]) end)
      end
  end

  defp family_cases("linalg") do
    spd = fn type, n ->
      a = tensor(type, {n, n}, :unit)
      a |> Nx.dot([1], a, [1]) |> Nx.add(Nx.eye(n, type: type) |> Nx.multiply(n))
    end

    tri = fn type, n, lower ->
      a = tensor(type, {n, n}, :unit) |> Nx.add(Nx.eye(n, type: type) |> Nx.multiply(3))
      if lower, do: Nx.tril(a), else: Nx.triu(a)
    end

    ts =
      for type <- [{:f, 32}, {:f, 64}],
          {n, bshape, opts} <- [
            {3, {3}, []},
            {3, {3, 2}, [lower: true, left_side: true]},
            {4, {2, 4}, [left_side: false]},
            {3, {3, 3}, [lower: false]},
            {3, {3, 2}, [transform_a: :transpose]}
          ] do
        lower = Keyword.get(opts, :lower, true)
        a = tri.(type, n, lower)
        b = tensor(type, bshape, :unit)
        capture(["triangular_solve"], fn -> Nx.LinAlg.triangular_solve(a, b, opts) end)
      end

    blocks =
      for type <- [{:f, 32}, {:f, 64}], n <- [2, 3, 4] do
        a = spd.(type, n)
        b = tensor(type, {n}, :unit)

        [
          capture(["linalg_cholesky"], fn -> Nx.LinAlg.cholesky(a) end),
          capture(["linalg_solve"], fn -> Nx.LinAlg.solve(a, b) end),
          capture(["linalg_determinant"], fn -> Nx.LinAlg.determinant(a) end)
        ]
      end

    [ts, blocks]
  end

  defp specials_or_ints({k, _} = type) when k in [:u, :s], do: [0, 1, 2, 3, 4, 5] ++ Tuple.to_list(int_range(type))
  defp specials_or_ints(type), do: specials(type)

  # All pairs of `col` ({n, 1}) and `row` ({n}); values of `row` on which the op raises for
  # some element of `col` are dropped (and then values of `col`).
  defp cross_case(fun, keep, col, row) do
    if runs?(fn -> fun.(col, row) end) do
      capture(keep, fn -> fun.(col, row) end)
    else
      cl = to_list_flat(col)
      rl = to_list_flat(row)
      ok? = fn a, b -> runs?(fn -> fun.(from_list([a], col.type, {}), from_list([b], row.type, {})) end) end
      rl = Enum.filter(rl, fn b -> Enum.all?(cl, &ok?.(&1, b)) end)
      cl = Enum.filter(cl, fn a -> Enum.all?(rl, &ok?.(a, &1)) end)

      if rl == [] or cl == [] do
        []
      else
        col = from_list(cl, col.type, {length(cl), 1})
        row = from_list(rl, row.type, {length(rl)})
        capture(keep, fn -> fun.(col, row) end)
      end
    end
  end
end
