defmodule Nx.Vulkan.Compiler do
  @moduledoc """
  An `Nx.Defn.Compiler` that runs each `defn` call as one program on a Vulkan device.

      Nx.Defn.global_default_options(compiler: Nx.Vulkan.Compiler)
      # or per function
      fun = Nx.Defn.jit(&MyModel.step/3, compiler: Nx.Vulkan.Compiler)

  The first call with new argument templates (type, shape, names, vectorized axes,
  donatability) traces the function once and lowers it, through the same callbacks and
  option encoding as `Nx.Vulkan.Backend`, into a flat program that the engine compiles:
  every kernel is built then. Runs of elementwise ops are fused into one kernel with the
  constants they read; elementwise consumers of `dot` and `conv` (a bias, an activation, an SGD
  update) into their kernels; elementwise work before or after a `sum`, `product`,
  `reduce_max` or `reduce_min` (softmax's `exp(x - max)`, a bias gradient's update, or both)
  into the reduction's kernel; a transpose of a product's result into the product;
  independent launches run between the same barriers; and on a GPU, connected work over small
  tensors (up to 48 nodes, every value at most 16384 elements) into one launch of one
  workgroup (a region: a log-density and its gradient over a few parameters, a leapfrog step). Every later call with the same templates skips tracing: it makes one
  native call, which records all of the program's launches on the device's stream at once.
  Structurally equal programs (another closure of the same code, another captured tensor of
  the same type and shape) share one compiled program: tensors a function captures are
  inputs of the program, not constants of its kernels (but for integer literals of at most
  16 elements in `defn` code, which the engine folds when it compiles the program).

  Control flow and host code: a `while` with a trip count fixed at compile time (a counter
  from a constant) runs in one submission: with 8 trips or more and a body of elementwise ops,
  views, reductions and matrix-vector products over tensors that fit one workgroup's shared memory, in one
  launch (the engine's loop kernel, one workgroup per chain of a vectorized state), else
  unrolled into the program; any other `while` keeps its state on the
  device and reads its predicate on the host, one program per trip for its first trips, then
  blocks of trips in one program (each trip kept only while the predicate holds). A `cond`
  whose branches are small and run no host code computes every branch and selects; any other
  runs the first true predicate's branch alone, a compiled entry of its own over the values the
  branch reads, chosen on the device where the device has conditional rendering and each
  branch is one program (each branch recorded gated on its own flag: no wait), else by reading
  the predicates on the host. A loop with a fixed trip count whose body has such a cond runs
  its body that many times without reading a predicate of its own. `io_call` hooks, `runtime_call` and ops
  the engine refuses for their types run on the host between the program's device segments
  (host steps, as those conds are). The `[:nx_vulkan, :compilation]` telemetry event says
  which way each function went.

  ## Options

    * `:device` - the index of the device (see `Nx.Vulkan.devices/0`); defaults to
      `Nx.Vulkan.default_device/0`.

    * `:native_fallback` - `:host_steps` (the default) as above; `:eval` runs any function
      with a loop, cond, hook or host call through `Nx.Defn.Evaluator` on
      `Nx.Vulkan.Backend`; `:raise` raises `Nx.Vulkan.Error` saying why for a function that
      would run an op the engine refuses or go through the Evaluator.

    * `:hooks` - a map of `io_call` names to functions, as for `Nx.Defn.Evaluator`.

    * `:max_concurrency` - the number of `Nx.Serving` partitions on one device. Without it
      and without `:device`, there is one partition per device of the default device's type.

    * `:cache` - as EXLA's: `true` (the default) keeps each compiled function in memory;
      `false` compiles on every call; a file path also stores the traced program (and the
      tensors the function captured, as they were) there, so that a new VM compiles it
      without tracing. The file holds the argument templates and device it was made for;
      others trace again and replace it, with a warning. Functions with host steps or run
      through the Evaluator are not stored.

    * `:loop_kernel` - `true` (the default) runs loops of fixed trip count in the engine's
      loop kernel where it takes them; `false` unrolls them into the program.

  Other options (such as `:batch_keys`, which `Nx.Serving` and Bumblebee pass)
  are accepted and ignored.

  ## Telemetry

  `[:nx_vulkan, :compilation]` is emitted once per compilation (never on a cached call), with
  measurements `:trace_time`, `:lower_time`, `:compile_time` and `:total_time` (microseconds)
  and metadata `:key`, `:device`, `:mode` (`:program`; `:steps`, with `:host_steps`, when
  host steps cut it into device segments; or `:eval`), `:reason` (why `:eval`),
  `:program_cache` (`:hit` when a structurally equal program was compiled before, `:miss`,
  or `nil`), `:nodes`, `:fused`, `:launches`, `:in_place` (donations written in place),
  `:run_bytes` (device memory a call allocates for results and intermediates: intermediates
  whose launches lie apart share buffers), `:disk_cache` (`:hit` or `:miss` with
  `cache: path`, else `nil`), `:loop_kernels` (loops run by the loop kernel; with `:steps`
  mode, each is a step of its own, not a host step) and `:loop_kernel_refusals` (why loops of
  fixed trip count were unrolled instead).

  ## Buffer donation

  Arguments marked with `Nx.donatable/1` (for `Nx.Defn.compile/3`, templates and live
  arguments alike) are given up by the call: each is paired with the first output of its type
  and shape, as EXLA pairs them (a donated argument without such an output, or that the
  function does not use, raises `ArgumentError`), and a one-program function writes that
  output over the argument's buffer where it can do so safely (an update such as `w - lr * dw`, in its
  elementwise kernel or a product's epilogue), else into a buffer of its own. Either way the
  argument is deallocated after the call (with host steps, always into buffers of their own).
  Functions run through the Evaluator ignore the marks.
  """

  @behaviour Nx.Defn.Compiler

  alias Nx.Defn.{Composite, Evaluator, Expr, Tree}
  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Backend, as: B

  alias Nx.Vulkan.Compiler.{
    Branches,
    Disk,
    HostSteps,
    LoopKernels,
    Loops,
    Recorder,
    Recompilations,
    Runner
  }

  alias Nx.Vulkan.{Error, Native, NIF, Tables}

  @fallback_modes [:host_steps, :eval, :raise]

  # Compiled functions and programs kept at most (then the cache starts again).
  @max_cached 4096
  # Each process keeps the entries it called (a hit then copies nothing out of ETS; functions run
  # through the Evaluator live only here, see locked/2), at most this many.
  @local_cache {__MODULE__, :local_cache}
  @max_local 256
  # With native_fallback: :eval, the nodes that make a function run through the Evaluator
  # (otherwise small conds are selects and these host steps).
  @eval_ops [:cond, :while, :io_call, :runtime_call]
  # Compilations of one function after which each doubling logs what changed.

  ## Nx.Defn.Compiler callbacks

  @impl true
  def __partitions_options__(opts) do
    cond do
      n = opts[:max_concurrency] -> List.duplicate(opts, n)
      opts[:device] -> [opts]
      true -> Enum.map(partition_devices(), &Keyword.put(opts, :device, &1))
    end
  end

  @impl true
  def __to_backend__(opts), do: {B, device: device(opts)}

  @impl true
  def __shard_jit__(_key, _mesh, _vars, _fun, _args_list, _opts) do
    raise ArgumentError,
          "Nx.Vulkan.Compiler does not support sharding (Nx.Defn.shard_jit); use " <>
            "Nx.Defn.jit/2 per device, or Nx.Serving with partitions: true"
  end

  @impl true
  def __jit__(key, vars, fun, args_list, opts) do
    if Recorder.active?(),
      do: inline(key, vars, fun, args_list, settings(opts)),
      else: jit(key, vars, fun, args_list, settings(opts))
  end

  # A jitted function called while another function records (Nx.LinAlg's blocks call defn
  # functions): its ops and host steps become part of the program being recorded.
  defp inline(key, vars, fun, args_list, settings) do
    traced = fun.(vars)

    expr = if settings.native_fallback == :eval, do: traced, else: rewrite(key, traced, settings)

    evaluate = evaluate_fun(key, vars, expr, settings)
    Enum.map(args_list, evaluate)
  end

  defp jit(key, vars, fun, args_list, settings) do
    cache_key = {key, vars |> Composite.flatten_list() |> Enum.map(&arg_key/1), settings}

    cached = fn ->
      if settings.cache == false do
        compile(key, vars, fun, settings)
      else
        Map.get(Process.get(@local_cache, %{}), cache_key) ||
          remember(
            cache_key,
            lookup(cache_key) || locked(cache_key, fn -> compile(key, vars, fun, settings) end)
          )
      end
    end

    compiled = cached.()
    Enum.map(args_list, &run_or_recompile(compiled, &1, cached))
  end

  @impl true
  def __compile__(key, vars, fun, opts) do
    settings = settings(opts)
    compiled = compile(key, vars, fun, settings)

    fn args_list ->
      Enum.map(
        args_list,
        &run_or_recompile(compiled, &1, fn -> compile(key, vars, fun, settings) end)
      )
    end
  end

  # A program compiled for a device since reopened (Nx.Vulkan.reopen_device/1) is refused by
  # the engine: every cached program is forgotten and this one compiled again, once.
  defp run_or_recompile(compiled, args, recompile) do
    Runner.run(compiled, args)
  rescue
    e in Error ->
      if e.kind == :device_lost and e.message =~ "since reopened" do
        Tables.with_tables(fn -> :ets.delete_all_objects(Tables.compiled()) end)
        Process.delete(@local_cache)
        Runner.run(recompile.(), args)
      else
        reraise e, __STACKTRACE__
      end
  end

  ## Settings and cache

  defp settings(opts) do
    device =
      case opts[:device] do
        nil ->
          Native.default_device()

        index when is_integer(index) and index >= 0 ->
          index

        other ->
          raise ArgumentError,
                "the :device option of Nx.Vulkan.Compiler must be a device index, got: " <>
                  inspect(other)
      end

    fallback = Keyword.get(opts, :native_fallback, :host_steps)

    if fallback not in @fallback_modes do
      raise ArgumentError,
            "the :native_fallback option of Nx.Vulkan.Compiler must be one of " <>
              "#{inspect(@fallback_modes)}, got: #{inspect(fallback)}"
    end

    hooks = Keyword.get(opts, :hooks, %{})

    unless is_map(hooks) do
      raise ArgumentError,
            "the :hooks option of Nx.Vulkan.Compiler must be a map, got: #{inspect(hooks)}"
    end

    cache = Keyword.get(opts, :cache, true)

    unless is_boolean(cache) or is_binary(cache) do
      raise ArgumentError,
            "the :cache option of Nx.Vulkan.Compiler must be a boolean or a file path, got: " <>
              inspect(cache)
    end

    loop_kernel = Keyword.get(opts, :loop_kernel, true)

    unless is_boolean(loop_kernel) do
      raise ArgumentError,
            "the :loop_kernel option of Nx.Vulkan.Compiler must be a boolean, got: " <>
              inspect(loop_kernel)
    end

    %{
      device: device,
      native_fallback: fallback,
      hooks: hooks,
      cache: cache,
      loop_kernel: loop_kernel
    }
  end

  defp device(opts), do: opts[:device] || Native.default_device()

  defp partition_devices do
    default = Native.default_device()
    devices = Nx.Vulkan.devices()
    type = Enum.find_value(devices, &(&1.index == default && &1.type))
    for %{index: index, type: ^type} <- devices, do: index
  end

  defp arg_key(%T{} = t),
    do: {t.type, t.shape, t.names, t.vectorized_axes, Map.get(t, :donatable?, false)}

  defp lookup(cache_key) do
    case Tables.with_tables(fn -> :ets.lookup(Tables.compiled(), cache_key) end) do
      [{_, compiled}] -> compiled
      [] -> nil
    end
  end

  # Concurrent misses of one key compile once: the others wait for the lock, then find it.
  # A function run through the Evaluator is cached in the calling process only (remember/2):
  # its traced expression shares subterms, which a copy into or out of ETS unfolds
  # (exponentially for deep ones, such as Nx.LinAlg.svd's).
  defp locked(cache_key, compile) do
    lock = {{__MODULE__, :erlang.phash2(cache_key)}, self()}

    :global.trans(
      lock,
      fn ->
        compiled = lookup(cache_key) || compile.()

        if local_only?(compiled) do
          compiled
        else
          Tables.with_tables(fn ->
            # Closures made per call (each a new key) must not hold device memory forever.
            if :ets.info(Tables.compiled(), :size) >= @max_cached,
              do: :ets.delete_all_objects(Tables.compiled())

            :ets.insert(Tables.compiled(), {cache_key, compiled})
          end)

          compiled
        end
      end,
      [node()]
    )
  end

  # Whether a compiled entry holds a traced expression: an Evaluator fallback, for the whole
  # function or inside a loop.
  defp local_only?({:eval, _, _}), do: true

  defp local_only?({:steps, p}) do
    Enum.any?(p.steps, fn
      {:host, _, {{:while, {cond_entry, step_entry, _block}}, _}, _, _, _} ->
        local_only?(cond_entry) or local_only?(step_entry)

      _ ->
        false
    end)
  end

  defp local_only?(_), do: false

  defp remember(cache_key, compiled) do
    cache = Process.get(@local_cache, %{})
    cache = if map_size(cache) >= @max_local, do: %{}, else: cache
    Process.put(@local_cache, Map.put(cache, cache_key, compiled))
    compiled
  end

  ## Compilation

  defp compile(key, vars, fun, settings) do
    start = System.monotonic_time()
    Recompilations.note(key, vars |> Composite.flatten_list() |> Enum.map(&arg_key/1), settings)
    outer_refusals = LoopKernels.take_refusals()

    disk_keys = %{
      arguments: vars |> Composite.flatten_list() |> Enum.map(&arg_key/1),
      device: settings.device
    }

    {trace_time, lower_time, compile_time, compiled, meta} =
      with path when is_binary(path) <- settings.cache,
           {:ok, recorded} <- Disk.read(path, disk_keys, settings.device),
           {time, {:ok, compiled, meta}} <-
             :timer.tc(fn -> from_recording(recorded, settings) end) do
        {0, 0, time, compiled, Map.put(meta, :disk_cache, :hit)}
      else
        _ -> trace_and_compile(key, vars, fun, settings, disk_keys)
      end

    :telemetry.execute(
      [:nx_vulkan, :compilation],
      %{
        trace_time: trace_time,
        lower_time: lower_time,
        compile_time: compile_time,
        total_time:
          System.convert_time_unit(System.monotonic_time() - start, :native, :microsecond)
      },
      Map.merge(
        %{
          key: key,
          device: settings.device,
          nodes: 0,
          fused: 0,
          launches: 0,
          in_place: 0,
          run_bytes: 0,
          disk_cache: nil,
          loop_kernels: 0,
          loop_kernel_refusals: LoopKernels.refusals()
        },
        meta
      )
    )

    LoopKernels.restore_refusals(outer_refusals)

    compiled
  end

  # The compiled entry of a recording: {:ok, compiled, meta}, or {:stop, reason}.
  defp from_recording(%{steps: steps} = recorded, settings) do
    refuse_host_ops(steps, settings)

    none = %{nodes: 0, fused: 0, launches: 0, in_place: 0, run_bytes: 0}

    compiled =
      Enum.reduce_while(steps, {[], none}, fn
        {:segment, segment, inputs, outputs}, {done, stats} ->
          case program(settings.device, segment) do
            {:ok, program, _, more} when inputs == [] ->
              # Computed from constants alone (a loop's initial counter): once, here, its
              # results shared by every call as immutable constants, each in a dense buffer of
              # its own (a program may return views of its constants, which a reader copies).
              refs =
                program
                |> NIF.program_run([])
                |> Error.unwrap!()
                |> Enum.map(&(&1 |> NIF.copy(settings.device) |> Error.unwrap!()))

              stats = Map.update!(stats, :nodes, &(&1 + more.nodes))
              {:cont, {[{:constants, outputs, refs} | done], stats}}

            {:ok, program, _, more} ->
              stats = Map.merge(stats, more, fn _, a, b -> a + b end)
              {:cont, {[{:segment, program, inputs, outputs} | done], stats}}

            {:stop, _} = stop ->
              {:halt, stop}
          end

        step, {done, stats} ->
          {:cont, {[step | done], stats}}
      end)

    with {done, stats} <- compiled do
      run = Map.take(recorded, [:params, :captures, :result, :outputs])
      donated = Enum.map(recorded.donations, &elem(&1, 0))

      run =
        Map.merge(run, %{donated: donated, device: settings.device, steps: Enum.reverse(done)})

      run = Map.put(run, :loop, Runner.loop_plan(run))

      loop_kernels = Enum.count(steps, &loop_kernel_step?/1)
      host_steps = Enum.count(steps, &(elem(&1, 0) == :host)) - loop_kernels

      {:ok, {:steps, run},
       Map.merge(stats, %{
         mode: :steps,
         reason: nil,
         program_cache: nil,
         host_steps: host_steps,
         loop_kernels: loop_kernels
       })}
    end
  end

  defp from_recording(recorded, settings) do
    with {:ok, program, program_cache, stats} <- program(settings.device, recorded) do
      # Only what a call needs: a cache hit copies the entry out of ETS.
      run = Map.take(recorded, [:params, :captures, :result])
      # Donated parameters (positions in :params): the caller gives them up after a call.
      run = Map.put(run, :donated, Enum.map(recorded.donations, &elem(&1, 0)))

      {:ok, {:program, Map.merge(run, %{program: program, device: settings.device})},
       Map.merge(stats, %{mode: :program, reason: nil, program_cache: program_cache})}
    end
  end

  defp loop_kernel_step?({:host, _, {{kind, _}, _}, _, _, _})
       when kind in [:loop_kernel, :loop_kernel_until],
       do: true

  defp loop_kernel_step?(_), do: false

  # Ops the engine refuses become host steps, unless native_fallback: :raise forbids them.
  defp refuse_host_ops(steps, %{native_fallback: :raise}) do
    Enum.each(steps, fn
      {:host, _, {{:host_op, op, _, reason}, _}, _, _, _} ->
        refuse!("#{op} runs on the host (#{reason})")

      _ ->
        :ok
    end)
  end

  defp refuse_host_ops(_steps, _settings), do: :ok

  defp trace_and_compile(key, vars, fun, settings, disk_keys) do
    {trace_time, traced} = :timer.tc(fn -> fun.(vars) end)

    {lower_time, {recorded, eval_fun}} =
      :timer.tc(fn ->
        record_scope(
          key,
          vars,
          [rewritten(key, traced, settings)],
          fn [f], p -> f.(p) end,
          settings
        )
      end)

    {compile_time, {compiled, meta}} =
      :timer.tc(fn ->
        with {:ok, recorded} <- recorded,
             {:ok, compiled, meta} <- from_recording(recorded, settings) do
          # Host steps hold functions and compiled programs: such recordings stay in memory.
          disk? = is_binary(settings.cache) and not Map.has_key?(recorded, :steps)
          if disk?, do: Disk.write(settings.cache, disk_keys, recorded)

          {compiled, Map.put(meta, :disk_cache, if(disk?, do: :miss))}
        else
          {:stop, reason} -> eval(eval_fun, settings, reason)
        end
      end)

    {trace_time, lower_time, compile_time, compiled, meta}
  end

  # Records a scope: `combine.(evaluate, params)` computes its result from the call's params,
  # with `evaluate` one function per expression in `exprs` (over the params `vars`; each
  # `{traced, rewritten}`, see rewritten/3). Returns
  # `{{:ok, recorded} | {:stop, reason}, eval_fun}`, `eval_fun` being the same function run by
  # the Evaluator on the traced expressions (the fallback).
  defp record_scope(key, vars, exprs, combine, settings) do
    traced = Enum.map(exprs, fn {expr, _} -> evaluate_fun(key, vars, expr, settings) end)
    eval_fun = &combine.(traced, &1)
    exprs = Enum.map(exprs, &elem(&1, 1))

    recorded =
      case Enum.find_value(exprs, &host_op(&1, settings)) do
        nil ->
          evaluate = Enum.map(exprs, &evaluate_fun(key, vars, &1, settings))
          Recorder.record(settings.device, vars, &combine.(evaluate, &1))

        op ->
          {:stop, "#{op} runs on the host (native_fallback: :eval)"}
      end

    {recorded, eval_fun}
  end

  # A scope's expression as traced and as recorded: rewritten once (its nested loops are
  # compiled then), whatever entries read it.
  defp rewritten(_key, expr, %{native_fallback: :eval}), do: {expr, expr}
  defp rewritten(key, expr, settings), do: {expr, rewrite(key, expr, settings)}

  # `expr` with its loops, hooks and host calls made host steps, and its small conds selects.
  defp rewrite(key, expr, settings) do
    HostSteps.rewrite(
      expr,
      {&lower_while(key, &1, &2, &3, &4, settings), &lower_branch(key, &1, &2, &3, settings)},
      settings.hooks
    )
  end

  # A cond's branch, its outer values made parameters: an entry returning the cond's leaves
  # (each of the cond's type and shape, as Nx.Defn.Evaluator's cond gives them).
  defp lower_branch(key, params, body, template, settings) do
    leaves = Composite.flatten_list([template])

    scope_entry(
      key,
      [List.to_tuple(params)],
      [rewritten(key, body, settings)],
      fn [b], params ->
        b.(params)
        |> List.wrap()
        |> Composite.flatten_list()
        |> Enum.zip_with(leaves, &Branches.conform/2)
        |> List.to_tuple()
      end,
      settings
    )
  end

  defp evaluate_fun(key, vars, expr, settings) do
    evaluator = Evaluator.__compile__(key, vars, fn _ -> expr end, hooks: settings.hooks)

    fn params ->
      [result] = evaluator.([params])
      result
    end
  end

  # Trips of a counted loop whose body runs as an entry of its own, one call per trip.
  @max_repeated_trips 1_000_000

  # A while loop with a fixed trip count is unrolled into the program being recorded (its
  # body evaluated that many times); one whose body has a cond of its own step runs its body's
  # entry that many times, reading nothing on the host for the loop. Any other loop becomes
  # two compiled entries: its predicate (for the first trip), and its body followed by the
  # predicate of the body's result (one program per trip).
  defp lower_while(key, initial, arg, condition, body, settings) do
    {traced, rewritten} = body = rewritten(key, body, settings)
    host_op? = host_op(rewritten, settings)
    host_cond? = !host_op? && Branches.host_cond?(traced)

    trips =
      cond do
        host_op? -> :unknown
        host_cond? -> Loops.trip_count(initial, arg, condition, traced, @max_repeated_trips)
        true -> Loops.unrolled_trips(initial, arg, condition, traced)
      end

    case trips do
      {:ok, trips} when host_cond? ->
        entry = scope_entry(key, [arg], [body], fn [b], params -> b.(params) end, settings)
        {:repeat, trips, entry}

      {:ok, trips} ->
        case LoopKernels.counted(record_loop(key, arg, settings), arg, body, trips, settings) do
          {:ok, entry} -> {:loop_kernel, entry}
          :none -> {:unroll, trips, evaluate_fun(key, [arg], rewritten, settings)}
        end

      :unknown ->
        condition = rewritten(key, condition, settings)

        case !host_op(rewritten, settings) &&
               LoopKernels.until(record_loop(key, arg, settings), arg, body, condition, settings) do
          {:ok, entry} -> {:loop_kernel_until, entry}
          _ -> loop_entries(key, arg, condition, body, settings)
        end
    end
  end

  # Records a loop body's scope for the loop kernel (Nx.Vulkan.Compiler.LoopKernels).
  defp record_loop(key, arg, settings) do
    fn exprs, combine ->
      {recorded, _eval_fun} = record_scope(key, [arg], exprs, combine, settings)
      recorded
    end
  end

  defp loop_entries(key, arg, condition, body, settings) do
    vars = [arg]
    cond_entry = scope_entry(key, vars, [condition], fn [c], params -> c.(params) end, settings)

    step_entry =
      scope_entry(
        key,
        vars,
        [body, condition],
        fn [b, c], params ->
          state = b.(params)
          {state, c.(thunks(leaves(state)))}
        end,
        settings
      )

    {:loop, cond_entry, step_entry, block_entry(key, vars, body, condition, step_entry, settings)}
  end

  # A loop whose trip is one program also gets a block: `trips` trips in one program, each
  # after the first computed then kept only while the predicate holds (select: the state
  # stops changing once it fails), so a long loop reads its predicate once per block. Nil
  # where the body runs host steps (they must not run speculatively).
  defp block_entry(key, vars, body, condition, {:program, _}, settings) do
    trips = Loops.block_trips(elem(body, 0))

    block =
      scope_entry(
        key,
        vars,
        [body, condition],
        fn [b, c], params ->
          first = leaves(b.(params))

          {state, pred} =
            Enum.reduce(2..trips//1, {first, c.(thunks(first))}, fn _, {state, pred} ->
              next = leaves(b.(thunks(state)))
              state = Enum.zip_with(next, state, &keep_while(pred, &1, &2))
              {state, c.(thunks(state))}
            end)

          {List.to_tuple(state), pred}
        end,
        settings
      )

    if trips > 1 and match?({:program, _}, block), do: {trips, block}
  end

  defp block_entry(_key, _vars, _body, _condition, _step_entry, _settings), do: nil

  defp keep_while(pred, next, state) do
    unnamed = &Nx.rename(&1, List.duplicate(nil, tuple_size(&1.shape)))
    Nx.select(pred, unnamed.(next), unnamed.(state)) |> Nx.rename(state.names)
  end

  # A loop body's result as its flat list of tensors, and tensors as the params of a call.
  defp leaves(state), do: state |> List.wrap() |> Composite.flatten_list()
  defp thunks(tensors), do: Enum.map(tensors, &fn -> &1 end)

  defp scope_entry(key, vars, exprs, combine, settings) do
    {recorded, eval_fun} = record_scope(key, vars, exprs, combine, settings)

    with {:ok, recorded} <- recorded,
         {:ok, compiled, _meta} <- from_recording(recorded, settings) do
      compiled
    else
      {:stop, reason} ->
        {compiled, _meta} = eval(eval_fun, settings, reason)
        compiled
    end
  end

  defp eval(eval_fun, settings, reason) do
    if settings.native_fallback == :raise, do: refuse!(reason)
    evaluator = fn [params] -> [eval_fun.(params)] end
    {{:eval, evaluator, settings.device}, %{mode: :eval, reason: reason, program_cache: nil}}
  end

  defp refuse!(reason) do
    raise Error,
      kind: :unsupported,
      message:
        "Nx.Vulkan.Compiler cannot run this function as one program (#{reason}) and " <>
          "native_fallback: :raise is set"
  end

  # The engine's program for a recording; structurally equal recordings share one.
  defp program(device, recorded) do
    structure =
      {:program, device, recorded.input_specs, recorded.nodes, recorded.outputs,
       recorded.donations}

    case lookup(structure) do
      {program, stats} ->
        {:ok, program, :hit, stats}

      nil ->
        result =
          locked(structure, fn ->
            case NIF.program_compile(
                   device,
                   recorded.input_specs,
                   recorded.nodes,
                   recorded.outputs,
                   recorded.donations
                 ) do
              {:ok, {program, {nodes, fused, launches, in_place, run_bytes}}} ->
                {program,
                 %{
                   nodes: nodes,
                   fused: fused,
                   launches: launches,
                   in_place: in_place,
                   run_bytes: run_bytes
                 }}

              {:error, kind, message} when kind in [:unsupported, :invalid_argument] ->
                {:stop, "the engine refused the program: #{message}"}

              {:error, kind, message} ->
                Error.raise_error!(kind, message)
            end
          end)

        case result do
          {:stop, _} = stop ->
            Tables.with_tables(fn -> :ets.delete(Tables.compiled(), structure) end)
            stop

          {program, stats} ->
            {:ok, program, :miss, stats}
        end
    end
  end

  # With native_fallback: :eval, the first node in `expr` that would be a host step or a
  # cond, else nil.
  defp host_op(_expr, %{native_fallback: fallback}) when fallback != :eval, do: nil

  defp host_op(expr, _settings) do
    Composite.reduce(expr, %{}, &scan/2)
    nil
  catch
    {:host_op, op} -> op
  end

  defp scan(%T{data: %Expr{id: id, op: op}} = t, seen) do
    cond do
      op in @eval_ops ->
        throw({:host_op, op})

      Map.has_key?(seen, id) ->
        seen

      true ->
        {_, seen} = Tree.apply_args(t, :all, Map.put(seen, id, true), &{&1, scan(&1, &2)})
        seen
    end
  end

  defp scan(_other, seen), do: seen
end
