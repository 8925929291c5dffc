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
  numbers are (re, im) pairs. Types use Nx's spelling: u8 u16 u32 u64 s8 s16 s32 s64 f8
  f8_e4m3fn f16 bf16 f32 f64 c64 c128.

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
    * tensor start indices of `slice`/`put_slice`: one scalar input each after the data inputs,
      `{"dynamic_axes": [axes]}`, 0 in `start_indices` at those axes
    * `Nx.Block.TopK`: `top_k`, input `[t]`, `{"k"}`, expected the indices (the values are a
      take_along_axis of them)
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

  ## Reference values

  Expected values are Nx.BinaryBackend's, except for expm1, log1p, cbrt and erf_inv, whose
  Nx.BinaryBackend formulas lose precision (`exp(x) - 1`, `log(1 + x)`, `x ** (1/3)`, a
  single-precision erf_inv polynomial even for f64): for finite elements those are the same
  functions evaluated accurately in f64 (`NxVulkan.Fixtures.Reference`), rounded to the
  output type as Nx writes it.

  Inputs on which Nx.BinaryBackend (through Complex) departs from C99/IEEE 754 are left out
  like those on which it raises: x / +-Inf and Inf / -0.0, tanh(+-Inf) (NaN there),
  atan2(y, -Inf) (+pi for every finite y), pow with a non-finite exponent or a NaN base
  (pow(1, NaN) = NaN, pow(0.5, -Inf) = 0 there), complex math and complex division with an
  infinite or NaN component (Complex's own rules, not C99 Annex G), and sign of a complex
  number (compared with 0 as an Erlang term there: always 1; the engine gives z / |z|).

  ## Tolerances (`tolerance_ulp`, in ulps of the output type)

  0 (bit-exact; NaN matches any NaN; the sign of zero must match) for integer results and for
  add, subtract, multiply, divide, remainder, sqrt, abs, negate, min/max, rounding ops,
  comparisons, casts, select/clip, shape/index/sort ops and all data movement. Others:

    * transcendental (exp, expm1, log, log1p, sigmoid, trig, hyperbolic, rsqrt, cbrt, pow,
      atan2, phase): 4 (f16, f8, f8_e4m3fn: 1)
    * erf, erfc: 8; erf_inv: 32 (f16, f8, f8_e4m3fn: 1 and 2)
    * complex pow on c128: 1024 (|y log x| reaches hundreds in the cases: cos and sin of it are
      that ill-conditioned, in Nx.BinaryBackend's value too)
    * complex multiply 2, complex divide / sqrt / abs 4 (complex components are compared in
      ulps of the larger-magnitude component of the expected value)
    * sum, product, cumulative sums/products, window sums/products, dot, conv, all_close:
      16 for f32/f64 (inputs chosen without cancellation), 2 for f16
    * cumulative sums/products of f16/bf16: 8 (Nx rounds every step of its scan in the
      narrow type; the engine accumulates in f32 and rounds once)
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

  def unwrap(tuple) when is_tuple(tuple),
    do: tuple |> Tuple.to_list() |> unwrap() |> List.to_tuple()

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

  alias NxVulkan.Fixtures.{Recorder, Tolerance}

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
      cases = family |> NxVulkan.Fixtures.Cases.family_cases() |> List.flatten() |> Enum.uniq()
      path = Path.join(dir, family <> ".json")
      write_file(path, cases)

      Mix.shell().info(
        "#{family}: #{length(cases)} cases, #{File.stat!(path).size} bytes" <>
          " (#{Process.get(:nxv_dropped)} computations dropped)"
      )
    end

    :ok
  end

  def nx_version, do: to_string(Application.spec(:nx, :vsn))

  def write_file(path, lines) do
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
  def runs?(fun) do
    try do
      fun.()
      true
    rescue
      _ -> false
    end
  end

  # Callback arguments become {op, inputs, options} through Nx.Vulkan.OpArgs, the encoding
  # the backend uses too.
  # Nx.Block.TopK: the engine's top_k gives the indices (the backend gathers the values).
  def to_case({:block, [%Nx.Block.TopK{k: k}, _output, [%Nx.Tensor{} = t], _fun], {_, indices}}) do
    build_case("top_k", indices, [t], [k: k], indices)
  end

  def to_case({:block, [struct, _output, args, _fun], result}) do
    with %Nx.Tensor{} <- result,
         true <- Enum.all?(args, &match?(%Nx.Tensor{}, &1)) do
      {op, inputs, opts} = Nx.Vulkan.OpArgs.encode_block(struct, args)
      build_case(Atom.to_string(op), result, inputs, opts, result)
    else
      _ -> nil
    end
  end

  # Tensor start indices travel as inputs after the data inputs (option dynamic_axes).
  def to_case({name, [out, t, starts | rest], result}) when name in [:slice, :put_slice] do
    if Enum.any?(starts, &match?(%Nx.Tensor{}, &1)) do
      {ints, axes, tensors} = Nx.Vulkan.OpArgs.dynamic_starts(starts)

      {inputs, opts} =
        case {name, rest} do
          {:slice, [lengths, strides]} ->
            {[t | tensors], [start_indices: ints, lengths: lengths, strides: strides]}

          {:put_slice, [slice]} ->
            {[t, slice | tensors], [start_indices: ints]}
        end

      build_case(Atom.to_string(name), out, inputs, opts ++ [dynamic_axes: axes], result)
    else
      encoded_case(name, [out, t, starts | rest], result)
    end
  end

  def to_case({name, args, result}), do: encoded_case(name, args, result)

  defp encoded_case(name, [out | rest], result) do
    case Nx.Vulkan.OpArgs.encode(name, rest) do
      :skip -> nil
      {op, inputs, opts} -> build_case(Atom.to_string(op), out, inputs, opts, result)
    end
  end

  def build_case(op, out, inputs, opts, result) do
    cond do
      not match?(%Nx.Tensor{}, result) -> nil
      not Enum.all?(inputs, &match?(%Nx.Tensor{}, &1)) -> nil
      Enum.any?([out, result | inputs], &(type_name(&1.type) == nil)) -> nil
      contains_tensor?(opts) -> nil
      op == "constant" and match?({_, %Complex{}}, List.keyfind(opts, :value, 0)) -> nil
      true -> %{op: op, out: out, inputs: inputs, opts: opts, result: refine(op, inputs, result)}
    end
  end

  defp refine(op, inputs, result), do: NxVulkan.Fixtures.Reference.refine(op, inputs, result)

  def contains_tensor?(%Nx.Tensor{}), do: true
  def contains_tensor?(%Complex{}), do: false
  def contains_tensor?(list) when is_list(list), do: Enum.any?(list, &contains_tensor?/1)
  def contains_tensor?(t) when is_tuple(t), do: t |> Tuple.to_list() |> contains_tensor?()

  def contains_tensor?(m) when is_map(m) and not is_struct(m),
    do: m |> Map.values() |> contains_tensor?()

  def contains_tensor?(_), do: false

  ## Encoding

  def encode_case(%{op: op, out: out, inputs: inputs, opts: opts, result: result}) do
    in_types = Enum.map(inputs, & &1.type)

    json(
      {:obj,
       [
         {"op", op},
         {"out", {:obj, [{"type", type_name(out.type)}, {"shape", Tuple.to_list(out.shape)}]}},
         {"inputs", Enum.map(inputs, &tensor_json/1)},
         {"options", term_json(opts, true)},
         {"expected", tensor_json(result)},
         {"tolerance_ulp", Tolerance.tolerance(op, result.type, in_types)}
       ]}
    )
  end

  def safe_encode(c) do
    c |> encode_case() |> IO.iodata_to_binary()
  rescue
    _ ->
      Process.put(:nxv_dropped, Process.get(:nxv_dropped, 0) + 1)
      nil
  end

  def tensor_json(t) do
    {:obj,
     [
       {"type", type_name(t.type)},
       {"shape", Tuple.to_list(t.shape)},
       {"data", Base.encode16(Nx.to_binary(t), case: :lower)}
     ]}
  end

  def type_name({:u, n}), do: "u#{n}"
  def type_name({:s, n}), do: "s#{n}"
  def type_name({:f, n}) when n in [8, 16, 32, 64], do: "f#{n}"
  def type_name({:f8_e4m3fn, 8}), do: "f8_e4m3fn"
  def type_name({:bf, 16}), do: "bf16"
  def type_name({:c, n}), do: "c#{n}"
  def type_name(_), do: nil

  # Elixir term -> JSON value, per the convention in the task's moduledoc.
  def term_json(list, _top) when is_list(list) and list != [] do
    if Enum.all?(list, &match?({k, _} when is_atom(k) or is_binary(k), &1)) do
      {:obj, Enum.map(list, fn {k, v} -> {to_string(k), term_json(v, false)} end)}
    else
      Enum.map(list, &term_json(&1, false))
    end
  end

  def term_json([], true), do: {:obj, []}
  def term_json([], false), do: []

  def term_json(t, _) when is_tuple(t),
    do: t |> Tuple.to_list() |> Enum.map(&term_json(&1, false))

  def term_json(nil, _), do: nil
  def term_json(b, _) when is_boolean(b), do: b
  def term_json(a, _) when is_atom(a), do: Atom.to_string(a)
  def term_json(n, _) when is_number(n), do: n
  def term_json(s, _) when is_binary(s), do: s

  def json({:obj, pairs}),
    do: ["{", Enum.map_intersperse(pairs, ", ", fn {k, v} -> [json(k), ": ", json(v)] end), "}"]

  def json(list) when is_list(list), do: ["[", Enum.map_intersperse(list, ", ", &json/1), "]"]
  def json(nil), do: "null"
  def json(true), do: "true"
  def json(false), do: "false"
  def json(n) when is_integer(n), do: Integer.to_string(n)
  def json(f) when is_float(f), do: Float.to_string(f)
  def json(s) when is_binary(s), do: [?", String.replace(s, ~S("), ~S(\")), ?"]

  ## Data

  def neg_zero,
    do:
      (
        <<x::float-64>> = <<1::1, 0::63>>
        x
      )

  # 8-bit floats: the smallest code above zero, the largest finite value, and neighbours that
  # the format cannot tell apart from their rounded values.
  def specials({:f, 8}),
    do: common_specials() ++ [1.52587890625e-05, 57344.0, -57344.0, 9.0, 10.0, 11.0]

  def specials({:f8_e4m3fn, 8}),
    do: common_specials() ++ [0.001953125, 448.0, -448.0, 17.0, 18.0, 19.0]

  def specials({:f, 16}),
    do:
      common_specials() ++
        [6.103515625e-05, 5.960464477539063e-08, 65504.0, -65504.0, 2048.0, 2049.0]

  def specials({:bf, 16}),
    do:
      common_specials() ++
        [
          1.1754943508222875e-38,
          9.183549615799121e-41,
          3.3895313892515355e38,
          -3.3895313892515355e38,
          256.0,
          257.0
        ]

  def specials({:f, 32}),
    do:
      common_specials() ++
        [
          1.1754943508222875e-38,
          1.401298464324817e-45,
          3.4028234663852886e38,
          -3.4028234663852886e38,
          16_777_216.0,
          16_777_217.0
        ]

  def specials({:f, 64}),
    do:
      common_specials() ++
        [
          2.2250738585072014e-308,
          5.0e-324,
          1.7976931348623157e308,
          -1.7976931348623157e308,
          9_007_199_254_740_992.0,
          1.0e20
        ]

  def common_specials,
    do: [
      :nan,
      :infinity,
      :neg_infinity,
      0.0,
      neg_zero(),
      1.0,
      -1.0,
      0.5,
      -0.5,
      1.5,
      2.5,
      -2.5,
      3.0e-6
    ]

  def int_range({:u, n}), do: {0, Bitwise.bsl(1, n) - 1}
  def int_range({:s, n}), do: {-Bitwise.bsl(1, n - 1), Bitwise.bsl(1, n - 1) - 1}

  def uniform(lo, hi), do: lo + :rand.uniform() * (hi - lo)
  def rand_int(lo, hi), do: lo + :rand.uniform(hi - lo + 1) - 1

  # One random value of `type` for a data `kind`:
  #   :general  moderate values of every sign and magnitude (ints: small and full-range)
  #   :plain    finite, nonzero, moderate
  #   :positive in [0.1, 10] (ints: 1..10)
  #   :near_one in [0.6, 1.6] (ints: 1..2)
  #   :unit     in (-1, 1) (ints: 0..1)
  #   :bool     0 or 1
  def value({:c, _}, kind) do
    Complex.new(value({:f, 64}, kind), value({:f, 64}, kind))
  end

  def value({k, _} = type, kind) when k in [:u, :s] do
    {lo, hi} = int_range(type)

    case kind do
      :general ->
        if :rand.uniform() < 0.6,
          do: rand_int(max(lo, -100), min(hi, 100)),
          else: Enum.random([lo, hi, 0, 1, lo + 1, hi - 1, rand_int(lo, hi), rand_int(lo, hi)])

      :plain ->
        v = rand_int(1, 20)
        if lo < 0 and :rand.uniform() < 0.5, do: -v, else: v

      :positive ->
        rand_int(1, 10)

      :near_one ->
        rand_int(1, 2)

      :unit ->
        rand_int(0, 1)

      :bool ->
        rand_int(0, 1)
    end
  end

  def value(_float, kind) do
    case kind do
      :general ->
        m = :rand.normal() * :math.pow(10, rand_int(-3, 3))
        Float.round(m, 6)

      :plain ->
        v = uniform(0.1, 100.0)
        if :rand.uniform() < 0.5, do: -v, else: v

      :positive ->
        uniform(0.1, 10.0)

      :near_one ->
        uniform(0.6, 1.6)

      :unit ->
        uniform(-0.99, 0.99)

      :bool ->
        rand_int(0, 1) * 1.0
    end
  end

  def values(type, n, kind), do: for(_ <- 1..n//1, do: value(type, kind))

  # :special data: every special value of the type first (floats and complex), then random.
  def data(type, n, :special) do
    s =
      case type do
        {:c, 64} ->
          Enum.map(specials({:f, 32}) |> Enum.filter(&is_float/1), &Complex.new(&1, 0.5))

        {:c, 128} ->
          Enum.map(specials({:f, 64}) |> Enum.filter(&is_float/1), &Complex.new(-0.25, &1))

        {k, _} when k in [:f, :bf, :f8_e4m3fn] ->
          specials(type)

        _ ->
          {lo, hi} = int_range(type)
          [lo, hi, 0, 1, lo + 1, hi - 1]
      end

    s = Enum.take(s, n)
    s ++ values(type, n - length(s), :general)
  end

  def data(type, n, kind), do: values(type, n, kind)

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

  def to_list_flat(t), do: t |> Nx.backend_transfer(Nx.BinaryBackend) |> Nx.to_flat_list()

  ## Repair: replace elements on which Nx.BinaryBackend raises

  # Elementwise (unary or same-shape n-ary) computation `fun` on `inputs` (same shape):
  # elements where it raises get replacement values (:positive kind).
  def repair(fun, inputs) do
    if runs?(fn -> apply(fun, inputs) end) do
      inputs
    else
      lists = Enum.map(inputs, &to_list_flat/1)
      n = length(hd(lists))

      fixed =
        for i <- 0..(n - 1)//1 do
          point =
            for {l, t} <- Enum.zip(lists, inputs), do: from_list([Enum.at(l, i)], t.type, {})

          if runs?(fn -> apply(fun, point) end),
            do: Enum.map(lists, &Enum.at(&1, i)),
            else: replacement(fun, inputs)
        end

      cols = fixed |> Enum.zip() |> Enum.map(&Tuple.to_list/1)
      for {col, t} <- Enum.zip(cols, inputs), do: from_list(col, t.type, t.shape)
    end
  end

  # Values (one per input) on which `fun` runs: moderate positive, then in (0, 1).
  def replacement(fun, inputs) do
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
end
