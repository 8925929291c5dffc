defmodule NxVulkan.Fixtures.StructuralCases do
  @moduledoc false
  # The cases of the structural fixture families (reductions, shapes, indexing, creation, dot,
  # sort, cumulative, window, conv, fft, linalg); the elementwise ones are in
  # NxVulkan.Fixtures.Cases, which hands these over.
  import NxVulkan.Fixtures
  alias NxVulkan.Fixtures.{Recorder, Undefined}

  # The same type lists as the elementwise families.
  @types NxVulkan.Fixtures.Cases.types()
  @ints @types.ints
  @floats @types.floats
  @complex @types.complex
  @f8 @types.f8
  @all @ints ++ @floats ++ @complex
  @real @ints ++ @floats

  def family_cases("reduce") do
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
        capture([to_string(op)], fn -> Undefined.reduce_fun(op).(t, opts) end)
      end

    special_sums =
      for op <- [:sum, :product, :all, :any], type <- @floats ++ @ints do
        t = tensor(type, {4, 5}, :special)
        capture([to_string(op)], fn -> Undefined.reduce_fun(op).(t, axes: [1]) end)
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
        opts = if op == :argmax, do: if(opts == [], do: [], else: [axis: 1]), else: opts
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
        for op <- [:argmax, :argmin],
            {shape, opts} <- [{{}, []}, {{2, 3, 4}, [axis: 2]}, {{1, 1}, [axis: 1]}] do
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

  def family_cases("shape") do
    per_type =
      for type <- @all do
        t = tensor(type, {2, 3, 4}, :special)

        [
          capture(["reshape"], fn -> Nx.reshape(t, {4, 6}) end),
          capture(["transpose"], fn -> Nx.transpose(t, axes: [2, 0, 1]) end),
          capture(["reverse"], fn -> Nx.reverse(t, axes: [0, 2]) end),
          capture(["broadcast"], fn ->
            Nx.broadcast(Nx.slice(t, [0, 0, 0], [1, 3, 1]) |> Nx.squeeze(), {2, 3})
          end),
          capture(["slice"], fn -> Nx.slice(t, [0, 1, 1], [2, 2, 3], strides: [1, 1, 2]) end),
          capture(["pad"], fn ->
            Nx.pad(t, from_list([0], type, {}), [{1, 0, 0}, {0, 1, 1}, {-1, 2, 0}])
          end),
          capture(["concatenate"], fn -> Nx.concatenate([t, t], axis: 1) end),
          capture(["stack"], fn -> Nx.stack([t, t], axis: 1) end),
          capture(["put_slice"], fn ->
            Nx.put_slice(t, [0, 1, 2], tensor(type, {2, 2, 2}, :general))
          end),
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
      capture(["pad"], fn ->
        Nx.pad(f.({3, 5}), from_list([1.5], {:f, 32}, {}), [{-1, -2, 0}, {0, 0, 2}])
      end),
      capture(["pad"], fn -> Nx.pad(f.({}), from_list([1.5], {:f, 32}, {}), []) end),
      capture(["pad"], fn ->
        Nx.pad(s.({2, 2}), from_list([-1], {:s, 32}, {}), [{0, 0, 3}, {1, 1, 0}])
      end),
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
      capture(["reverse"], fn -> Nx.reverse(f.({})) end)
    ]

    # Start indices given as tensors (dynamic_axes): every index type, values clamped as Nx
    # clamps them (negative, past the end, the type's largest).
    dynamic =
      for it <- @ints, v <- dynamic_starts(it) do
        i = from_list([v], it, {})
        t = tensor({:f, 32}, {5, 6})

        [
          capture(["slice"], fn -> Nx.slice(t, [i, 1], [2, 3]) end),
          capture(["slice"], fn -> Nx.slice(t, [2, i], [3, 4], strides: [2, 3]) end),
          capture(["put_slice"], fn -> Nx.put_slice(t, [1, i], s.({2, 3})) end)
        ]
      end

    [per_type, misc, dynamic]
  end

  def family_cases("index") do
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
            Nx.indexed_add(
              t,
              idx.([0, 0, 3, 2, 0, 0], {3, 2}, {:s, 32}),
              tensor(type, {3}, :positive)
            )
          end),
          capture(["indexed_put"], fn ->
            Nx.indexed_put(
              t,
              idx.([0, 1, 3, 2, 1, 2], {3, 2}, {:s, 32}),
              tensor(type, {3}, :general)
            )
          end)
        ]
      end

    f = fn shape -> tensor({:f, 32}, shape, :general) end
    s = fn shape -> tensor({:s, 32}, shape, :general) end

    misc = [
      capture(["gather"], fn ->
        Nx.gather(f.({3, 4, 2}), idx.([1, 0, 2, 1], {2, 2}, {:s, 32}), axes: [0, 1])
      end),
      capture(["gather"], fn ->
        Nx.gather(f.({3, 4, 2}), idx.([3, 0, 1], {3, 1}, {:u, 8}), axes: [1])
      end),
      capture(["gather"], fn -> Nx.gather(f.({257}), idx.([256, 0, 128], {3, 1}, {:s, 64})) end),
      capture(["gather"], fn ->
        Nx.gather(f.({3, 4}), idx.([5, 1, -1, 2, 2, 9], {3, 2}, {:s, 32}))
      end),
      capture(["take"], fn -> Nx.take(s.({3, 5}), idx.([4, 0, 2], {3}, {:u, 32}), axis: 1) end),
      capture(["take"], fn -> Nx.take(s.({3, 5}), idx.([1], {}, {:s, 32}), axis: 0) end),
      capture(["take"], fn -> Nx.take(f.({257}), idx.([256, 255, 0, 1], {2, 2}, {:s, 32})) end),
      capture(["take_along_axis"], fn ->
        Nx.take_along_axis(f.({2, 3}), idx.([0, 0, 1, 1, 1, 0], {3, 2}, {:s, 32}), axis: 0)
      end),
      capture(["indexed_add"], fn ->
        Nx.indexed_add(f.({3, 4, 2}), idx.([0, 1, 0, 1, 2, 3], {3, 2}, {:s, 32}), f.({3, 2}),
          axes: [0, 1]
        )
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
        Nx.indexed_put(f.({3, 4, 2}), idx.([0, 1, 2, 3], {2, 2}, {:u, 8}), f.({2, 2}),
          axes: [0, 1]
        )
      end),
      capture(["indexed_put"], fn ->
        Nx.indexed_put(s.({5}), idx.([2, 2], {2, 1}, {:s, 32}), s.({2}))
      end)
    ]

    [per_type, misc]
  end

  def family_cases("creation") do
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
          capture(["eye"], fn -> Nx.eye({1, 1}, type: :s32) end)
        ]

    constant =
      for type <- @real ++ @complex, v <- [0, 1, -1, 2.5, 300, :nan, :infinity, :neg_infinity] do
        capture(["constant"], fn -> Nx.broadcast(Nx.tensor(v, type: type), {2, 3}) end) ++
          capture(["constant"], fn -> Nx.broadcast(v, {2, 2}) |> Nx.as_type(type) end)
      end ++
        for v <- [1, 2.0, -0.0] do
          capture(["constant"], fn ->
            Recorder.constant(
              %Nx.Tensor{type: {:f, 32}, shape: {3}, names: [nil], data: nil},
              v,
              []
            )
          end)
        end

    [iota, eye, constant]
  end

  def family_cases("dot") do
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
      for {ta, tb} <- [
            {{:s, 32}, {:f, 32}},
            {{:u, 8}, {:s, 8}},
            {{:f, 16}, {:f, 32}},
            {{:f, 32}, {:c, 64}}
          ] do
        a = tensor(ta, {2, 3}, :positive)
        b = tensor(tb, {3, 2}, :positive)
        capture(["dot"], fn -> Nx.dot(a, b) end)
      end ++
      [
        capture(["dot"], fn ->
          Nx.dot(
            from_list([:nan, 1.0, :infinity, 0.0], {:f, 32}, {2, 2}),
            tensor({:f, 32}, {2, 2}, :positive)
          )
        end),
        capture(["dot"], fn ->
          Nx.dot(tensor({:s, 8}, {4, 8}, :general), tensor({:s, 8}, {8, 3}, :general))
        end)
      ]
  end

  def family_cases("sort") do
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
      end ++
      for type <- @real ++ @f8, k <- [1, 3, 6] do
        t = from_list(data(type, 24, :special) |> Enum.shuffle(), type, {4, 6})
        capture(["top_k"], fn -> Nx.top_k(t, k: k) end)
      end ++
      [
        capture(["top_k"], fn ->
          t = from_list([1.0, :nan, 1.0, 0.0, -0.0, :nan, 2.0, 1.0], {:f, 32}, {8})
          Nx.top_k(t, k: 8)
        end),
        capture(["top_k"], fn -> Nx.top_k(tensor({:s, 32}, {2, 3, 257}), k: 5) end)
      ]
  end

  def family_cases("cumulative") do
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

  def family_cases("window") do
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

        capture([to_string(op)], fn ->
          Undefined.window_scatter_fun(op).(t, src, init, win, opts)
        end)
      end
  end

  def family_cases("conv") do
    cases = [
      {{1, 1, 5, 5}, {1, 1, 3, 3}, []},
      {{2, 3, 5, 4}, {4, 3, 2, 2}, [strides: [2, 1], padding: :same]},
      {{1, 2, 6}, {2, 2, 3}, [padding: [{1, 2}], input_dilation: 2]},
      {{1, 2, 7}, {4, 2, 2}, [kernel_dilation: [3]]},
      {{1, 4, 5}, {4, 2, 2}, [feature_group_size: 2]},
      {{2, 2, 5}, {4, 2, 2}, [batch_group_size: 2]},
      {{1, 5, 5, 2}, {3, 2, 2, 2},
       [input_permutation: [0, 3, 1, 2], output_permutation: [0, 3, 1, 2]]},
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

  def family_cases("fft") do
    for op <- [:fft, :ifft],
        type <- [{:c, 64}, {:c, 128}, {:f, 32}],
        {shape, opts} <- [
          {{8}, []},
          {{2, 5}, []},
          {{3, 4}, [length: 6]},
          {{3, 4}, [length: 2]},
          {{1}, []}
        ] do
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

  def family_cases("linalg") do
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

  # Dynamic slice starts of an index type: negative, in range, the type's extremes.
  defp dynamic_starts({:u, bits}), do: [0, 3, Bitwise.bsl(1, bits) - 1]

  defp dynamic_starts({:s, bits}),
    do: [-1, 2, Bitwise.bsl(1, bits - 1) - 1, -Bitwise.bsl(1, bits - 1)]
end
