defmodule Nx.Vulkan.CompilerControlFlowTest do
  # Nx.Vulkan.Compiler on control flow and host code: loops unrolled, run a trip or a block of
  # trips per program, or through the Evaluator; conds as selects; hooks, runtime_call and
  # refused ops as host steps. Each against the Evaluator on Nx.Vulkan.Backend, bit for bit.
  use Nx.Vulkan.Case, async: false

  import Nx.Defn
  import Nx.Vulkan.Test.CompilerHelpers
  alias Nx.Vulkan.Compiler

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    :rand.seed(:exsss, {7, 8, 9})
    :ok
  end

  defn double_thrice(x) do
    {x, _} =
      while {x, i = 0}, i < 3 do
        {x * 2, i + 1}
      end

    x
  end

  defn abs_of_sum_sign(x) do
    if Nx.sum(x) > 0, do: x, else: -x
  end

  defn newton_sqrt(a) do
    {x, _, _} =
      while {x = a, a, i = 0}, i < 50 and Nx.any(Nx.abs(x * x - a) > 1.0e-5 * a) do
        {(x + a / x) / 2, a, i + 1}
      end

    x
  end

  defn nested_loops(x) do
    {x, _} =
      while {x, i = 0}, i < 3 do
        {x, _, _} =
          while {x, i, j = 0}, j < i do
            {x * 1.5 + j, i, j + 1}
          end

        {x - 1, i + 1}
      end

    x
  end

  defn nested_fixed_loops(x) do
    {x, _} =
      while {x, i = 0}, i < 3 do
        {x, _} = while {x, j = 10}, j > 7, do: {x * 1.5 + j, j - 1}
        {x - 1, i + 1}
      end

    x
  end

  defn never_runs(x) do
    {x, _} = while {x, i = 5}, i < 3, do: {x * 2, i + 1}
    x
  end

  defn loop_between_products(x, w) do
    h = Nx.dot(x, w)
    {h, _, _} = while {h, w, i = 0}, i < 4, do: {Nx.tanh(Nx.dot(h, w)), w, i + 1}
    Nx.sum(h, axes: [1]) + Nx.exp(x[[.., 0]])
  end

  defn halve_until_small(x) do
    {x, n} = while {x, n = 0}, Nx.sum(Nx.abs(x)) > 1, do: {x / 2, n + 1}
    {x, n}
  end

  defn loop_with_cond(x) do
    {x, _} =
      while {x, i = 0}, i < 4 do
        x = if Nx.sum(x) > 10, do: x - 3, else: x * 2
        {x, i + 1}
      end

    x
  end

  defn three_way(x, t) do
    cond do
      t < 0 -> {x * t, Nx.sum(x)}
      t < 1 -> {Nx.exp(x), Nx.reduce_max(x)}
      true -> {x - t, t}
    end
  end

  defn hooked_branch(x) do
    if Nx.sum(x) < 0, do: io_call(x, :branch) * 2, else: -x
  end

  defn halving_with_hooked_cond(x) do
    {x, _} =
      while {x, i = 0}, Nx.sum(x) > 1 do
        {hooked_branch(x / 2) |> Nx.abs(), i + 1}
      end

    x
  end

  # A branch of more nodes than a cond computes whole (Branches' 256): a host step.
  deftransformp many_ops(x),
    do: Enum.reduce(1..150, x, fn i, acc -> Nx.multiply(Nx.sin(acc), 1 + i / 1000) end)

  defn big_branches(x, t) do
    cond do
      t < 0 -> {many_ops(x) + t, Nx.sum(x)}
      t < 1 -> {Nx.exp(x) * t, 7}
      true -> {many_ops(x * t), Nx.reduce_max(x) + t}
    end
  end

  # A cond in the body of a loop whose predicate the host reads, a branch running a loop.
  defn halve_or_count(x) do
    {x, _} =
      while {x, i = 0}, Nx.sum(x) > 1 do
        x =
          if Nx.sum(x) > 20 do
            {y, _, _} = while {y = x, j = 0, n = i + 1}, j < n, do: {y / 2, j + 1, n}
            y
          else
            many_ops(x) * 0 + x - 0.75
          end

        {x, i + 1}
      end

    x
  end

  defn grad_big_branches(x, t) do
    grad(x, fn x ->
      {a, _} = big_branches(x, t)
      Nx.sum(a)
    end)
  end

  defn counted_with_big_cond(x) do
    {x, _} =
      while {x, i = 0}, i < 3 do
        x = if Nx.sum(x) > 0, do: many_ops(x), else: x + 1
        {x, i + 1}
      end

    x
  end

  defn count_down(x, acc) do
    {_, acc, n} = while {x, acc, n = 0}, x > 0, do: {x - 1, acc * 1.5 - n, n + 1}
    {acc, n}
  end

  defn add_table_entries(x) do
    table = Nx.tensor([3, 5, 7, 11])
    {x, _} = while {x, i = 0}, i < 3, do: {x + table[i], i + 1}
    x
  end

  defn sin_thrice_sum(x) do
    {y, _} = while {y = x, i = 0}, i < 3, do: {Nx.sin(y) * 1.5, i + 1}
    Nx.sum(y)
  end

  defn grad_through_loop(x), do: grad(x, &sin_thrice_sum/1)

  # NUTS-style tree doubling on a harmonic oscillator: leapfrog trajectories of 1, 2, 4...
  # steps (an inner loop whose trips the outer loop's state sets) until a U-turn.
  defn tree_doubling(q0, p0) do
    {q, p, depth, _, _} =
      while {q = q0, p = p0, depth = 0, p0, going = 1}, going == 1 and depth < 8 do
        {q, p, _, _} =
          while {q, p, j = 0, steps = Nx.left_shift(1, depth)}, j < steps do
            p = p - 0.05 * q
            q = q + 0.1 * p
            {q, p - 0.05 * q, j + 1, steps}
          end

        # The momentum has turned against its start.
        uturn = Nx.sum(p * p0) < 0
        {q, p, depth + 1, p0, Nx.select(uturn, 0, 1)}
      end

    {q, p, depth}
  end

  defn long_count(x) do
    {x, _} = while {x, i = 0}, i < 2000, do: {x + 1, i + 1}
    x
  end

  # A logistic regression's log-density and HMC's leapfrog steps on it (bench/hmc.exs' body).
  defn log_density(q, x, y) do
    z = Nx.dot(x, q)
    Nx.sum(y * z - (Nx.max(z, 0) + Nx.log1p(Nx.exp(-Nx.abs(z))))) - 0.5 * Nx.sum(q * q)
  end

  defn leapfrogs(q, p, x, y) do
    {q, p, _, _, _} =
      while {q, p, x, y, i = 0}, i < 12 do
        p = p + 0.005 * grad(q, &log_density(&1, x, y))
        q = q + 0.01 * p
        p = p + 0.005 * grad(q, &log_density(&1, x, y))
        {q, p, x, y, i + 1}
      end

    {q, p}
  end

  defn scaled_counter(x) do
    {x, i} =
      while {x, i = 3}, i <= 30 do
        {Nx.cos(x) * Nx.as_type(i, :f32), i + 1}
      end

    {x, i}
  end

  # A loop state the body passes through unchanged, from a literal.
  defn scaled_with_constant(x) do
    {x, c, _} = while {x, c = Nx.tensor([2.0, 3.0]), i = 0}, i < 10, do: {x * c, c, i + 1}
    {x, c}
  end

  describe "loops" do
    test "a fixed loop of small tensors runs every trip in one launch (the loop kernel), the Evaluator's bits" do
      Nx.Vulkan.with_host_fallback(:raise, fn ->
        x = random({40, 6}, :f64)
        y = Nx.greater(random({40}, :f64), 0) |> Nx.as_type(:f64)
        args = [random({6}, :f64), random({6}, :f64), x, y]

        for fun <- [&leapfrogs/4, &scaled_counter/1] do
          args = if fun == (&scaled_counter/1), do: [random({33})], else: args
          attach_compilations()
          compiled = apply(Nx.Defn.jit(fun, compiler: Compiler, cache: false), args)
          assert_received {:compiled, _, %{mode: :steps, loop_kernels: 1, host_steps: 0}}
          assert_eager_bits(compiled, fun, args)

          # Off, the trips are recorded into one program instead: the same bits.
          opts = [compiler: Compiler, cache: false, loop_kernel: false]
          unrolled = apply(Nx.Defn.jit(fun, opts), args)
          assert_received {:compiled, _, %{mode: :program}}
          assert_eager_bits(unrolled, fun, args)
        end
      end)
    end

    test "vectorized chains run in the loop kernel, one workgroup each, the Evaluator's bits" do
      Nx.Vulkan.with_host_fallback(:raise, fn ->
        x = random({40, 6}, :f64)
        y = Nx.greater(random({40}, :f64), 0) |> Nx.as_type(:f64)
        q = random({5, 6}, :f64) |> Nx.vectorize(:chain)
        p = random({5, 6}, :f64) |> Nx.vectorize(:chain)
        attach_compilations()
        compiled = Nx.Defn.jit(&leapfrogs/4, compiler: Compiler, cache: false).(q, p, x, y)
        assert_received {:compiled, _, %{mode: :steps, loop_kernels: 1}}
        assert_eager_bits(compiled, &leapfrogs/4, [q, p, x, y])
      end)
    end

    test "values of constants alone are computed when compiled: a call records the loop kernel alone" do
      x = Nx.multiply(random({2}), 1.0)
      fun = Nx.Defn.jit(&scaled_with_constant/1, compiler: Compiler)
      {first, _} = fun.(x)
      before = Nx.Vulkan.stream_statistics()
      {y, c} = fun.(x)
      assert Nx.Vulkan.stream_statistics().commands - before.commands == 1
      assert Nx.to_binary(y) == Nx.to_binary(first)
      assert_eager_bits({y, c}, &scaled_with_constant/1, [x])
      # The loop passes the shared constant through: the result says so, and no call gives it up.
      assert %Nx.Vulkan.Backend{constant: true} = c.data
      Nx.backend_deallocate(c)
      assert Nx.to_flat_list(elem(fun.(x), 1)) == [2.0, 3.0]
    end

    test "the loop kernel's option is checked" do
      assert_raise ArgumentError, ~r/:loop_kernel option/, fn ->
        Nx.Defn.jit(&scaled_counter/1, compiler: Compiler, loop_kernel: :yes).(Nx.iota({3}))
      end
    end

    test "a loop with a fixed trip count is unrolled into one program, the Evaluator's bits" do
      Nx.Vulkan.with_host_fallback(:raise, fn ->
        x = random({5, 3})
        assert_compiled(:program, &double_thrice/1, [x])
        assert_compiled(:program, &nested_fixed_loops/1, [x])
        assert_compiled(:program, &never_runs/1, [x])
        assert_compiled(:program, &loop_between_products/2, [random({4, 8}), random({8, 8})])
      end)
    end

    test "small integer literals are known when compiled: a table read at the loop's counter costs no launch" do
      x = Nx.tensor([1, 2, 3], type: :s32)
      attach_compilations()
      Nx.Defn.jit(&add_table_entries/1, compiler: Compiler, cache: false).(x)
      assert_received {:compiled, _, %{mode: :program, launches: 1}}
      compiled = assert_compiled(:program, &add_table_entries/1, [x])
      assert Nx.to_flat_list(compiled) == [16, 17, 18]

      # A random generator's rotation tables, likewise: the Evaluator's bits.
      key = Nx.Random.key(7)
      assert_compiled(:program, &Nx.Random.normal(&1, shape: {9}), [key])
      assert_compiled(:program, &Nx.Random.uniform(&1, shape: {3, 2}, type: :f64), [key])
    end

    test "other loops: the state stays on the device, one program per trip, the predicate read on the host" do
      Nx.Vulkan.with_host_fallback(:raise, fn ->
        off = [loop_kernel: false]
        assert_compiled(:steps, &newton_sqrt/1, [Nx.abs(random({37}, :f64)) |> Nx.add(0.1)], off)

        {_, n} =
          assert_compiled(:steps, &halve_until_small/1, [random({9}) |> Nx.multiply(100)], off)

        assert Nx.to_number(n) > 3
        assert_compiled(:steps, &halve_until_small/1, [Nx.tensor([0.25, 0.25])], off)
        # The inner loop's trips depend on the outer loop's counter.
        assert_compiled(:steps, &nested_loops/1, [random({5, 3})], off)
        # Too many trips to unroll.
        assert_compiled(:steps, &long_count/1, [Nx.tensor([1, 2], type: :s32)], off)

        # Four single trips, then blocks of 32: loops ending inside a block, at its end and one
        # trip after.
        for trips <- [36, 37, 67, 68, 69] do
          {_, n} =
            assert_compiled(:steps, &count_down/2, [Nx.tensor(trips), Nx.tensor(1.0)], off)

          assert Nx.to_number(n) == trips
        end
      end)
    end

    test "the loop kernel runs data-dependent loops on the device, the predicate read once per launch" do
      Nx.Vulkan.with_host_fallback(:raise, fn ->
        assert_compiled(:loop_kernel, &newton_sqrt/1, [Nx.abs(random({37}, :f64)) |> Nx.add(0.1)])

        {_, n} =
          assert_compiled(:loop_kernel, &halve_until_small/1, [random({9}) |> Nx.multiply(100)])

        assert Nx.to_number(n) > 3
        # No trip at all; and 2000 trips, two launches.
        assert_compiled(:loop_kernel, &halve_until_small/1, [Nx.tensor([0.25, 0.25])])
        x = assert_compiled(:loop_kernel, &long_count/1, [Nx.tensor([1, 2], type: :s32)])
        assert Nx.to_flat_list(x) == [2001, 2002]
      end)
    end

    test "blocks of trips stop exactly where the predicate fails" do
      fun = Nx.Defn.jit(&count_down/2, compiler: Compiler)
      eager = Nx.Defn.jit(&count_down/2, compiler: Nx.Defn.Evaluator)

      for trips <- [0, 1, 3, 4, 5, 35, 36, 37, 100] do
        args = [Nx.tensor(trips), Nx.tensor(0.5, type: :f64)]
        {acc, n} = apply(fun, args)
        assert Nx.to_number(n) == trips
        assert bits(acc) == bits(elem(apply(eager, args), 0))
      end
    end

    test "a NUTS-style tree doubling (nested data-dependent loops, a U-turn) gives the Evaluator's bits" do
      Nx.Vulkan.with_host_fallback(:raise, fn ->
        for {q, p} <- [{[1.0, 0.5], [0.2, -0.1]}, {[0.0, 2.0], [1.0, 1.0]}] do
          args = [Nx.tensor(q, type: :f64), Nx.tensor(p, type: :f64)]
          {_, _, depth} = assert_compiled(:steps, &tree_doubling/2, args)
          assert Nx.to_number(depth) in 2..7
        end
      end)
    end

    test "grad through a loop gives the Evaluator's bits" do
      Nx.Vulkan.with_host_fallback(:raise, fn ->
        x = random({7})
        compiled = Nx.Defn.jit(&grad_through_loop/1, compiler: Compiler).(x)
        assert_eager_bits(compiled, &grad_through_loop/1, [x])
      end)
    end

    test "a loop is traced once; later calls with new values only run it" do
      parent = self()

      fun =
        Nx.Defn.jit(
          fn x ->
            send(parent, :traced)
            halve_until_small(x)
          end,
          compiler: Compiler
        )

      {_, n} = fun.(Nx.tensor([8.0, 8.0]))
      assert Nx.to_number(n) == 4
      {_, n} = fun.(Nx.tensor([0.5, 0.25]))
      assert Nx.to_number(n) == 0
      assert_received :traced
      refute_received :traced
    end
  end

  describe "host steps" do
    test "small conds compute every branch on the device and select, the Evaluator's bits" do
      Nx.Vulkan.with_host_fallback(:raise, fn ->
        assert_compiled(:program, &abs_of_sum_sign/1, [random({6})])
        assert_compiled(:program, &abs_of_sum_sign/1, [Nx.abs(random({6}))])
        assert_compiled(:program, &three_way/2, [random({4, 3}), Nx.tensor(-2.0)])
        assert_compiled(:program, &three_way/2, [random({4, 3}), Nx.tensor(0.5)])
        assert_compiled(:program, &three_way/2, [random({4, 3}), Nx.tensor(7.0)])
        # A cond in a loop with a fixed trip count: the loop unrolls, each cond selects.
        x = Nx.tensor([1.0, 2.0])
        compiled = assert_compiled(:program, &loop_with_cond/1, [x])
        assert Nx.to_flat_list(compiled) == [2.0, 10.0]
      end)
    end

    test "a cond with host code in a branch is a host step: only the chosen branch runs" do
      attach_compilations()
      parent = self()
      hooks = %{branch: &send(parent, {:branch, Nx.to_flat_list(&1)})}
      x = Nx.tensor([1.0, -2.0])

      fun =
        Nx.Defn.jit(&hooked_branch/1, compiler: Compiler, native_fallback: :raise, hooks: hooks)

      assert Nx.to_flat_list(fun.(x)) == [2.0, -4.0]
      assert_received {:compiled, _, %{mode: :steps, host_steps: 1}}
      assert_received {:branch, [1.0, -2.0]}
      assert Nx.to_flat_list(fun.(Nx.negate(x))) == [1.0, -2.0]
      refute_received {:branch, _}

      assert_compiled(:steps, &halving_with_hooked_cond/1, [Nx.tensor([40.0, 3.0])])
    end

    test "a cond too large to compute whole runs its predicates' first true branch, the Evaluator's bits" do
      Nx.Vulkan.with_host_fallback(:raise, fn ->
        x = random({5, 3})

        for t <- [-1.5, 0.25, 3.0] do
          assert_compiled(:steps, &big_branches/2, [x, Nx.tensor(t)])
        end

        # grad's cond (the backward pass of each branch) too.
        assert_compiled(:steps, &grad_big_branches/2, [x, Nx.tensor(3.0)])

        # A branch reading the function's parameters only through a loop; the loop's own cond.
        # A counted loop whose body reads a cond's predicate on the host: a program per trip.
        assert_compiled(:steps, &counted_with_big_cond/1, [Nx.tensor([-1.0, 0.5])])
        compiled = assert_compiled(:steps, &halve_or_count/1, [Nx.tensor([30.0, 14.0])])

        assert Nx.to_flat_list(compiled) ==
                 Nx.to_flat_list(halve_or_count(Nx.tensor([30.0, 14.0])))
      end)
    end

    test "a large cond is decided on the device where it gates runs: no host wait, the Evaluator's bits" do
      if Nx.Vulkan.device_info().features.conditional_rendering do
        Nx.Vulkan.with_host_fallback(:raise, fn ->
          fun = Nx.Defn.jit(&big_branches/2, compiler: Compiler)
          x = random({5, 3})

          for t <- [-1.5, 0.25, 3.0, :nan] do
            t = Nx.tensor(t)
            # The first call compiles; the second one's result is read only after it returns.
            fun.(x, t)
            before = Nx.Vulkan.stream_statistics()
            result = fun.(x, t)
            assert Nx.Vulkan.stream_statistics().waits == before.waits
            assert_eager_bits(result, &big_branches/2, [x, t])
          end

          # In a counted loop: neither the loop's predicate nor the cond's is read.
          fun = Nx.Defn.jit(&counted_with_big_cond/1, compiler: Compiler)

          for x <- [Nx.tensor([-1.0, 0.5]), Nx.tensor([-1.0, -0.5])] do
            fun.(x)
            before = Nx.Vulkan.stream_statistics()
            result = fun.(x)
            assert Nx.Vulkan.stream_statistics().waits == before.waits
            assert_eager_bits(result, &counted_with_big_cond/1, [x])
          end
        end)
      end
    end

    test "io_call hooks and runtime_call run on the host between device segments" do
      attach_compilations()
      parent = self()

      hooked =
        Nx.Defn.jit(fn x -> Nx.Defn.Kernel.io_call(Nx.add(x, 1), :seen) |> Nx.multiply(3) end,
          compiler: Compiler,
          hooks: %{seen: &send(parent, {:seen, &1})}
        )

      assert Nx.to_flat_list(hooked.(Nx.tensor([1, 5]))) == [6, 18]
      assert_received {:compiled, _, %{mode: :steps, host_steps: 1}}
      assert_received {:seen, %Nx.Tensor{data: %Nx.Vulkan.Backend{}} = seen}
      assert Nx.to_flat_list(seen) == [2, 6]
      assert Nx.to_flat_list(hooked.(Nx.tensor([0, 0]))) == [3, 3]
      assert_received {:seen, seen}
      assert Nx.to_flat_list(seen) == [1, 1]

      called =
        Nx.Defn.jit(
          fn x ->
            y = Nx.exp(x)

            {a, b} =
              Nx.runtime_call({y, y}, {y, Nx.multiply(y, 0)}, [by: 10], fn {t, k}, opts ->
                send(parent, {:runtime_call, t.data.__struct__})
                {Nx.multiply(t, opts[:by]), Nx.add(t, k)}
              end)

            Nx.subtract(a, b)
          end,
          compiler: Compiler
        )

      x = Nx.tensor([0.0, 1.0])
      expected = Nx.subtract(Nx.multiply(Nx.exp(x), 10), Nx.exp(x))
      assert bits(called.(x)) == bits(expected)
      assert_received {:runtime_call, Nx.Vulkan.Backend}
    end

    test "native_fallback: :eval runs a function with host steps through the Evaluator" do
      attach_compilations()
      x = Nx.tensor([1, 2])
      loop = Nx.Defn.jit(&double_thrice/1, compiler: Compiler, native_fallback: :eval)
      assert Nx.to_flat_list(loop.(x)) == [8, 16]
      assert_received {:compiled, _, %{mode: :eval, reason: "while" <> _}}
    end
  end
end
