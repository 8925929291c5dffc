// Devices: enumeration, the default device, memory statistics. Device descriptions are built
// as JSON and turned into maps (off the op path; options never go through JSON).
#include <cmath>

#include <nlohmann/json.hpp>

#include "devices.hpp"
#include "nxv/diagnostics.hpp"
#include "nxv/error.hpp"
#include "guard.hpp"
#include "nifs.hpp"
#include "terms.hpp"

namespace nxv_nif {

namespace {

ERL_NIF_TERM json_to_term(ErlNifEnv* env, const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return atoms.nil;
    case nlohmann::json::value_t::boolean:
      return value.get<bool>() ? atoms.true_ : atoms.false_;
    case nlohmann::json::value_t::number_integer:
      return enif_make_int64(env, value.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return enif_make_uint64(env, value.get<uint64_t>());
    case nlohmann::json::value_t::number_float: {
      double d = value.get<double>();
      if (!std::isfinite(d)) return atoms.nil;
      return enif_make_double(env, d);
    }
    case nlohmann::json::value_t::string:
      return make_binary(env, value.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      std::vector<ERL_NIF_TERM> items;
      items.reserve(value.size());
      for (const auto& item : value) items.push_back(json_to_term(env, item));
      return enif_make_list_from_array(env, items.data(), static_cast<unsigned>(items.size()));
    }
    case nlohmann::json::value_t::object: {
      std::vector<ERL_NIF_TERM> keys, values;
      for (const auto& [k, v] : value.items()) {
        keys.push_back(make_atom(env, k.c_str()));
        values.push_back(json_to_term(env, v));
      }
      ERL_NIF_TERM map;
      if (!enif_make_map_from_arrays(env, keys.data(), values.data(), keys.size(), &map))
        return enif_make_new_map(env);
      return map;
    }
    default:
      return atoms.nil;
  }
}


nlohmann::json info_to_json(const nxv::DeviceInfo& info) {
  using nlohmann::json;
  json heaps = json::array();
  for (const auto& heap : info.heaps)
    heaps.push_back({{"size", heap.size}, {"device_local", heap.device_local}});
  const auto& f = info.features;
  json features = {{"float16", f.float16},
                   {"float64", f.float64},
                   {"int64", f.int64},
                   {"int16", f.int16},
                   {"int8", f.int8},
                   {"storage8", f.storage8},
                   {"storage16", f.storage16},
                   {"bfloat16", f.bfloat16},
                   {"cooperative_matrix", f.cooperative_matrix},
                   {"subgroup_basic", f.subgroup_basic},
                   {"subgroup_arithmetic", f.subgroup_arithmetic},
                   {"subgroup_shuffle", f.subgroup_shuffle},
                   {"subgroup_ballot", f.subgroup_ballot},
                   {"buffer_device_address", f.buffer_device_address},
                   {"timeline_semaphore", f.timeline_semaphore},
                   {"conditional_rendering", f.conditional_rendering}};
  json coopmat = json::array();
  for (const auto& s : info.cooperative_matrix_shapes)
    coopmat.push_back({{"m", s.m},
                       {"n", s.n},
                       {"k", s.k},
                       {"a_type", s.a_type},
                       {"b_type", s.b_type},
                       {"c_type", s.c_type},
                       {"result_type", s.result_type},
                       {"scope", s.scope}});
  return {{"index", info.index},
          {"name", info.name},
          {"type", info.type},
          {"vendor_id", info.vendor_id},
          {"device_id", info.device_id},
          {"vendor", info.vendor},
          {"driver_name", info.driver_name},
          {"driver_info", info.driver_info},
          {"api_version", info.api_version},
          {"uuid", info.uuid},
          {"heaps", heaps},
          {"subgroup_size", info.subgroup_size},
          {"max_workgroup_size", info.max_workgroup_size},
          {"max_workgroup_invocations", info.max_workgroup_invocations},
          {"max_workgroup_count", info.max_workgroup_count},
          {"max_shared_memory", info.max_shared_memory},
          {"max_storage_buffer_range", info.max_storage_buffer_range},
          {"max_allocation_size", info.max_allocation_size},
          {"max_buffer_size", info.max_buffer_size},
          {"max_push_constants", info.max_push_constants},
          {"features", features},
          {"cooperative_matrix_shapes", coopmat}};
}

}  // namespace

// devices() -> {:ok, [map]}: every physical device, features before any mask.
ERL_NIF_TERM devices_nif(ErlNifEnv* env, int, const ERL_NIF_TERM[]) {
  return guard(env, [&] {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& info : nxv::list_devices()) list.push_back(info_to_json(info));
    return make_ok(env, json_to_term(env, list));
  });
}

// default_device() -> {:ok, index}
ERL_NIF_TERM default_device_nif(ErlNifEnv* env, int, const ERL_NIF_TERM[]) {
  return guard(env, [&] { return make_ok(env, enif_make_int64(env, default_device_index())); });
}

// device_info(index) -> {:ok, map}: the opened device, features after the capability mask.
ERL_NIF_TERM device_info_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    auto device = device_at(get_int64(env, argv[0], "device"));
    return make_ok(env, json_to_term(env, info_to_json(device->info())));
  });
}

// memory_statistics(index) -> {:ok, %{bytes_in_use, peak_bytes, buffers, cached_bytes, memory_limit}}
ERL_NIF_TERM memory_statistics_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    auto device = device_at(get_int64(env, argv[0], "device"));
    nxv::MemoryStats stats = device->memory_stats();
    nlohmann::json json = {{"bytes_in_use", stats.bytes_in_use},
                           {"peak_bytes", stats.peak_bytes},
                           {"buffers", stats.buffers},
                           {"cached_bytes", stats.cached_bytes},
                           {"memory_limit", stats.memory_limit}};
    return make_ok(env, json_to_term(env, json));
  });
}

