// The NIF registry: the function table and load hooks for Elixir.Nx.Vulkan.NIF.
// Calls that may block (wait for the GPU, open a device, compile a kernel, move large data)
// run on dirty schedulers; `op` records on a normal one and moves to a dirty one only when it
// would have to compile or open a device.
#include <erl_nif.h>

#include "crash_trace.hpp"
#include "nifs.hpp"
#include "tensor_resource.hpp"
#include "terms.hpp"

namespace {

int load(ErlNifEnv* env, void**, ERL_NIF_TERM) {
  nxv_nif::install_crash_trace_if_asked();
  nxv_nif::make_atoms(env);
  return nxv_nif::open_tensor_resource_type(env) && nxv_nif::open_program_resource_type(env) &&
                 nxv_nif::open_prepared_resource_type(env)
             ? 0
             : 1;
}

int upgrade(ErlNifEnv* env, void**, void**, ERL_NIF_TERM) {
  nxv_nif::make_atoms(env);
  return nxv_nif::open_tensor_resource_type(env) && nxv_nif::open_program_resource_type(env) &&
                 nxv_nif::open_prepared_resource_type(env)
             ? 0
             : 1;
}

constexpr int kIO = ERL_NIF_DIRTY_JOB_IO_BOUND;
constexpr int kCPU = ERL_NIF_DIRTY_JOB_CPU_BOUND;

ErlNifFunc nif_functions[] = {
    {"from_binary", 4, nxv_nif::from_binary_nif, kCPU},
    {"to_binary", 2, nxv_nif::to_binary_nif, 0},
    {"deallocate", 1, nxv_nif::deallocate_nif, 0},
    {"deallocated?", 1, nxv_nif::deallocated_nif, 0},
    {"copy", 2, nxv_nif::copy_nif, kIO},
    {"op", 6, nxv_nif::op_nif, 0},
    {"op_table", 0, nxv_nif::op_table_nif, 0},
    {"check_op", 6, nxv_nif::check_op_nif, kIO},
    {"program_compile", 5, nxv_nif::program_compile_nif, kCPU},
    {"program_compile_loop", 8, nxv_nif::program_compile_loop_nif, kCPU},
    {"program_run", 2, nxv_nif::program_run_nif, 0},
    {"program_run", 3, nxv_nif::program_run_nif, 0},
    {"program_gateable", 1, nxv_nif::program_gateable_nif, 0},
    {"devices", 0, nxv_nif::devices_nif, kIO},
    {"default_device", 0, nxv_nif::default_device_nif, kIO},
    {"device_info", 1, nxv_nif::device_info_nif, kIO},
    {"memory_statistics", 1, nxv_nif::memory_statistics_nif, kIO},
    {"reset_peak_memory", 1, nxv_nif::reset_peak_memory_nif, kIO},
    {"set_memory_limit", 2, nxv_nif::set_memory_limit_nif, kIO},
    {"clear_buffer_cache", 1, nxv_nif::clear_buffer_cache_nif, kIO},
    {"kernel_cache_stats", 1, nxv_nif::kernel_cache_stats_nif, kIO},
    {"stream_stats", 1, nxv_nif::stream_stats_nif, kIO},
    {"kernel_profile", 1, nxv_nif::kernel_profile_nif, kIO},
    {"save_pipeline_cache", 1, nxv_nif::save_pipeline_cache_nif, kIO},
    {"fail_submission", 3, nxv_nif::fail_submission_nif, kIO},
    {"reopen_device", 1, nxv_nif::reopen_device_nif, kIO},
    {"synchronize", 1, nxv_nif::synchronize_nif, kIO},
    {"validation", 0, nxv_nif::validation_nif, 0},
    {"clear_validation_messages", 0, nxv_nif::clear_validation_nif, 0},
};

}  // namespace

ERL_NIF_INIT(Elixir.Nx.Vulkan.NIF, nif_functions, load, nullptr, upgrade, nullptr)