// set_memory_limit(index, bytes) -> :ok (0: no limit)
ERL_NIF_TERM set_memory_limit_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    int64_t bytes = get_int64(env, argv[1], "memory limit");
    if (bytes < 0) throw nxv::Error(nxv::ErrorKind::InvalidArgument, "the memory limit is a byte count, at least 0");
    device_at(get_int64(env, argv[0], "device"))->set_memory_limit(uint64_t(bytes));
    return atoms.ok;
  });
}

// reset_peak_memory(index) -> :ok
ERL_NIF_TERM reset_peak_memory_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    device_at(get_int64(env, argv[0], "device"))->reset_peak_memory();
    return atoms.ok;
  });
}

// clear_buffer_cache(index) -> :ok
ERL_NIF_TERM clear_buffer_cache_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    device_at(get_int64(env, argv[0], "device"))->clear_buffer_cache();
    return atoms.ok;
  });
}

// kernel_cache_stats(index) -> {:ok, map}: kernels compiled and found, pipelines created and
// how many of them came from the persisted pipeline cache.
ERL_NIF_TERM kernel_cache_stats_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    nxv::KernelCacheStats s = device_at(get_int64(env, argv[0], "device"))->kernel_cache_stats();
    nlohmann::json json = {{"compiled", s.compiled},
                           {"disk_hits", s.disk_hits},
                           {"memory_hits", s.memory_hits},
                           {"pipelines", s.pipelines},
                           {"pipeline_cache_hits", s.pipeline_cache_hits},
                           {"pipeline_cache_loaded_bytes", s.pipeline_cache_loaded},
                           {"pipeline_cache_saves", s.pipeline_cache_saves}};
    return make_ok(env, json_to_term(env, json));
  });
}

// stream_stats(index) -> {:ok, %{submits, commands, barriers, waits}}: waits counts the host
// waits for results (downloads that found their data not ready yet).
ERL_NIF_TERM stream_stats_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    nxv::StreamStatistics s = device_at(get_int64(env, argv[0], "device"))->stream_stats();
    nlohmann::json json = {{"submits", s.submits}, {"commands", s.commands}, {"barriers", s.barriers}, {"waits", s.waits}};
    return make_ok(env, json_to_term(env, json));
  });
}

// kernel_profile(index) -> {:ok, [{label, count, total_us}]}: GPU time per kernel since the
// last call, largest first (NX_VULKAN_PROFILE=1 when the device opened; else []). Waits for
// the work recorded until now.
ERL_NIF_TERM kernel_profile_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    std::vector<ERL_NIF_TERM> rows;
    for (const auto& t : device_at(get_int64(env, argv[0], "device"))->kernel_profile())
      rows.push_back(enif_make_tuple3(env, make_binary(env, t.kernel), enif_make_uint64(env, t.count),
                                      enif_make_double(env, t.total_ns / 1000.0)));
    return make_ok(env, enif_make_list_from_array(env, rows.data(), unsigned(rows.size())));
  });
}

// save_pipeline_cache(index) -> :ok: writes the device's pipeline cache if it has new
// pipelines; a device never opened has nothing to save (and is not opened).
ERL_NIF_TERM save_pipeline_cache_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    if (auto device = device_if_open(get_int64(env, argv[0], "device"))) device->save_pipeline_cache();
    return atoms.ok;
  });
}

// fail_submission(index, n, lose_device) -> :ok: fault injection for tests (the n-th
// submission from now fails as a driver failure would; with lose_device, as a lost device).
ERL_NIF_TERM fail_submission_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    int64_t n = get_int64(env, argv[1], "n");
    if (n < 0) throw nxv::Error(nxv::ErrorKind::InvalidArgument, "fail_submission: n must be >= 0");
    bool lose = enif_is_identical(argv[2], atoms.true_);
    device_at(get_int64(env, argv[0], "device"))->fail_submission(uint64_t(n), lose);
    return atoms.ok;
  });
}

// reopen_device(index) -> :ok: a new logical device replaces the one at `index` (after loss).
ERL_NIF_TERM reopen_device_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    reopen_device(get_int64(env, argv[0], "device"));
    return atoms.ok;
  });
}

// synchronize(index) -> :ok: waits for all work recorded so far on the device.
ERL_NIF_TERM synchronize_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    device_at(get_int64(env, argv[0], "device"))->synchronize();
    return atoms.ok;
  });
}

}  // namespace nxv_nif

namespace nxv_nif {

// validation() -> {:ok, %{enabled: bool, count: n, messages: [binary]}}
ERL_NIF_TERM validation_nif(ErlNifEnv* env, int, const ERL_NIF_TERM[]) {
  return guard(env, [&] {
    nlohmann::json json = {{"enabled", nxv::validation_enabled()},
                           {"count", nxv::validation_message_count()},
                           {"messages", nxv::validation_messages()}};
    return make_ok(env, json_to_term(env, json));
  });
}

// clear_validation_messages() -> :ok
ERL_NIF_TERM clear_validation_nif(ErlNifEnv* env, int, const ERL_NIF_TERM[]) {
  return guard(env, [&] {
    nxv::clear_validation_messages();
    return atoms.ok;
  });
}

}  // namespace nxv_nif
